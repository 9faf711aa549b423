import { afterEach, describe, expect, it, vi } from 'vitest';
import { stuck, stuckSteps } from '@/lib/diagnose';
import { RefwatchError } from '@/lib/model';
import { FakeClock } from '@/lib/queue';
import { APP, CACHE, DB, app, appKey, database, dbKey, harness, reconcileApp, type Harness } from './fixtures';

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

const T0 = 1_700_000_000_000;

describe('stuck', () => {
  it('lists unresolved referrers older than the threshold, oldest first, with the blocking reason and fix', async () => {
    const clock = new FakeClock(T0);
    const h = start(harness({ clock }));
    h.source.apply(app('missing', { databaseRef: 'ordrs' }));
    await vi.waitFor(() => expect(h.state(appKey('missing'))).toBe('NotFound'));
    clock.advance(10_000);
    h.source.apply(database('orders', false));
    h.source.apply(app('waiting', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('waiting'))).toBe('Waiting'));
    clock.advance(10_000);
    h.source.apply(database('ready', true));
    h.source.apply(app('fine', { databaseRef: 'ready' }));
    await vi.waitFor(() => expect(h.state(appKey('fine'))).toBe('Resolved'));
    clock.advance(5_000);
    const now = clock.now();

    const all = stuck(h.manager, { olderThan: 0, now });
    // In steps of one (sorting and indexing similar names included), the same list.
    const referrers = h.manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer;
    const steps = stuckSteps(h.manager, referrers, { olderThan: 0, now }, 1);
    let stepped = steps.next();
    let count = 0;
    for (; !stepped.done; stepped = steps.next()) count++;
    expect(count).toBeGreaterThan(3);
    expect(stepped.value).toEqual(all);
    expect(all).toEqual([
      {
        id: `watch|${appKey('missing')}`,
        key: appKey('missing'),
        controller: 'watch',
        state: 'NotFound',
        since: T0,
        ageMs: 25_000,
        reason: 'NotFound',
        message: 'Database.demo.refwatch.dev/shop/ordrs not found; did you mean orders?',
        fix: 'set spec.databaseRef to orders, or create Database.demo.refwatch.dev/shop/ordrs',
        referent: dbKey('ordrs'),
      },
      {
        id: `watch|${appKey('waiting')}`,
        key: appKey('waiting'),
        controller: 'watch',
        state: 'Waiting',
        since: T0 + 10_000,
        ageMs: 15_000,
        reason: 'NotReady',
        message: 'Database.demo.refwatch.dev/shop/orders is not Ready: Provisioning: creating volume',
        fix: 'wait for Database.demo.refwatch.dev/shop/orders to become Ready, or fix what its condition reports (kubectl describe databases.demo.refwatch.dev -n shop orders)',
        referent: dbKey('orders'),
      },
    ]);
    expect(stuck(h.manager, { olderThan: 15_000, now }).map((s) => s.key)).toEqual([
      appKey('missing'),
      appKey('waiting'),
    ]);
    expect(stuck(h.manager, { olderThan: 20_000, now }).map((s) => s.key)).toEqual([appKey('missing')]);
    expect(stuck(h.manager, { olderThan: 30_000, now })).toEqual([]);
  });

  it('a resolved referrer leaves the list, and its age restarts when it gets stuck again', async () => {
    const clock = new FakeClock(T0);
    const h = start(harness({ clock }));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));
    clock.advance(60_000);
    expect(stuck(h.manager, { olderThan: 30_000, now: clock.now() }).map((s) => s.key)).toEqual([appKey('web')]);
    h.source.apply(database('orders', true));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Resolved'));
    expect(stuck(h.manager, { olderThan: 0, now: clock.now() })).toEqual([]);
    h.source.apply(database('orders', false));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));
    clock.advance(1_000);
    expect(stuck(h.manager, { olderThan: 30_000, now: clock.now() })).toEqual([]);
    expect(stuck(h.manager, { olderThan: 0, now: clock.now() })[0]).toMatchObject({ ageMs: 1_000, reason: 'NotReady' });
  });

  it('a missing referent blocks before an earlier not-ready one, as in the engine', async () => {
    const h = start(harness());
    h.source.apply(database('orders', false));
    h.source.apply(app('web', { databaseRef: 'orders', cacheRef: 'sessions' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('NotFound'));
    const [entry] = stuck(h.manager, { olderThan: 0 });
    expect(entry).toMatchObject({
      reason: 'NotFound',
      referent: `${CACHE}/shop/sessions`,
      message: 'Cache.demo.refwatch.dev/shop/sessions not found',
    });
  });

  it('a kind that is not installed is the reason of every referrer waiting on it', async () => {
    const h = start(harness({ priming: 'manual' }));
    h.source.prime(APP);
    for (const name of ['a', 'b', 'c']) h.source.apply(app(name, { databaseRef: 'orders' }));
    await vi.waitFor(() => {
      for (const name of ['a', 'b', 'c']) expect(h.state(appKey(name))).toBe('Waiting');
    });
    h.source.fail(DB, { reason: 'KindUnknown', message: 'no resource serves kind Database.demo.refwatch.dev' });
    const entries = stuck(h.manager, { olderThan: 0 });
    expect(entries.map((e) => e.key).sort()).toEqual([appKey('a'), appKey('b'), appKey('c')]);
    for (const e of entries) {
      expect(e.reason).toBe('KindUnknown');
      expect(e.fix).toMatch(/^install the CustomResourceDefinition for databases\.demo\.refwatch\.dev/);
    }
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.since).toBeGreaterThanOrEqual(entries[i - 1]!.since);
  });

  it('a referrer whose reconcile fails with every reference ready is stuck on the reconcile error', async () => {
    const h = start(
      harness({
        reconcile: (ctx) => {
          reconcileApp(ctx);
          if (ctx.key === appKey('broken')) throw new Error('spec.port must be a number');
        },
      }),
    );
    h.source.apply(database('orders', true));
    h.source.apply(app('broken', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('broken'))).toBe('Error'));
    expect(stuck(h.manager, { olderThan: 0 })).toEqual([
      expect.objectContaining({
        key: appKey('broken'),
        state: 'Error',
        reason: 'ReconcileError',
        message: 'spec.port must be a number',
        fix: 'fix what the watch reconciler reports; it retries the referrer with backoff',
      }),
    ]);
  });

  it('a referrer whose references all became ready but that was not reconciled since is reported as requeued', async () => {
    const h = start(harness());
    h.source.apply(database('orders', false));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));
    await h.manager.controller('watch')!.stop(); // its workers are gone: nothing reconciles web again
    h.source.apply(database('orders', true));
    expect(stuck(h.manager, { olderThan: 0 })).toEqual([
      expect.objectContaining({
        key: appKey('web'),
        reason: 'Requeued',
        message:
          'every reference of App.demo.refwatch.dev/shop/web is ready; it waits for controller watch to reconcile it again',
      }),
    ]);
  });

  it('rejects a threshold that is not a duration', () => {
    const h = start(harness());
    for (const olderThan of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let thrown: unknown;
      try {
        stuck(h.manager, { olderThan });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(RefwatchError);
      expect((thrown as RefwatchError).field).toBe('olderThan');
    }
  });

  it('keeps the similar names of a cache between calls only while its keys stay the same', async () => {
    const h = start(harness());
    h.source.apply(database('orders', true));
    h.source.apply(app('typo', { databaseRef: 'ordrs' }));
    await vi.waitFor(() => expect(h.state(appKey('typo'))).toBe('NotFound'));
    const message = () => stuck(h.manager, { olderThan: 0 })[0]?.message;
    const stepped = () => {
      const referrers = h.manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer;
      const steps = stuckSteps(h.manager, referrers, { olderThan: 0 }, 1);
      for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value[0]?.message;
    };
    expect(message()).toBe(`${dbKey('ordrs')} not found; did you mean orders?`);
    // An update under the same key keeps the index; the answer is the same.
    h.source.apply(database('orders', false));
    expect(message()).toBe(`${dbKey('ordrs')} not found; did you mean orders?`);
    h.source.apply(database('ordes', true));
    expect(message()).toBe(`${dbKey('ordrs')} not found; did you mean orders or ordes?`);
    expect(stepped()).toBe(`${dbKey('ordrs')} not found; did you mean orders or ordes?`);
    h.source.delete(dbKey('orders'));
    expect(stepped()).toBe(`${dbKey('ordrs')} not found; did you mean ordes?`);
    expect(message()).toBe(`${dbKey('ordrs')} not found; did you mean ordes?`);
  });
});
