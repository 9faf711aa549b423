import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaderElectionRecord } from '@/lib/engine';
import {
  KubeClient,
  KubeRequestError,
  LeaseLock,
  formatMicroTime,
  parseMicroTime,
  type LeaseTransport,
} from '@/lib/kube';
import { startEmbeddedServer, type EmbeddedServer } from '@/lib/embedded';
import { LogCapture, until } from './helpers';

let server: EmbeddedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const record = (holder: string, at: number, transitions = 0): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaseTransitions: transitions,
});

describe('LeaseLock', () => {
  it('writes MicroTime with six fractional digits and reads it back', () => {
    expect(formatMicroTime(Date.UTC(2026, 10, 23, 13, 0, 0, 123))).toBe('2026-11-23T13:00:00.123000Z');
    expect(parseMicroTime('2026-11-23T13:00:00.123456Z')).toBe(Date.UTC(2026, 10, 23, 13, 0, 0, 123));
    expect(parseMicroTime(undefined)).toBe(0);
  });

  it('creates, reads and updates a Lease, and a write on a stale version fails with 409', async () => {
    server = await startEmbeddedServer({
      objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } }],
    });
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    const a = new LeaseLock(client, 'ops', 'controller');
    const b = new LeaseLock(client, 'ops', 'controller');
    const signal = new AbortController().signal;
    expect(await a.get(signal)).toBeUndefined();
    const t0 = Date.UTC(2026, 10, 23, 13, 0, 0, 0);
    await a.create(record('a', t0), signal);
    const seen = await b.get(signal);
    expect(seen?.record).toEqual(record('a', t0));
    const lease = (await client.request('GET', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/controller')) as {
      spec: Record<string, unknown>;
    };
    expect(lease.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-23T13:00:00.000000Z',
      renewTime: '2026-11-23T13:00:00.000000Z',
      leaseTransitions: 0,
    });

    await a.update({ ...record('a', t0), renewTime: t0 + 2_000 }, signal);
    const lost = await b.update(record('b', t0 + 2_500, 1), signal).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(KubeRequestError);
    expect((lost as KubeRequestError).status).toBe(409);
    expect((await b.get(signal))?.record.renewTime).toBe(t0 + 2_000);
    client.close();
  });

  it('watch reports each write, a release included', async () => {
    server = await startEmbeddedServer({
      objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } }],
    });
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    const lock = new LeaseLock(client, 'ops', 'controller');
    const stop = new AbortController();
    await lock.create(record('a', Date.now()), stop.signal);
    const holders: (string | undefined)[] = [];
    const watching = lock.watch((read) => holders.push(read?.record.holderIdentity), stop.signal);
    await expect.poll(() => holders).toEqual(['a']);
    await lock.update({ ...record('', Date.now()), leaseDurationSeconds: 1 }, stop.signal);
    await expect.poll(() => holders).toEqual(['a', '']);
    await client.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/controller');
    await expect.poll(() => holders).toEqual(['a', '', undefined]);
    stop.abort();
    await watching;
    client.close();
  });
});

/** A transport whose watches answer with what next() says: an error to throw, or the lines of a stream. */
function scriptedTransport(next: (attempt: number) => Error | string[]): LeaseTransport & { opened: number[] } {
  const opened: number[] = [];
  return {
    opened,
    request: async () => undefined,
    openStream: async () => {
      opened.push(Date.now());
      const answer = next(opened.length);
      if (answer instanceof Error) throw answer;
      return {
        lines: async function* () {
          yield* answer;
        },
      };
    },
  };
}

const forbidden = () =>
  new KubeRequestError(403, 'leases.coordination.k8s.io is forbidden: cannot watch resource "leases"', {
    url: '/apis/coordination.k8s.io/v1/namespaces/ops/leases',
    reason: 'Forbidden',
  });
const leaseEvent = (type: string, holder: string) =>
  JSON.stringify({
    type,
    object: { metadata: { name: 'controller', namespace: 'ops' }, spec: { holderIdentity: holder } },
  });

