import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ReconcileContext } from '@/lib/engine';
import type { KubeObject, ObjectKey } from '@/lib/model';
import { APP_KIND, app, appKey, database, dbKey } from './fixtures';

// Every way a referrer goes away drops its references: deleted (with `for`,
// or told by the reconcile of a controller without `for`), or forgotten
// explicitly. The referent kind's watch is cancelled after the last.

const DB = 'Database.demo.refwatch.dev';
const GRACE = 40;
let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

function start(): { source: MemoryInformerSource; manager: Manager } {
  const source = new MemoryInformerSource();
  manager = new Manager({ source, grace: GRACE, statsIntervalMs: 0 });
  return { source, manager };
}

/** resolveRefs declares the Databases an App's spec.*Ref fields name. */
function resolveRefs(ctx: ReconcileContext, obj: KubeObject | undefined): void {
  const spec = (obj?.spec ?? {}) as Record<string, string>;
  for (const [field, name] of Object.entries(spec))
    if (field.endsWith('Ref')) ctx.resolve(dbKey(name), `spec.${field}`);
}

/** gone checks a referrer left nothing behind: no reference, no entry, and its kind's watch cancelled. */
async function expectGone(m: Manager, source: MemoryInformerSource, controller: string, key: ObjectKey): Promise<void> {
  expect(m.registry.referencesOf(controller, key)).toEqual([]);
  expect(m.registry.referrers(controller)).toEqual([]);
  expect(m.changelog.get('referrer', `${controller}|${key}`)).toBeUndefined();
  expect(m.changelog.get('referent', dbKey('orders'))).toBeUndefined();
  expect(['Grace', 'Cancelled']).toContain(m.referenceControllers.state(DB));
  await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Cancelled'));
  expect(source.openWatches(DB)).toBe(0);
}

describe('a referrer that goes away drops its references', () => {
  it('deleted, with `for`: the last referrer gone cancels the kind after grace', async () => {
    const { source, manager: m } = start();
    m.addController({
      name: 'apps',
      for: APP_KIND,
      reconcile: (ctx) => resolveRefs(ctx, ctx.object as KubeObject | undefined),
    });
    m.start();
    source.apply(database('orders', true));
    source.apply(app('web', { databaseRef: 'orders' }));
    source.apply(app('api', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(m.registry.referrersOf(dbKey('orders'))).toHaveLength(2));
    source.delete(appKey('web'));
    await vi.waitFor(() => expect(m.registry.referrersOf(dbKey('orders'))).toHaveLength(1));
    // One referrer left: the kind keeps its watch.
    expect(m.referenceControllers.state(DB)).toBe('Active');
    source.delete(appKey('api'));
    await vi.waitFor(() => expect(m.registry.kindCount(DB)).toBe(0));
    await expectGone(m, source, 'apps', appKey('api'));
  });

  it('deleted, without `for`: a reconcile that finds its referrer gone returns forget', async () => {
    const { source, manager: m } = start();
    const apps = new Map<ObjectKey, KubeObject>([[appKey('web'), app('web', { databaseRef: 'orders' })]]);
    const c = m.addController({
      name: 'external',
      reconcile: (ctx) => {
        const obj = apps.get(ctx.key);
        if (!obj) return { forget: true };
        resolveRefs(ctx, obj);
      },
    });
    m.start();
    source.apply(database('orders', false));
    c.enqueue(appKey('web'));
    await vi.waitFor(() => expect(m.changelog.get('referrer', `external|${appKey('web')}`)?.state).toBe('Waiting'));
    apps.delete(appKey('web'));
    // The referent's next change wakes the referrer, which finds itself gone.
    source.apply(database('orders', true));
    await vi.waitFor(() => expect(m.registry.kindCount(DB)).toBe(0));
    await expectGone(m, source, 'external', appKey('web'));
  });

  it('forgotten explicitly, without `for`: controller.forget drops it at once', async () => {
    const { source, manager: m } = start();
    const c = m.addController({
      name: 'external',
      reconcile: (ctx) => resolveRefs(ctx, app('web', { databaseRef: 'orders' })),
    });
    m.start();
    source.apply(database('orders', false));
    c.enqueue(appKey('web'));
    await vi.waitFor(() => expect(m.changelog.get('referrer', `external|${appKey('web')}`)?.state).toBe('Waiting'));
    c.forget(appKey('web'));
    expect(m.registry.kindCount(DB)).toBe(0);
    expect(m.referenceControllers.state(DB)).toBe('Grace');
    expect(source.openWatches(DB)).toBe(1);
    await expectGone(m, source, 'external', appKey('web'));
  });

  it('forgotten while its reconcile runs: what that reconcile resolves is dropped when it ends', async () => {
    const { source, manager: m } = start();
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let entered = false;
    const c = m.addController({
      name: 'external',
      reconcile: async (ctx) => {
        resolveRefs(ctx, app('x', { databaseRef: 'orders' }));
        if (ctx.key !== appKey('web')) return;
        entered = true;
        await blocked;
      },
    });
    m.start();
    source.apply(database('orders', true));
    // Another referrer keeps the kind primed, so nothing queues web again meanwhile.
    c.enqueue(appKey('api'));
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Active'));
    c.enqueue(appKey('web'));
    await vi.waitFor(() => expect(entered).toBe(true));
    // Subscribe before read: web's reference is registered while its reconcile runs.
    expect(m.registry.referrersOf(dbKey('orders'))).toHaveLength(2);
    c.forget(appKey('web'));
    release();
    await vi.waitFor(() => expect(c.queue.stats().processing).toBe(0));
    expect(m.registry.referrers('external').map((r) => r.key)).toEqual([appKey('api')]);
    expect(m.changelog.get('referrer', `external|${appKey('web')}`)).toBeUndefined();
    c.forget(appKey('api'));
    await expectGone(m, source, 'external', appKey('api'));
  });

  it('re-referenced within grace after a forget, the kind keeps its watch', async () => {
    const { source, manager: m } = start();
    const c = m.addController({
      name: 'external',
      reconcile: (ctx) => resolveRefs(ctx, app(ctx.key.split('/').at(-1)!, { databaseRef: 'orders' })),
    });
    m.start();
    source.apply(database('orders', true));
    c.enqueue(appKey('web'));
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Active'));
    c.forget(appKey('web'));
    expect(m.referenceControllers.state(DB)).toBe('Grace');
    c.enqueue(appKey('api'));
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Active'));
    await new Promise((r) => setTimeout(r, GRACE * 2));
    expect(source.openWatches(DB)).toBe(1);
    expect(m.registry.referrers('external').map((r) => r.key)).toEqual([appKey('api')]);
  });
});
