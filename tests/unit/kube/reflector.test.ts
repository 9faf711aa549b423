import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchTarget } from '@/lib/engine/informer-source';
import { Discovery, KubeClient, Reflector, stripManagedFields, type ReflectorOptions } from '@/lib/kube';
import { CONFIGMAP, DATABASE, FakeApiServer, WIDGET } from './fake-apiserver';
import { Recorder, attachments, until } from './helpers';

const DB: WatchTarget = { group: 'demo.refwatch.dev', kind: 'Database' };
const SHOP_DB: WatchTarget = { ...DB, namespace: 'shop' };

let server: FakeApiServer;
const running: Reflector[] = [];

beforeEach(async () => {
  server = await FakeApiServer.start();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await server.stop();
});

function start(target: WatchTarget, opts: Partial<ReflectorOptions> = {}) {
  const client = KubeClient.fromKubeconfig(server.kubeconfig());
  const rec = new Recorder();
  const r = new Reflector({
    target,
    client,
    discovery: new Discovery(client),
    onEvent: rec.handler,
    backoff: { initialMs: 10, maxMs: 40 },
    ...opts,
  });
  running.push(r);
  r.start();
  return { r, rec };
}

const watchRequests = () => server.requests.filter((q) => q.query.get('watch') === 'true');
const listRequests = () =>
  server.requests.filter((q) => q.path.endsWith('/databases') && q.query.get('watch') === null);

