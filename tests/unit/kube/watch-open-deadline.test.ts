import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchError, WatchTarget } from '@/lib/engine/informer-source';
import { Discovery, KubeClient, Reflector, type ClientOptions, type ReflectorOptions } from '@/lib/kube';
import { CONFIGMAP, FakeApiServer } from './fake-apiserver';
import { Recorder, until } from './helpers';
import { StallingProxy } from './stalling-proxy';

// The reflector reaches the fake API server through a loopback proxy that
// accepts some requests and never answers them.

const CM: WatchTarget = { group: '', kind: 'ConfigMap' };

let server: FakeApiServer;
let proxy: StallingProxy | undefined;
const running: Reflector[] = [];

beforeEach(async () => {
  server = await FakeApiServer.start();
  server.create(CONFIGMAP, 'settings', { namespace: 'shop' });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await proxy?.stop();
  proxy = undefined;
  await server.stop();
});

async function startBehindProxy(
  stall: (requestLine: string) => boolean,
  clientOpts: ClientOptions,
  opts: Partial<ReflectorOptions> = {},
) {
  proxy = await StallingProxy.start(server.url, stall);
  const cfg = server.kubeconfig() as { clusters: { cluster: { server: string } }[] };
  cfg.clusters[0]!.cluster.server = proxy.url;
  const client = KubeClient.fromKubeconfig(cfg, clientOpts);
  const rec = new Recorder();
  // The phase as each error is reported: polled later, a short backoff may already have ended.
  const phaseAtError: string[] = [];
  const r: Reflector = new Reflector({
    target: CM,
    client,
    discovery: new Discovery(client),
    onEvent: (e) => {
      if (e.type === 'error') phaseAtError.push(r.status().phase);
      rec.handler(e);
    },
    backoff: { initialMs: 50, maxMs: 100 },
    ...opts,
  });
  running.push(r);
  r.start();
  return { r, rec, proxy, phaseAtError };
}

const errorsOf = (rec: Recorder): WatchError[] => rec.events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
const isWatch = (line: string) => line.includes('watch=true');
const isList = (line: string) => line.includes('/configmaps') && !isWatch(line);

describe('a watch whose open is never answered', () => {
  it('fails after watchOpenTimeoutMs with a retryable error, closes the connection, and retries with backoff', async () => {
    let stalling = true;
    const { r, rec, proxy, phaseAtError } = await startBehindProxy((line) => stalling && isWatch(line), {
      watchOpenTimeoutMs: 300,
    });
    await until(() => rec.count('error') >= 1, 'an error from the stalled watch', 10_000);
    const [first] = errorsOf(rec);
    expect(first).toMatchObject({ reason: 'Unreachable' });
    expect(first!.message).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/configmaps: no response headers within 300 ms .*; retrying in \d+ ms$/,
    );
    // The deadline, not something earlier, ended it.
    expect(first!.at - r.status().startedAt).toBeGreaterThanOrEqual(300);
    expect(r.status()).toMatchObject({ primed: false, lastError: { reason: 'Unreachable' } });
    expect(phaseAtError[0]).toBe('Backoff');
    expect(proxy.stalled[0]).toMatch(/sendInitialEvents=true/);
    // The timed-out connection is closed rather than left half-open, and the watch is tried again.
    await until(
      () => proxy.closedByClient >= 1 && proxy.stalled.length >= 2,
      'a closed connection and a retry',
      10_000,
    );

    stalling = false;
    await until(() => r.isPrimed(), 'primed once the server answers', 10_000);
    expect(rec.has('added shop/settings')).toBe(true);
    // The failure ends once the watch has stayed up for its healthy period.
    await until(() => r.status().lastError === undefined, 'recovered after the healthy period', 10_000);
    expect(rec.count('recovered')).toBeGreaterThanOrEqual(1);
  });

  it('keeps a watch that opened in time, however long it then stays silent', async () => {
    const { r, proxy } = await startBehindProxy(
      () => false,
      { watchOpenTimeoutMs: 200 },
      { inactivityTimeoutMs: 60_000 },
    );
    await until(() => r.status().phase === 'Watching', 'watching', 10_000);
    const opened = r.status().watchesOpened;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(r.status()).toMatchObject({ phase: 'Watching', watchesOpened: opened });
    expect(r.status().lastError).toBeUndefined();
    expect(proxy.stalled).toEqual([]);
    server.create(CONFIGMAP, 'later', { namespace: 'shop' });
    await until(() => r.store.size === 2, 'the event after the silence', 10_000);
  });

  it('stops at once while the open is stalled', async () => {
    const { r, proxy } = await startBehindProxy(isWatch, { watchOpenTimeoutMs: 60_000 });
    await until(() => proxy.stalled.length === 1, 'a stalled watch', 10_000);
    await r.stop();
    expect(r.status().phase).toBe('Stopped');
    await until(() => proxy.closedByClient === 1, 'the stalled connection closed by stop', 10_000);
  });
});

describe('a list that is never answered', () => {
  it('fails after requestTimeoutMs with a retryable error, and retries', async () => {
    const { r, rec, proxy, phaseAtError } = await startBehindProxy(
      isList,
      { requestTimeoutMs: 300 },
      { watchList: false },
    );
    await until(() => rec.count('error') >= 1, 'an error from the stalled list', 10_000);
    const [first] = errorsOf(rec);
    expect(first).toMatchObject({ reason: 'Unreachable' });
    expect(first!.message).toMatch(/\/api\/v1\/configmaps: no answer within 300 ms; retrying in \d+ ms$/);
    expect(r.status()).toMatchObject({ primed: false, lastError: { reason: 'Unreachable' } });
    expect(phaseAtError[0]).toBe('Backoff');
    await until(() => proxy.stalled.length >= 2, 'the list tried again', 10_000);
  });
});

describe('client options', () => {
  it('names watchOpenTimeoutMs and requestTimeoutMs when they are not positive numbers', () => {
    const cfg = {
      clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1' } }],
      contexts: [{ name: 'x', context: { cluster: 'c' } }],
      'current-context': 'x',
    };
    expect(() => KubeClient.fromKubeconfig(cfg, { watchOpenTimeoutMs: 0 })).toThrow(
      /watchOpenTimeoutMs must be a number of milliseconds above 0, got 0 \(example: watchOpenTimeoutMs: 30000\)/,
    );
    expect(() => KubeClient.fromKubeconfig(cfg, { requestTimeoutMs: Number.NaN })).toThrow(
      /requestTimeoutMs must be a number of milliseconds above 0, got NaN/,
    );
  });
});