describe('LeaseLock watch when the watch is unavailable', () => {
  it('backs off a forbidden watch, says so once, and leaves no listener behind per retry', async () => {
    const client = scriptedTransport(() => forbidden());
    const log = new LogCapture();
    const lock = new LeaseLock(client, 'ops', 'controller', {
      logger: log,
      watchBackoff: { initialMs: 10, random: () => 0 },
      forbiddenWatchRetryMs: 160,
    });
    const stop = new AbortController();
    const watching = lock.watch(() => {}, stop.signal);
    await until(() => (lock.watchUnavailable()?.failures ?? 0) >= 7, 'seven failed attempts');
    // Timers may fire up to a millisecond early by Date.now's whole milliseconds.
    const gaps = client.opened.slice(1).map((t, i) => t - client.opened[i]!);
    // 10, 20, 40, 80, 160, 160 ms: a retry every second for ever would fail the later ones.
    [10, 20, 40, 80, 160, 160].forEach((ms, i) =>
      expect(gaps[i], `wait before attempt ${i + 2}`).toBeGreaterThanOrEqual(ms - 1),
    );
    // At most the one wait in progress listens for stop: each wait removes its listener when it ends.
    expect(getEventListeners(stop.signal, 'abort').length).toBeLessThanOrEqual(1);
    expect(log.text).toEqual([
      'info cannot watch Lease ops/controller (403): standbys see a renewal or release at their next retry instead of at once; grant the rule {verbs: [watch], apiGroups: ["coordination.k8s.io"], resources: [leases]} in namespace ops to see them at once',
    ]);
    expect(log.lines[0]!.fields).toEqual({ event: 'lease_watch_unavailable', lease: 'ops/controller', status: 403 });
    expect(lock.watchUnavailable()).toMatchObject({ status: 403, failures: expect.any(Number) });
    expect(lock.watchUnavailable()!.failures).toBeGreaterThanOrEqual(7);
    stop.abort();
    await watching;
    expect(getEventListeners(stop.signal, 'abort')).toEqual([]);
  });

  it('notes a failing watch once, and once more when it works again, passing on what it then sees', async () => {
    const client = scriptedTransport((n) =>
      n <= 3
        ? new KubeRequestError(0, 'cannot reach the API server (ECONNREFUSED)', { url: '' })
        : [leaseEvent('ADDED', 'a')],
    );
    const log = new LogCapture();
    const lock = new LeaseLock(client, 'ops', 'controller', { logger: log, watchBackoff: { initialMs: 10 } });
    const holders: (string | undefined)[] = [];
    const stop = new AbortController();
    const watching = lock.watch((read) => holders.push(read?.record.holderIdentity), stop.signal);
    await until(() => holders.length >= 1, 'the Lease seen');
    expect(holders[0]).toBe('a');
    expect(log.text).toEqual([
      'warn watch of Lease ops/controller failed: cannot reach the API server (ECONNREFUSED); standbys rely on their retries meanwhile, and the watch is retried with backoff',
      'info watching Lease ops/controller again after 3 failed attempts',
    ]);
    expect(lock.watchUnavailable()).toBeUndefined();
    stop.abort();
    await watching;
  });

  it('takes an in-stream ERROR as a failure, not as the end of a healthy watch', async () => {
    const client = scriptedTransport(() => [
      JSON.stringify({ type: 'ERROR', object: { code: 500, message: 'etcd timeout' } }),
    ]);
    const log = new LogCapture();
    const lock = new LeaseLock(client, 'ops', 'controller', {
      logger: log,
      watchBackoff: { initialMs: 10, maxMs: 80, random: () => 0 },
    });
    const stop = new AbortController();
    const watching = lock.watch(() => {}, stop.signal);
    await until(() => client.opened.length >= 5, 'five attempts');
    const gaps = client.opened.slice(1).map((t, i) => t - client.opened[i]!);
    [10, 20, 40, 80].forEach((ms, i) => expect(gaps[i]).toBeGreaterThanOrEqual(ms - 1));
    expect(log.text).toEqual([
      'warn watch of Lease ops/controller failed: watch of Lease ops/controller: 500 etcd timeout; standbys rely on their retries meanwhile, and the watch is retried with backoff',
    ]);
    stop.abort();
    await watching;
  });

  it('stops at once while backing off', async () => {
    const client = scriptedTransport(() => forbidden());
    const lock = new LeaseLock(client, 'ops', 'controller', { logger: new LogCapture() });
    const stop = new AbortController();
    const watching = lock.watch(() => {}, stop.signal);
    await until(() => client.opened.length === 1, 'the first attempt');
    const t0 = Date.now();
    stop.abort();
    await watching;
    expect(Date.now() - t0).toBeLessThan(500);
    expect(client.opened).toHaveLength(1);
    expect(getEventListeners(stop.signal, 'abort')).toEqual([]);
  });
});
