import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { FakeClock } from '@/lib/queue';
import { APP_KIND, app, appKey, database, dbKey, harness, lastStates, type Harness } from './fixtures';

let current: Harness | undefined;
afterEach(async () => {
  await current?.manager.stop();
  current = undefined;
});

function start(h: Harness): Harness {
  current = h;
  h.manager.start();
  return h;
}

describe('Manager', () => {
  it('a referent created after its referrer wakes and resolves it', async () => {
    const h = start(harness());
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['NotFound']));
    h.source.apply(database('orders', true));
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['Ready']));
    const referrer = h.manager.changelog.get('referrer', `watch|${appKey('web')}`);
    expect(referrer?.state).toBe('Resolved');
  });

  it('a referent turning Ready wakes its referrer, and waiting does not grow backoff', async () => {
    const h = start(harness());
    h.source.apply(database('orders', false));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['NotReady']));
    const q = h.manager.controller('watch')!.queue;
    expect(q.numRequeues(appKey('web'))).toBe(0);
    expect(h.manager.changelog.get('referrer', `watch|${appKey('web')}`)).toMatchObject({
      state: 'Waiting',
      message: 'creating volume',
    });
    h.source.apply(database('orders', true));
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['Ready']));
    expect(q.numRequeues(appKey('web'))).toBe(0);
  });

  it('two referrers on one referent are both woken, through one watch', async () => {
    const h = start(harness());
    h.source.apply(app('web', { databaseRef: 'orders' }));
    h.source.apply(app('api', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.reconciles(appKey('api'))).toBeGreaterThan(0));
    await vi.waitFor(() => expect(h.reconciles(appKey('web'))).toBeGreaterThan(0));
    h.source.apply(database('orders', true));
    await vi.waitFor(() => {
      expect(lastStates(h, appKey('web'))).toEqual(['Ready']);
      expect(lastStates(h, appKey('api'))).toEqual(['Ready']);
    });
    expect(h.source.openWatches('Database.demo.refwatch.dev')).toBe(1);
    expect(h.manager.registry.referrersOf(dbKey('orders'))).toHaveLength(2);
  });

  it('a dropped reference cancels the kind after grace; re-referencing within grace keeps it', async () => {
    const h = start(harness({ grace: 150 }));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active'));
    // Drop, then re-reference within grace: the watch survives.
    h.source.apply(app('web', {}));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Grace'));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active'));
    expect(h.source.opened).toBe(2); // App + Database, no restart
    // Drop for good: cancelled after grace, watch closed, reason recorded.
    h.source.apply(app('web', {}));
    await vi.waitFor(
      () => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Cancelled'),
      { timeout: 2000 },
    );
    expect(h.source.openWatches('Database.demo.refwatch.dev')).toBe(0);
    const rc = h.manager.changelog.get('controller', 'Database.demo.refwatch.dev')!;
    expect(rc.reason).toBe('no references for 150 ms');
    expect(rc.cancelledAt).toBeTypeOf('number');
    expect(rc.history.map((t) => t.state)).toEqual([
      'Starting',
      'Priming',
      'Active',
      'Grace',
      'Active',
      'Grace',
      'Cancelled',
    ]);
    // A new reference after cancellation starts a new watch.
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active'));
    expect(h.source.openWatches('Database.demo.refwatch.dev')).toBe(1);
  });

  it('a referrer reconciled while its kind is priming is never told NotFound', async () => {
    const h = start(harness({ priming: 'manual' }));
    h.source.prime('App.demo.refwatch.dev');
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['NotPrimed']));
    // Events during priming fill the cache but dispatch nothing.
    h.source.apply(database('orders', false));
    h.source.apply(database('orders', true));
    await new Promise((r) => setTimeout(r, 30));
    expect(h.reconciles(appKey('web'))).toBe(1);
    h.source.prime('Database.demo.refwatch.dev');
    await vi.waitFor(() => expect(lastStates(h, appKey('web'))).toEqual(['Ready']));
    const all = h.seen
      .get(appKey('web'))!
      .flat()
      .map((r) => r.state);
    expect(all).not.toContain('NotFound');
  });

  it('no reconcile runs before the referrers own cache is primed', async () => {
    const h = start(harness({ priming: 'manual' }));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await new Promise((r) => setTimeout(r, 30));
    expect(h.reconciles(appKey('web'))).toBe(0);
    h.source.prime('App.demo.refwatch.dev');
    await vi.waitFor(() => expect(h.reconciles(appKey('web'))).toBe(1));
  });

  it('a burst of 1,000 events on one referent gives at most 2 reconciles per referrer', async () => {
    const h = start(harness());
    for (let i = 0; i < 20; i++) h.source.apply(app(`app-${i}`, { databaseRef: 'orders' }));
    h.source.apply(database('orders', false));
    await vi.waitFor(() => {
      for (let i = 0; i < 20; i++) expect(lastStates(h, appKey(`app-${i}`))).toEqual(['NotReady']);
    });
    await new Promise((r) => setTimeout(r, 20));
    const before = Array.from({ length: 20 }, (_, i) => h.reconciles(appKey(`app-${i}`)));
    for (let i = 0; i < 1000; i++) h.source.apply(database('orders', i === 999));
    await vi.waitFor(() => {
      for (let i = 0; i < 20; i++) expect(lastStates(h, appKey(`app-${i}`))).toEqual(['Ready']);
    });
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 20; i++) expect(h.reconciles(appKey(`app-${i}`)) - before[i]!).toBeLessThanOrEqual(2);
  });

  it('published reference controller counts follow references and the cache', async () => {
    const h = start(harness());
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active'));
    h.source.apply(app('api', { databaseRef: 'orders' }));
    h.source.apply(database('orders', true));
    h.source.apply(database('billing', true));
    await vi.waitFor(() => expect(h.manager.registry.kindCount('Database.demo.refwatch.dev')).toBe(2));
    h.manager.publishStats();
    expect(h.manager.changelog.get('controller', 'Database.demo.refwatch.dev')).toMatchObject({
      references: 2,
      referents: 2,
    });
    expect(h.manager.changelog.get('controller', 'Database.demo.refwatch.dev')!.dispatches).toBeGreaterThan(0);
  });

  it('a throwing reconciler is counted and retried, and its worker keeps working', async () => {
    let badCalls = 0;
    const source = new MemoryInformerSource();
    const manager = new Manager({ source, statsIntervalMs: 0, changelog: new ChangeLog() });
    const done: string[] = [];
    manager.addController({
      name: 'flaky',
      for: APP_KIND,
      workers: 1,
      reconcile: (ctx) => {
        if (ctx.key === appKey('bad') && ++badCalls < 3) throw new Error('boom');
        done.push(ctx.key);
      },
    });
    current = { source, manager } as Harness;
    manager.start();
    source.apply(app('bad', {}));
    source.apply(app('good', {}));
    await vi.waitFor(() => expect(done).toEqual(expect.arrayContaining([appKey('good'), appKey('bad')])));
    const c = manager.controller('flaky')!;
    expect(c.stats.errors).toBe(2);
    expect(c.queue.numRequeues(appKey('bad'))).toBe(0); // forgotten after success
    const events = manager.changelog.snapshot({ entities: ['event'] }).entities.event!;
    expect(events.some((e) => e.type === 'ReconcileError' && e.message.includes('boom'))).toBe(true);
  });

  it('an invalid reference fails that reconcile with a clear error, not the worker', async () => {
    const h = start(
      harness({
        reconcile: (ctx) => {
          ctx.resolve('Database.demo.refwatch.dev/Shop/orders', 'spec.databaseRef');
        },
      }),
    );
    h.source.apply(app('web', {}));
    await vi.waitFor(() => expect(h.manager.changelog.get('referrer', `watch|${appKey('web')}`)?.state).toBe('Error'));
    expect(h.manager.changelog.get('referrer', `watch|${appKey('web')}`)?.message).toMatch(/namespace "Shop"/);
  });

  it('a deleted referrer drops its references', async () => {
    const h = start(harness({ grace: 20 }));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.manager.registry.referrersOf(dbKey('orders'))).toHaveLength(1));
    h.source.delete(appKey('web'));
    await vi.waitFor(() => expect(h.manager.registry.referrersOf(dbKey('orders'))).toHaveLength(0));
    expect(h.manager.changelog.get('referrer', `watch|${appKey('web')}`)).toBeUndefined();
    await vi.waitFor(() =>
      expect(h.manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Cancelled'),
    );
  });

  it('stop leaves no timer, worker or watch running', async () => {
    const clock = new FakeClock(Date.now());
    const source = new MemoryInformerSource();
    const manager = new Manager({ source, clock, grace: 60_000, statsIntervalMs: 500 });
    let reconciles = 0;
    manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => {
        reconciles++;
        const ref = (ctx.object?.spec as { databaseRef?: string }).databaseRef;
        if (ref) ctx.resolve(dbKey(ref), 'spec.databaseRef');
      },
    });
    manager.start();
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active'));
    source.apply(app('web', {})); // a 60 s grace timer is now pending
    await vi.waitFor(() => expect(manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Grace'));
    expect(clock.pendingTimers()).toBe(2); // grace + stats
    const before = reconciles;
    await manager.stop();
    expect(clock.pendingTimers()).toBe(0);
    expect(source.openWatches()).toBe(0);
    // Workers have exited: new work is not picked up.
    manager.controller('watch')!.enqueue(appKey('web'));
    await new Promise((r) => setTimeout(r, 20));
    expect(reconciles).toBe(before);
  });
});