describe('Reflector: list then watch', () => {
  it('lists in pages of 500 and primes once with every object', async () => {
    for (let i = 0; i < 1203; i++) server.create(DATABASE, `db-${i}`, { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB, { watchList: false });
    await until(() => r.isPrimed() && r.status().phase === 'Watching', 'primed and watching');
    expect(rec.count('added')).toBe(1203);
    expect(rec.log.at(-1)).toBe('primed');
    const pages = listRequests();
    expect(pages.map((p) => [p.query.get('limit'), p.query.get('continue')])).toEqual([
      ['500', null],
      ['500', '500'],
      ['500', '1000'],
    ]);
    const first = rec.events[0]!;
    expect(first).toMatchObject({
      type: 'added',
      key: 'Database.demo.refwatch.dev/shop/db-0',
      object: { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'Database' },
    });
    expect(r.status()).toMatchObject({
      phase: 'Watching',
      primed: true,
      objects: 1203,
      lists: 1,
      syncMode: 'ListWatch',
      resourceVersion: String(server.rv),
    });
  });

  it('lists again from the start when the continue token expires', async () => {
    for (let i = 0; i < 1100; i++) server.create(DATABASE, `db-${i}`, { namespace: 'shop' });
    server.expireContinueToken();
    const { r, rec } = start(SHOP_DB, { watchList: false });
    await until(() => r.isPrimed(), 'primed');
    expect(rec.count('added')).toBe(1100);
    expect(listRequests().filter((p) => p.query.get('continue') === null)).toHaveLength(2);
    expect(rec.count('error')).toBe(0);
  });

  it('primes on an empty resource', async () => {
    const { r, rec } = start(SHOP_DB, { watchList: false });
    await until(() => r.isPrimed(), 'primed');
    expect(rec.log).toEqual(['primed']);
  });

  it('reports create, update, delete and a recreation with a new UID', async () => {
    const { r, rec } = start(SHOP_DB, { watchList: false });
    await until(() => r.status().phase === 'Watching' && server.openWatches() === 1, 'watching');
    server.create(DATABASE, 'orders', { namespace: 'shop' });
    server.update(DATABASE, 'orders', 'shop', (o) => void (o.spec = { size: 2 }));
    server.delete(DATABASE, 'orders', 'shop');
    server.create(DATABASE, 'orders', { namespace: 'shop' });
    await until(() => rec.events.length >= 5, 'five events');
    expect(rec.log).toEqual([
      'primed',
      'added shop/orders',
      'updated shop/orders',
      'deleted shop/orders',
      'added shop/orders',
    ]);
    const adds = rec.events.filter((e) => e.type === 'added');
    expect(adds[0]!.object.metadata.uid).not.toBe(adds[1]!.object.metadata.uid);
  });

  it('keeps objects as raw JSON and applies the transform', async () => {
    server.create(DATABASE, 'orders', { namespace: 'shop', spec: { engine: 'postgres', extra: { x: [1, 2] } } });
    const { r } = start(SHOP_DB, { transform: stripManagedFields });
    await until(() => r.isPrimed(), 'primed');
    const o = r.store.get('Database.demo.refwatch.dev/shop/orders')!;
    expect(o.spec).toEqual({ engine: 'postgres', extra: { x: [1, 2] } });
    expect(o.metadata.managedFields).toEqual([{ manager: 'test' }]);
  });

  it('stripManagedFields keeps only the last manager of managedFields, in place, and copies metadata only to drop the field', () => {
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'shop',
        managedFields: [
          { manager: 'helm', operation: 'Update', time: '2026-01-01T10:00:00Z', fieldsV1: { 'f:data': {} } },
          { manager: 'kubectl', operation: 'Apply', time: '2026-01-01T11:00:00Z', fieldsV1: { 'f:data': {} } },
          { manager: 'kube-controller-manager', operation: 'Update', time: '2026-01-01T09:00:00Z' },
        ],
        resourceVersion: '5',
      },
    };
    const metadata = obj.metadata;
    const out = stripManagedFields(obj);
    // The parsed object itself, its fields in their order: nothing copied, nothing deleted.
    expect(out.metadata).toBe(metadata);
    expect(Object.keys(out.metadata)).toEqual(['name', 'namespace', 'managedFields', 'resourceVersion']);
    expect(out.metadata).toEqual({
      name: 'c',
      namespace: 'shop',
      resourceVersion: '5',
      managedFields: [{ manager: 'kubectl' }],
    });
    // No named entry: nothing to keep, so the field goes, by a copy (a delete would make a hash table).
    const unnamed = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'u', managedFields: [{ time: 'x' }] } };
    const before = unnamed.metadata;
    expect(stripManagedFields(unnamed).metadata).toEqual({ name: 'u' });
    expect(unnamed.metadata).not.toBe(before);
    const bare = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    expect(stripManagedFields(bare).metadata).toBe(bare.metadata);
  });

  it('watches from the resourceVersion of the last bookmark after the server closes the watch, without repeating adds', async () => {
    server.create(DATABASE, 'a', { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB, { watchList: false });
    await until(() => server.openWatches() === 1, 'watching');
    server.create(CONFIGMAP, 'unrelated', { namespace: 'shop' }); // moves the server's resourceVersion on
    server.bookmark();
    await until(() => r.status().resourceVersion === String(server.rv), 'bookmark RV');
    server.closeWatches();
    await until(() => r.status().watchesOpened === 2 && server.openWatches() === 1, 'second watch');
    expect(watchRequests().at(-1)!.query.get('resourceVersion')).toBe(String(server.rv));
    server.create(DATABASE, 'b', { namespace: 'shop' });
    await until(() => rec.has('added shop/b'), 'b added');
    expect(rec.log).toEqual(['added shop/a', 'primed', 'added shop/b']);
    expect(r.status().lists).toBe(1);
  });

  for (const expiredAs of ['http', 'event'] as const) {
    it(`relists on 410 (${expiredAs}) and reports what it missed as synthetic deletes`, async () => {
      server.expiredAs = expiredAs;
      for (const n of ['a', 'b', 'c']) server.create(DATABASE, n, { namespace: 'shop' });
      const { r, rec } = start(SHOP_DB, { watchList: false });
      await until(() => server.openWatches() === 1, 'watching');
      const uidC = r.store.get('Database.demo.refwatch.dev/shop/c')!.metadata.uid;
      rec.clear();
      // All in one tick: no watch sees these changes, and compaction hides them from the next one.
      server.closeWatches();
      server.delete(DATABASE, 'b', 'shop');
      server.delete(DATABASE, 'c', 'shop');
      server.create(DATABASE, 'c', { namespace: 'shop' });
      server.create(DATABASE, 'd', { namespace: 'shop' });
      server.compact();
      await until(() => r.status().lists === 2 && rec.events.length >= 4, 'relist');
      expect(rec.log).toEqual(['deleted shop/b', 'deleted shop/c', 'added shop/c', 'added shop/d']);
      expect(rec.events[1]!.type === 'deleted' && rec.events[1]!.object.metadata.uid).toBe(uidC);
      expect([...r.store.keys()].sort()).toEqual(['a', 'c', 'd'].map((n) => `Database.demo.refwatch.dev/shop/${n}`));
      expect(rec.count('error')).toBe(0);
    });
  }

  it('sees objects enter and leave a label selector', async () => {
    server.create(DATABASE, 'a', { namespace: 'shop', labels: { tier: 'gold' } });
    server.create(DATABASE, 'b', { namespace: 'shop', labels: { tier: 'bronze' } });
    const { r, rec } = start({ ...SHOP_DB, labelSelector: 'tier=gold' }, { watchList: false });
    await until(() => server.openWatches() === 1, 'watching');
    expect(listRequests()[0]!.query.get('labelSelector')).toBe('tier=gold');
    server.update(DATABASE, 'b', 'shop', (o) => void (o.metadata.labels = { tier: 'gold' }));
    server.update(DATABASE, 'a', 'shop', (o) => void (o.metadata.labels = { tier: 'bronze' }));
    await until(() => rec.events.length >= 4, 'enter and leave');
    expect(rec.log).toEqual(['added shop/a', 'primed', 'added shop/b', 'deleted shop/a']);
    expect([...r.store.keys()]).toEqual(['Database.demo.refwatch.dev/shop/b']);
  });

  it('watches cluster-scoped kinds and all namespaces', async () => {
    server.create(WIDGET, 'w1');
    server.create(DATABASE, 'a', { namespace: 'shop' });
    server.create(DATABASE, 'b', { namespace: 'billing' });
    const widgets = start({ group: 'demo.refwatch.dev', kind: 'Widget' });
    const all = start(DB);
    await until(() => widgets.r.isPrimed() && all.r.isPrimed(), 'both primed');
    expect([...widgets.r.store.keys()]).toEqual(['Widget.demo.refwatch.dev//w1']);
    expect([...all.r.store.keys()].sort()).toEqual([
      'Database.demo.refwatch.dev/billing/b',
      'Database.demo.refwatch.dev/shop/a',
    ]);
    expect(
      watchRequests()
        .map((q) => q.path)
        .sort(),
    ).toEqual(['/apis/demo.refwatch.dev/v1alpha1/databases', '/apis/demo.refwatch.dev/v1alpha1/widgets']);
  });
});

