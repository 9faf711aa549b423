import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog, type EntitySnapshot, type ReferentEntity } from '@/lib/changelog';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { FakeClock } from '@/lib/queue';
import { APP_KIND, app, appKey, database, dbKey } from './fixtures';

/** A Ready Secret's referent entity. */
const secret = (id: string): ReferentEntity => ({
  id,
  key: id,
  kind: 'Secret',
  namespace: 'ns',
  state: 'Ready',
  referencedBy: 1,
  changedAt: 0,
});

describe('ChangeLog.defer', () => {
  it('ignores the deferred kinds until one is asked about, then asks their writer for them, once', () => {
    const log = new ChangeLog({ maxEvents: 0 });
    const materialize = vi.fn(() => {
      log.put('referent', 'r', secret('r'));
    });
    log.defer(['referent', 'referrer'], materialize);
    expect(log.defers('referent')).toBe(true);
    log.put('referent', 'ignored', secret('ignored'));
    expect(log.remove('referent', 'ignored')).toBeUndefined();
    expect(log.size('referent')).toBe(0);
    // Another kind is stored as it comes, and asking about it asks nothing of the deferred ones.
    log.put('queue', 'q', {
      id: 'q',
      controller: 'q',
      depth: 0,
      adds: 0,
      reconciles: 0,
      errors: 0,
      resolved: 0,
    } as never);
    expect(log.snapshot({ entities: ['queue'] }).entities.queue).toHaveLength(1);
    expect(log.get('queue', 'q')).toBeDefined();
    expect(materialize).not.toHaveBeenCalled();

    expect(log.get('referent', 'r')?.state).toBe('Ready');
    expect(materialize).toHaveBeenCalledTimes(1);
    expect(log.defers('referent')).toBe(false);
    expect(log.get('referent', 'ignored')).toBeUndefined();
    log.snapshot();
    expect(materialize).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a snapshot of every kind', (log: ChangeLog) => void log.snapshot()],
    ['a delta', (log: ChangeLog) => void log.changesSince(0, { entities: ['referrer'] })],
    ['a subscriber', (log: ChangeLog) => void log.subscribe(() => undefined)],
    ['an observer', (log: ChangeLog) => void log.observe(() => undefined)],
    ['a waiter', (log: ChangeLog) => void log.next(1_000_000).catch(() => undefined)],
  ])('stops deferring for %s', (_, ask) => {
    const log = new ChangeLog();
    const materialize = vi.fn();
    log.defer(['referrer'], materialize);
    ask(log);
    expect(materialize).toHaveBeenCalledTimes(1);
    expect(log.defers('referrer')).toBe(false);
  });

  it('refuses to defer twice, or a kind it holds already', () => {
    const log = new ChangeLog();
    log.put('referent', 'r', secret('r'));
    expect(() => log.defer(['referent'], () => undefined)).toThrow(/referent entities are stored already/);
    log.defer(['referrer'], () => undefined);
    expect(() => log.defer(['reference'], () => undefined)).toThrow(/deferred already/);
  });
});

