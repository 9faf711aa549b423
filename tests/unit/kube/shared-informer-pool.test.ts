import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InformerEvent, WatchTarget } from '@/lib/engine/informer-source';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { DATABASE, FakeApiServer, type FakeKind } from './fake-apiserver';
import { Recorder, until } from './helpers';

const SHOP_DB: WatchTarget = { group: 'demo.refwatch.dev', kind: 'Database', namespace: 'shop' };
const RESOURCE = 'demo.refwatch.dev/databases';
const BINDINGS = 'rbac.authorization.k8s.io/rolebindings';
const ROLEBINDING: FakeKind = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  resource: 'rolebindings',
  namespaced: true,
};

let server: FakeApiServer;
let pool: SharedInformerPool;
let handlerErrors: { error: unknown; event: InformerEvent }[];

beforeEach(async () => {
  server = await FakeApiServer.start();
  handlerErrors = [];
  pool = new SharedInformerPool({
    client: KubeClient.fromKubeconfig(server.kubeconfig()),
    reflector: { backoff: { initialMs: 10, maxMs: 40 } },
    onHandlerError: (error, { event }) => void handlerErrors.push({ error, event }),
  });
});
afterEach(async () => {
  await pool.stop();
  await server.stop();
});

describe('SharedInformerPool', () => {
  it('shares one watch between two subscribers of the same target', async () => {
    server.create(DATABASE, 'a', { namespace: 'shop' });
    const one = new Recorder();
    const two = new Recorder();
    const s1 = pool.acquire(SHOP_DB, one.handler);
    const s2 = pool.acquire({ ...SHOP_DB }, two.handler);
    await until(() => s1.isPrimed() && server.openWatches(RESOURCE) === 1, 'primed');
    server.create(DATABASE, 'b', { namespace: 'shop' });
    await until(() => one.has('added shop/b') && two.has('added shop/b'), 'both see b');
    expect(one.log).toEqual(['added shop/a', 'primed', 'added shop/b']);
    expect(two.log).toEqual(one.log);
    expect(server.openWatches(RESOURCE)).toBe(1);
    expect(pool.watches()).toHaveLength(1);
    expect(s2.status()).toMatchObject({ subscribers: 2, primed: true, objects: 2, watchesOpened: 1 });
    expect(s1.store).toBe(s2.store);
  });

  it('gives a late subscriber the cached state, then primed, before any live event', async () => {
    for (const n of ['a', 'b']) server.create(DATABASE, n, { namespace: 'shop' });
    const early = pool.acquire(SHOP_DB, () => {});
    await until(() => early.isPrimed() && server.openWatches(RESOURCE) === 1, 'primed');
    const late = new Recorder();
    pool.acquire(SHOP_DB, late.handler);
    expect(late.events).toHaveLength(0); // delivered asynchronously, never inside acquire
    server.create(DATABASE, 'c', { namespace: 'shop' });
    await until(() => late.has('added shop/c'), 'live event');
    expect(late.log).toEqual(['added shop/a', 'added shop/b', 'primed', 'added shop/c']);
  });

  it('tells a late subscriber that the watch is failing', async () => {
    server.failNext(100, 403);
    const early = new Recorder();
    pool.acquire(SHOP_DB, early.handler);
    await until(() => early.has('error Forbidden'), 'forbidden');
    const late = new Recorder();
    pool.acquire(SHOP_DB, late.handler);
    await until(() => late.events.length > 0, 'replay');
    expect(late.log).toEqual(['error Forbidden']);
  });

  it('retries a forbidden watch as soon as a RoleBinding changes in its namespace, not at the end of its backoff', async () => {
    server.addKind(ROLEBINDING);
    let denied = true;
    server.failNext(100, 403, { match: (_m, u) => denied && u.pathname.includes('/databases') });
    const rec = new Recorder();
    const sub = pool.acquire(SHOP_DB, rec.handler);
    // Three 403s: the next retry is 4 s away.
    await until(() => rec.count('error') === 3, 'three 403s', 10_000);
    expect(server.openWatches(BINDINGS)).toBe(1);
    const last = rec.events.filter((e) => e.type === 'error').at(-1)!;
    const retryAt = last.type === 'error' ? last.error.retryAt! : 0;
    denied = false;
    server.create(ROLEBINDING, 'team-read', { namespace: 'shop' });
    await until(() => sub.isPrimed(), 'primed once the RoleBinding appeared');
    expect(Date.now()).toBeLessThan(retryAt);
    expect(rec.log.slice(-2)).toEqual(['recovered', 'primed']);
  });

  it('stops its RoleBinding watches with the pool', async () => {
    server.addKind(ROLEBINDING);
    server.failNext(100, 403, { match: (_m, u) => u.pathname.includes('/databases') });
    const rec = new Recorder();
    pool.acquire(SHOP_DB, rec.handler);
    await until(() => rec.has('error Forbidden') && server.openWatches(BINDINGS) === 1, 'RoleBindings watched');
    await pool.stop();
    expect(pool.watches()).toEqual([]);
    await until(() => server.openWatches() === 0, 'every watch closed on the server');
  });

  it('keeps delivering to other handlers and keeps watching when one handler throws', async () => {
    const good = new Recorder();
    pool.acquire(SHOP_DB, () => {
      throw new Error('handler bug');
    });
    const sub = pool.acquire(SHOP_DB, good.handler);
    await until(() => sub.isPrimed() && server.openWatches(RESOURCE) === 1, 'primed');
    server.create(DATABASE, 'a', { namespace: 'shop' });
    server.create(DATABASE, 'b', { namespace: 'shop' });
    await until(() => good.has('added shop/b'), 'b');
    expect(good.log).toEqual(['primed', 'added shop/a', 'added shop/b']);
    expect(handlerErrors.map((h) => h.event.type)).toEqual(['primed', 'added', 'added']);
    expect((handlerErrors[0]!.error as Error).message).toBe('handler bug');
    expect(pool.handlerErrors).toBe(3);
    expect(sub.status()).toMatchObject({ phase: 'Watching' });
  });

  it('closes the HTTP watch when the last subscriber releases', async () => {
    const s1 = pool.acquire(SHOP_DB, () => {});
    const s2 = pool.acquire(SHOP_DB, () => {});
    await until(() => server.openWatches(RESOURCE) === 1, 'watching');
    await s1.release();
    expect(server.openWatches(RESOURCE)).toBe(1);
    await s1.release(); // a second release of one subscription changes nothing
    expect(pool.watches()[0]!.subscribers).toBe(1);
    await s2.release();
    await until(() => server.openWatches(RESOURCE) === 0, 'watch closed on the server');
    expect(pool.watches()).toEqual([]);
  });

  it('stops delivering to a released subscriber', async () => {
    const gone = new Recorder();
    const stay = new Recorder();
    const s = pool.acquire(SHOP_DB, gone.handler);
    pool.acquire(SHOP_DB, stay.handler);
    await until(() => s.isPrimed() && server.openWatches(RESOURCE) === 1, 'primed');
    await s.release();
    server.create(DATABASE, 'a', { namespace: 'shop' });
    await until(() => stay.has('added shop/a'), 'a');
    expect(gone.log).toEqual(['primed']);
  });

  it('leaves exactly one watch after racing releases and acquires', async () => {
    let sub = pool.acquire(SHOP_DB, () => {});
    await until(() => server.openWatches(RESOURCE) === 1, 'watching');
    const releases: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      releases.push(sub.release());
      sub = pool.acquire(SHOP_DB, () => {});
    }
    await Promise.all(releases);
    const last = new Recorder();
    pool.acquire(SHOP_DB, last.handler);
    await until(() => last.has('primed'), 'primed');
    await until(() => server.openWatches(RESOURCE) === 1, 'one watch');
    server.create(DATABASE, 'a', { namespace: 'shop' });
    await until(() => last.has('added shop/a'), 'a');
    expect(last.count('added')).toBe(1);
    expect(pool.watches()).toHaveLength(1);
    expect(server.openWatches(RESOURCE)).toBe(1);
  });

  it('keeps targets with different namespaces or selectors apart', async () => {
    pool.acquire(SHOP_DB, () => {});
    pool.acquire({ ...SHOP_DB, namespace: 'billing' }, () => {});
    pool.acquire({ ...SHOP_DB, labelSelector: 'tier=gold' }, () => {});
    pool.acquire({ ...SHOP_DB, labelSelector: '' }, () => {});
    await until(() => server.openWatches(RESOURCE) === 3, 'three watches');
    expect(
      pool
        .watches()
        .map((w) => w.subscribers)
        .sort(),
    ).toEqual([1, 1, 2]);
  });

  it('stop closes every watch and refuses new subscribers', async () => {
    pool.acquire(SHOP_DB, () => {});
    pool.acquire({ group: '', kind: 'ConfigMap' }, () => {});
    await until(() => server.openWatches() === 2, 'two watches');
    await pool.stop();
    await until(() => server.openWatches() === 0, 'no watch left on the server');
    expect(pool.watches()).toEqual([]);
    expect(() => pool.acquire(SHOP_DB, () => {})).toThrow(/stopped/);
  });
});