describe('Reflector: failures', () => {
  it('backs off on 429, honouring Retry-After, then recovers', async () => {
    server.failNext(1, 429, { headers: { 'Retry-After': '1' } });
    const { r, rec } = start(SHOP_DB, { healthyAfterMs: 100 });
    await until(() => rec.has('recovered'), 'recovered', 5000);
    expect(rec.log).toEqual(['error Throttled', 'primed', 'recovered']);
    const err = rec.events.filter((x) => x.type === 'error')[0]?.error;
    expect(err!.retryAt! - err!.at).toBeGreaterThanOrEqual(1000);
    expect(r.status().lastError).toBeUndefined();
  });

  it('retries 5xx for ever with growing delays, as one failure told once', async () => {
    server.failNext(4, 503);
    const retries: number[] = [];
    const { rec } = start(SHOP_DB, {
      healthyAfterMs: 100,
      random: () => 0,
      onLifecycle: (e) => void (e.type === 'ended' && e.retryInMs !== undefined && retries.push(e.retryInMs)),
    });
    await until(() => rec.has('recovered'), 'recovered');
    expect(retries).toEqual([10, 20, 40, 40]);
    expect(rec.log).toEqual(['error ServerError', 'primed', 'recovered']);
  });

  it('names the missing RBAC rule on 403, retries slowly, and recovers once granted', async () => {
    server.failNext(1, 403);
    const { r, rec } = start(SHOP_DB, { forbiddenRetryMs: 300 });
    await until(() => rec.count('error') === 1, 'forbidden');
    const e = rec.events.filter((x) => x.type === 'error')[0]?.error;
    expect(e).toMatchObject({
      reason: 'Forbidden',
      missingRule: {
        verbs: ['list', 'watch'],
        apiGroup: 'demo.refwatch.dev',
        resource: 'databases',
        namespace: 'shop',
      },
    });
    expect(e!.message).toContain(
      '{verbs: [list, watch], apiGroups: ["demo.refwatch.dev"], resources: [databases]} in namespace shop',
    );
    expect(e!.retryAt! - e!.at).toBeGreaterThanOrEqual(300);
    expect(r.status()).toMatchObject({ phase: 'Backoff', lastError: { reason: 'Forbidden' } });
    await until(() => r.isPrimed(), 'primed');
    expect(rec.log).toEqual(['error Forbidden', 'recovered', 'primed']);
  });

  it('retries 403 after 1 s, doubling up to forbiddenRetryMs, so a role restored soon is picked up soon', async () => {
    server.failNext(2, 403);
    const { r, rec } = start(SHOP_DB, { forbiddenRetryMs: 30_000, random: () => 0 });
    await until(() => r.isPrimed(), 'primed', 10_000);
    const delays = rec.events.flatMap((x) => (x.type === 'error' ? [x.error.retryAt! - x.error.at] : []));
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(1_000);
    expect(delays[0]).toBeLessThan(1_100);
    expect(delays[1]).toBeGreaterThanOrEqual(2_000);
    expect(delays[1]).toBeLessThan(2_100);
    expect(rec.log).toEqual(['error Forbidden', 'error Forbidden', 'recovered', 'primed']);
  });

  it('backs a 403 off up to 5 minutes by default, and recheckForbidden retries it at once', async () => {
    server.failNext(11, 403);
    const { r, rec } = start(SHOP_DB, { random: () => 0 });
    const delays: number[] = [];
    for (let n = 1; n <= 11; n++) {
      await until(() => rec.count('error') === n, `403 number ${n}`);
      const e = rec.events.filter((x) => x.type === 'error')[n - 1]!;
      if (e.type === 'error') delays.push(e.error.retryAt! - e.error.at);
      r.recheckForbidden();
    }
    await until(() => r.isPrimed(), 'primed after the last recheck');
    const seconds = delays.map((d) => Math.round(d / 1000));
    expect(seconds).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    expect(rec.log.slice(-2)).toEqual(['recovered', 'primed']);
  });

  it('recheckForbidden leaves a watch alone unless it waits on a 403', async () => {
    server.failNext(1, 500);
    const { r, rec } = start(SHOP_DB, { backoff: { initialMs: 400, maxMs: 400, jitter: 0 } });
    await until(() => rec.count('error') === 1, 'a 500');
    const before = server.requests.length;
    r.recheckForbidden();
    await new Promise((res) => setTimeout(res, 100));
    expect(server.requests.length).toBe(before);
    await until(() => r.isPrimed(), 'primed after the 500 backoff');
  });

  it('stops at once while it waits 5 minutes after a 403', async () => {
    server.failNext(1, 403);
    const { r, rec } = start(SHOP_DB);
    await until(() => rec.count('error') === 1, 'forbidden');
    const t0 = Date.now();
    await r.stop();
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(r.status().phase).toBe('Stopped');
  });

  it('reports 403 on the watch after a successful list', async () => {
    server.failNext(1, 403, { match: (_m, u) => u.searchParams.get('watch') === 'true' });
    const { rec } = start(DB, { watchList: false, forbiddenRetryMs: 50 });
    await until(() => rec.has('recovered'), 'recovered');
    expect(rec.log.slice(0, 3)).toEqual(['primed', 'error Forbidden', 'recovered']);
    const e = rec.events.filter((x) => x.type === 'error')[0]?.error;
    expect(e!.missingRule).toEqual({ verbs: ['list', 'watch'], apiGroup: 'demo.refwatch.dev', resource: 'databases' });
    expect(e!.message).toContain('cluster-wide');
  });

  it('waits for a CRD installed after the watch started', async () => {
    const CACHE = {
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      kind: 'Cache',
      resource: 'caches',
      namespaced: true,
    };
    const { r, rec } = start({ group: 'demo.refwatch.dev', kind: 'Cache' });
    await until(() => rec.count('error') >= 1, 'KindUnknown');
    expect(rec.events[0]).toMatchObject({
      type: 'error',
      error: {
        reason: 'KindUnknown',
        message: expect.stringContaining('no resource serves kind Cache.demo.refwatch.dev'),
      },
    });
    server.addKind(CACHE);
    server.create(CACHE, 'hot', { namespace: 'shop' });
    await until(() => r.isPrimed(), 'primed');
    expect(rec.log.slice(-3)).toEqual(['recovered', 'added shop/hot', 'primed']);
  });

  it('reports KindUnknown once the CRD is deleted under a running watch', async () => {
    const { r, rec } = start(DB, { watchList: false });
    await until(() => server.openWatches() === 1, 'watching');
    server.removeKind(DATABASE);
    server.closeWatches();
    await until(() => rec.has('error KindUnknown'), 'KindUnknown');
    expect(r.status().phase).toBe('Backoff');
  });

  it('restarts a silent watch, and does not churn while bookmarks arrive', async () => {
    const silent = start(SHOP_DB, { inactivityTimeoutMs: 100 });
    await until(() => silent.r.status().watchesOpened >= 3, 'restarts');
    expect(silent.rec.count('error')).toBe(0);
    await silent.r.stop();

    const quiet = start(DB, { inactivityTimeoutMs: 300 });
    await until(() => quiet.r.status().watchesOpened === 1, 'watching');
    const opened = quiet.r.status().watchesOpened;
    for (let i = 0; i < 10; i++) {
      server.create(CONFIGMAP, `tick-${i}`, { namespace: 'x' });
      server.bookmark();
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(quiet.r.status().watchesOpened).toBe(opened);
    expect(quiet.r.status().resourceVersion).toBe(String(server.rv));
  });

  it('restarts a watch only once the whole timeout has passed since its last event', async () => {
    const w = start(DB, { inactivityTimeoutMs: 600 });
    await until(() => w.r.status().watchesOpened === 1, 'watching');
    await new Promise((res) => setTimeout(res, 250));
    server.bookmark();
    const lastEvent = performance.now();
    await until(() => w.r.status().watchesOpened === 2, 'a new watch after the silence');
    const silentMs = performance.now() - lastEvent;
    expect(silentMs).toBeGreaterThanOrEqual(590);
    expect(silentMs).toBeLessThan(2_000);
    expect(w.rec.count('error')).toBe(0);
    await w.r.stop();
  });

  it('stops without an error event, closes its watch and clears its timers', async () => {
    const { r, rec } = start(SHOP_DB);
    await until(() => server.openWatches() === 1, 'watching');
    await r.stop();
    expect(rec.count('error')).toBe(0);
    expect(r.status().phase).toBe('Stopped');
    await until(() => server.openWatches() === 0, 'watch closed on the server');
  });

  it('leaves nothing attached to its own signal, however many watches it opens', async () => {
    const { r } = start(SHOP_DB, { watchList: false });
    const signal = (r as unknown as { abort: AbortController }).abort.signal;
    let early = 0;
    for (let i = 0; i < 50; i++) {
      if (i === 5) early = attachments(signal);
      const opened = watchRequests().length;
      await until(() => server.openWatches() === 1, 'watching');
      server.closeWatches();
      await until(() => watchRequests().length > opened, 'the next watch');
    }
    await until(() => server.openWatches() === 1, 'watching');
    // The listener that ends the open watch on stop, and the client's one for requests made with this signal.
    expect(attachments(signal)).toBe(early);
    expect(early).toBeLessThanOrEqual(2);
  });

  it('stops promptly while backing off', async () => {
    server.failNext(1, 503);
    const { r, rec } = start(SHOP_DB, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    await until(() => rec.count('error') === 1, 'in backoff');
    await r.stop();
    expect(r.status().phase).toBe('Stopped');
    expect(rec.log).toEqual(['error ServerError']);
  });
});

describe('Reflector: a server that accepts each watch and fails it in-stream', () => {
  const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

  for (const code of [500, 429]) {
    it(`backs off with growing delays after in-stream ${code}s and reports one ongoing failure`, async () => {
      server.failWatchesInStream = code;
      // The default healthy period (twice the last delay): a watch failed at once never reaches it.
      const { r, rec } = start(DB, { watchList: false, backoff: { initialMs: 100, maxMs: 1_600 }, random: () => 0 });
      await until(() => watchRequests().length >= 6, 'six watches', 20_000);
      // Without jitter the n-th retry waits initialMs × 2ⁿ (less a millisecond of timer rounding): a backoff reset by
      // each open would wait 100 ms every time.
      const waited = gaps(watchRequests().map((q) => q.at)).slice(0, 5);
      waited.forEach((ms, n) => expect(ms, `wait before retry ${n + 1}`).toBeGreaterThanOrEqual(100 * 2 ** n - 1));
      expect(rec.log).toEqual(['primed', `error ${code === 500 ? 'ServerError' : 'Throttled'}`]);
      expect(r.status()).toMatchObject({
        lastError: { reason: code === 500 ? 'ServerError' : 'Throttled' },
        failures: expect.any(Number),
        failingSince: expect.any(Number),
      });
      expect(r.status().failures).toBeGreaterThanOrEqual(5);
    });
  }

  it('recovers only after the watch has stayed up for healthyAfterMs, and starts the backoff again from its first step', async () => {
    server.failWatchesInStream = 500;
    const { r, rec } = start(DB, {
      watchList: false,
      backoff: { initialMs: 20, maxMs: 640 },
      healthyAfterMs: 400,
      random: () => 0,
    });
    await until(() => watchRequests().length >= 4, 'four watches');
    server.failWatchesInStream = undefined;
    const healedAt = Date.now();
    await until(() => rec.has('recovered'), 'recovered');
    const lastOpen = watchRequests().at(-1)!.at;
    const recoveredAt = Date.now();
    expect(recoveredAt - lastOpen).toBeGreaterThanOrEqual(399);
    expect(recoveredAt).toBeGreaterThan(healedAt);
    expect(rec.log).toEqual(['primed', 'error ServerError', 'recovered']);
    expect(r.status().lastError).toBeUndefined();
    expect(r.status().failures).toBeUndefined();

    // A healthy period forgot the failures: the next failure waits initialMs again, not 20 × 2⁴.
    const before = watchRequests().length;
    server.failWatchesInStream = 500;
    server.closeWatches();
    await until(() => watchRequests().length >= before + 2, 'a failed watch and its retry');
    const [failed, retried] = watchRequests().slice(before, before + 2);
    expect(retried!.at - failed!.at).toBeLessThan(20 * 2 ** 4);
    expect(rec.log).toEqual(['primed', 'error ServerError', 'recovered', 'error ServerError']);
  });

  it('stop clears the healthy-period timer', async () => {
    server.failWatchesInStream = 500;
    const { r, rec } = start(DB, { watchList: false, healthyAfterMs: 60_000 });
    await until(() => rec.count('error') === 1, 'failing');
    server.failWatchesInStream = undefined;
    // The timer that would declare recovery in a minute must not outlive stop and hold the process.
    const healthyTimer = () => (r as unknown as { healthyTimer?: NodeJS.Timeout }).healthyTimer;
    await until(() => healthyTimer() !== undefined, 'a watch up after the failure');
    expect(healthyTimer()?.hasRef()).toBe(true);
    await r.stop();
    expect(healthyTimer()).toBeUndefined();
    expect(rec.log).toEqual(['primed', 'error ServerError']);
  });
});

describe('Reflector: WatchList', () => {
  it('syncs from initial events and swaps the store at the end bookmark', async () => {
    for (const n of ['a', 'b']) server.create(DATABASE, n, { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB);
    await until(() => r.isPrimed(), 'primed');
    expect(rec.log).toEqual(['added shop/a', 'added shop/b', 'primed']);
    expect(listRequests()).toHaveLength(0);
    const q = watchRequests()[0]!.query;
    expect([q.get('sendInitialEvents'), q.get('resourceVersionMatch'), q.get('allowWatchBookmarks')]).toEqual([
      'true',
      'NotOlderThan',
      'true',
    ]);
    expect(Number(q.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    expect(Number(q.get('timeoutSeconds'))).toBeLessThanOrEqual(600);
    expect(r.status()).toMatchObject({
      syncMode: 'WatchList',
      lists: 1,
      watchesOpened: 1,
      resourceVersion: String(server.rv),
    });
    server.create(DATABASE, 'c', { namespace: 'shop' });
    await until(() => rec.has('added shop/c'), 'live event on the same stream');
  });

  it('after 410, syncs again and diffs the old store against the new one', async () => {
    for (const n of ['a', 'b']) server.create(DATABASE, n, { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB);
    await until(() => r.isPrimed() && server.openWatches() === 1, 'primed');
    rec.clear();
    server.closeWatches();
    server.delete(DATABASE, 'a', 'shop');
    server.create(DATABASE, 'z', { namespace: 'shop' });
    server.compact();
    await until(() => r.status().lists === 2, 'synced again');
    expect(rec.log).toEqual(['deleted shop/a', 'added shop/z']);
  });

  it('falls back to list + watch for good when the server rejects WatchList', async () => {
    server.watchList = 'reject';
    server.create(DATABASE, 'a', { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB);
    await until(() => r.isPrimed() && server.openWatches() === 1, 'primed');
    expect(rec.log).toEqual(['added shop/a', 'primed']);
    expect(r.status().syncMode).toBe('ListWatch');
    server.closeWatches();
    server.compact();
    server.create(DATABASE, 'b', { namespace: 'shop' });
    await until(() => rec.has('added shop/b'), 'b after relist');
    expect(watchRequests().filter((q) => q.query.get('sendInitialEvents'))).toHaveLength(1);
  });

  it('falls back when the server streams events but never the end bookmark', async () => {
    server.watchList = 'ignore';
    server.create(DATABASE, 'a', { namespace: 'shop' });
    const { r, rec } = start(SHOP_DB, { initialEventsTimeoutMs: 100 });
    await until(() => r.isPrimed(), 'primed');
    expect(rec.log).toEqual(['added shop/a', 'primed']);
    expect(r.status().syncMode).toBe('ListWatch');
    expect(listRequests()).toHaveLength(1);
  });
});