describe("a Manager's own change log", () => {
  const managers: Manager[] = [];
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.stop()));
  });

  /** Two Managers fed the same objects at the same (fake) times: one given a log, one keeping its own. */
  function pair() {
    const clock = new FakeClock(1_700_000_000_000);
    const make = (changelog?: ChangeLog) => {
      const source = new MemoryInformerSource({ priming: 'sync' });
      const manager = new Manager({
        source,
        clock,
        statsIntervalMs: 0,
        grace: 60_000,
        ...(changelog ? { changelog } : {}),
      });
      let reconciles = 0;
      const controller = manager.addController({
        name: 'watch',
        for: APP_KIND,
        reconcile(ctx) {
          reconciles++;
          const spec = (ctx.object?.spec ?? {}) as Record<string, string>;
          for (const [field, name] of Object.entries(spec)) ctx.resolve(dbKey(name), `spec.${field}`);
        },
      });
      manager.start();
      managers.push(manager);
      return { source, manager, reconciles: () => reconciles, queueStats: () => controller.queue.stats() };
    };
    const given = make(new ChangeLog({ maxEvents: 0 }));
    const own = make();
    /** Applies one change to both; a deletion is dropped without a reconcile, so it waits for the registry instead. */
    const apply = async (step: (s: MemoryInformerSource) => void, deletes = false) => {
      const before = [given.reconciles(), given.manager.registry.referrerCount];
      step(given.source);
      step(own.source);
      await vi.waitFor(() => {
        if (deletes) expect(given.manager.registry.referrerCount).toBeLessThan(before[1]!);
        else expect(given.reconciles()).toBeGreaterThan(before[0]!);
        expect(own.reconciles()).toBe(given.reconciles());
        expect(own.manager.registry.referrerCount).toBe(given.manager.registry.referrerCount);
      });
      // Both queues drained: no reconcile is left to run.
      await vi.waitFor(() => {
        for (const m of [given, own]) expect(m.queueStats()).toMatchObject({ depth: 0, processing: 0 });
      });
      expect(own.reconciles()).toBe(given.reconciles());
      clock.advance(1000);
    };
    return { given, own, apply, clock };
  }

  /**
   * What both logs must agree on. A referent's changedAt and resourceVersion say when its state was reached,
   * which a log that deferred referents learns only when asked: those are checked apart.
   */
  const view = (s: EntitySnapshot) => ({
    referrer: [...s.entities.referrer].sort((a, b) => a.id.localeCompare(b.id)),
    reference: [...s.entities.reference].sort((a, b) => a.id.localeCompare(b.id)),
    referent: [...s.entities.referent]
      .sort((a, b) => a.id.localeCompare(b.id))
      .map(({ changedAt: _c, resourceVersion: _r, ...rest }) => rest),
  });

  it('holds no referrer, referent or edge until asked, then the same ones a given log holds, and keeps them current', async () => {
    const { given, own, apply, clock } = pair();
    const clockNow = () => clock.now();
    await apply((s) => s.apply(app('web', { databaseRef: 'orders', cacheRef: 'sessions' })));
    await apply((s) => s.apply(database('orders', false)));
    await apply((s) => s.apply(database('orders', true)));
    await apply((s) => s.apply(app('api', { databaseRef: 'orders' })));
    await apply((s) => s.apply(database('sessions', true)));
    await apply((s) => s.delete(appKey('api')), true);

    expect(given.manager.changelog.size('referrer')).toBe(1);
    expect(own.manager.changelog.size('referrer')).toBe(0);
    expect(own.manager.changelog.size('referent')).toBe(0);
    expect(own.manager.changelog.size('reference')).toBe(0);

    // The first question (here a snapshot) fills the log; what it holds is what the given log holds, each
    // referent's state dated from the question.
    const asked = own.manager.changelog.snapshot();
    expect(asked.entities.referent.map((r) => r.changedAt)).toEqual([clockNow(), clockNow()]);
    const first = view(asked);
    expect(first).toEqual(view(given.manager.changelog.snapshot()));
    expect(first.referrer.map((r) => [r.key, r.state, r.reconciles])).toEqual([
      [appKey('web'), 'Resolved', given.manager.changelog.get('referrer', `watch|${appKey('web')}`)!.reconciles],
    ]);
    expect(first.reference).toHaveLength(2);
    expect(first.referent.map((r) => [r.key, r.state])).toEqual([
      [dbKey('orders'), 'Ready'],
      [dbKey('sessions'), 'Ready'],
    ]);

    // From then on both logs are written as things change.
    await apply((s) => s.apply(database('sessions', false)));
    await apply((s) => s.apply(app('api', { databaseRef: 'orders' })));
    expect(view(own.manager.changelog.snapshot())).toEqual(view(given.manager.changelog.snapshot()));
    expect(own.manager.changelog.get('referrer', `watch|${appKey('web')}`)?.state).toBe('Waiting');
  });
});
