import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, conditionReadiness, type ReconcileContext, type WakeOn } from '@/lib/engine';
import { ChangeLog } from '@/lib/changelog';
import type { KubeObject } from '@/lib/model';
import { FakeClock } from '@/lib/queue';
import fc from 'fast-check';
import {
  WAKE_ALL,
  WAKE_CHANGE,
  WAKE_GENERATION,
  WAKE_READINESS,
  WAKE_SELECTED,
  WAKE_VERDICT,
  WakeFilters,
  wakeMask,
} from '@/lib/engine/wake';
import { ReferenceRegistry } from '@/lib/registry';
import { APP_KIND, app, appKey, dbKey } from './fixtures';

/** A Database with a generation (its spec) and a Ready condition whose message can change without the verdict. */
function db(opts: { generation: number; ready: boolean; message?: string }): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop', generation: opts.generation },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: opts.ready ? 'True' : 'False',
          reason: opts.ready ? 'Provisioned' : 'Provisioning',
          message: opts.message ?? '',
        },
      ],
    },
  };
}

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** One App per wakeOn, each referencing Database shop/orders with that wakeOn; counts the wakes each gets. */
async function rig(wakeOns: WakeOn[]) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  manager = new Manager({ source, grace: 50, statsIntervalMs: 0 });
  const wakeOf = new Map(wakeOns.map((w) => [appKey(w), w]));
  const reconcile = (ctx: ReconcileContext) => {
    ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: wakeOf.get(ctx.key) });
  };
  const controller = manager.addController({ name: 'watch', for: APP_KIND, reconcile });
  const woken = vi.spyOn(controller, 'enqueue');
  manager.start();
  source.apply(db({ generation: 1, ready: false, message: 'creating volume' }));
  for (const w of wakeOns) source.apply(app(w, { databaseRef: 'orders' }));
  await vi.waitFor(() => expect(manager!.registry.referrersOf(dbKey('orders'))).toHaveLength(wakeOns.length));
  await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  /** wakes applies a change to the Database and returns which Apps it woke. */
  const wakes = (change: () => void): string[] => {
    woken.mockClear();
    change();
    return woken.mock.calls.map(([key]) => key.slice(key.lastIndexOf('/') + 1)).sort();
  };
  return { source, controller, wakes };
}

describe('wakeOn', () => {
  it("'change' wakes on every new resourceVersion; 'readiness' and 'generation' ignore a status write that changes neither", async () => {
    const { source, wakes } = await rig(['change', 'readiness', 'generation']);
    expect(wakes(() => source.apply(db({ generation: 1, ready: false, message: 'attaching volume' })))).toEqual([
      'change',
    ]);
  });

  it("'readiness' wakes when the verdict flips, not for a new spec that leaves it", async () => {
    const { source, wakes } = await rig(['change', 'readiness', 'generation']);
    expect(wakes(() => source.apply(db({ generation: 1, ready: true })))).toEqual(['change', 'readiness']);
    expect(wakes(() => source.apply(db({ generation: 2, ready: true })))).toEqual(['change', 'generation']);
    expect(wakes(() => source.apply(db({ generation: 2, ready: false, message: 'resizing' })))).toEqual([
      'change',
      'readiness',
    ]);
  });

  it('every wakeOn wakes when the referent goes or comes back', async () => {
    const { source, wakes } = await rig(['change', 'readiness', 'generation']);
    expect(wakes(() => source.delete(dbKey('orders')))).toEqual(['change', 'generation', 'readiness']);
    expect(wakes(() => source.apply(db({ generation: 1, ready: false })))).toEqual([
      'change',
      'generation',
      'readiness',
    ]);
  });

  it('a referrer woken by readiness resolves with the new verdict', async () => {
    const { source, controller } = await rig(['readiness']);
    const before = controller.stats.reconciles;
    source.apply(db({ generation: 1, ready: false, message: 'still creating' }));
    source.apply(db({ generation: 1, ready: true }));
    await vi.waitFor(() =>
      expect(manager!.changelog.get('referrer', `watch|${appKey('readiness')}`)?.state).toBe('Resolved'),
    );
    expect(controller.stats.reconciles).toBe(before + 1);
  });

  it('two resolve() calls of one referent wake on either; a filter goes with its reference', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, grace: 50, statsIntervalMs: 0 });
    let declare: 'filtered' | 'none' | 'default' = 'filtered';
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => {
        if (declare === 'none') return;
        if (declare === 'default') return void ctx.resolve(dbKey('orders'), 'spec.databaseRef');
        ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: 'readiness' });
        ctx.resolve(dbKey('orders'), 'spec.backupRef', { wakeOn: 'generation' });
      },
    });
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(db({ generation: 1, ready: false }));
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(manager!.registry.referencesOf('watch', appKey('web'))).toHaveLength(2));
    woken.mockClear();
    source.apply(db({ generation: 1, ready: false, message: 'status only' }));
    expect(woken).not.toHaveBeenCalled();
    source.apply(db({ generation: 2, ready: false, message: 'status only' }));
    expect(woken).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));

    declare = 'none';
    source.apply(app('web', { databaseRef: 'orders', touched: 'yes' }));
    await vi.waitFor(() => expect(manager!.registry.referencesOf('watch', appKey('web'))).toHaveLength(0));
    expect(manager.registry.isReferenced(dbKey('orders'))).toBe(false);
    declare = 'default';
    source.apply(app('web', { databaseRef: 'orders', touched: 'again' }));
    await vi.waitFor(() => expect(manager!.registry.referencesOf('watch', appKey('web'))).toHaveLength(1));
    woken.mockClear();
    source.apply(db({ generation: 2, ready: false, message: 'a status write wakes it again' }));
    expect(woken).toHaveBeenCalledTimes(1);
  });

  it('a reconcile restating a reference with its mask writes no filter; a new wakeOn, or one after a failed reconcile, is written', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, grace: 50, statsIntervalMs: 0 });
    let wakeOn: WakeOn = 'readiness';
    let failWith: WakeOn | undefined;
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => {
        if (failWith) {
          ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: failWith });
          failWith = undefined;
          throw new Error('failed after declaring');
        }
        ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn });
      },
    });
    const written = vi.spyOn(WakeFilters.prototype, 'set');
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(db({ generation: 1, ready: false }));
    source.apply(app('web', { databaseRef: 'orders' }));
    const idle = () => vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
    await vi.waitFor(() => expect(controller.stats.reconciles).toBeGreaterThan(0));
    await idle();
    expect(written).toHaveBeenCalled();
    let reconciles = controller.stats.reconciles;
    const reconciled = () => {
      const want = ++reconciles;
      return vi.waitFor(() => expect(controller.stats.reconciles).toBe(want));
    };

    written.mockClear();
    source.apply(app('web', { databaseRef: 'orders', touched: '1' }));
    await reconciled();
    await idle();
    expect(written).not.toHaveBeenCalled();
    woken.mockClear();
    source.apply(db({ generation: 2, ready: false }));
    expect(woken).not.toHaveBeenCalled(); // still filtered by readiness

    wakeOn = 'generation';
    source.apply(app('web', { databaseRef: 'orders', touched: '2' }));
    await reconciled();
    await idle();
    expect(written).toHaveBeenCalledTimes(1);
    woken.mockClear();
    source.apply(db({ generation: 3, ready: false }));
    expect(woken).toHaveBeenCalledTimes(1);
    await idle();

    // A failed reconcile wrote 'change'; the retry that restates 'generation' writes it back.
    failWith = 'change';
    written.mockClear();
    source.apply(app('web', { databaseRef: 'orders', touched: '3' }));
    await vi.waitFor(() => expect(controller.stats.errors).toBe(1));
    await vi.waitFor(() => expect(written).toHaveBeenCalledTimes(2));
    await idle();
    woken.mockClear();
    source.apply(db({ generation: 3, ready: false, message: 'status only' }));
    expect(woken).not.toHaveBeenCalled();
    written.mockRestore();
  });

  it('an unknown wakeOn fails the reconcile with an error naming the field', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    const errors: unknown[] = [];
    manager = new Manager({ source, statsIntervalMs: 0, hooks: { onReconcileError: (_c, _k, e) => errors.push(e) } });
    manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => void ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: 'status' as WakeOn }),
    });
    manager.start();
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0));
    expect(errors[0]).toMatchObject({
      field: 'wakeOn',
      message: expect.stringContaining(
        'wakeOn must be "change", "readiness", "generation" or "resolution", got "status"',
      ),
    });
    expect(manager.registry.isReferenced(dbKey('orders'))).toBe(false);
  });

  it("an observed referent wakes 'readiness' referrers on a verdict, not on a new message", async () => {
    const clock = new FakeClock(Date.now());
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, clock, statsIntervalMs: 0 });
    let answer = { exists: true, ready: false, message: 'warming up' };
    manager.addObserver({ kind: 'HealthCheck.probes.example.com', interval: 100, observe: () => answer });
    const wakeOf: Record<string, WakeOn> = { [appKey('change')]: 'change', [appKey('readiness')]: 'readiness' };
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) =>
        void ctx.resolve('HealthCheck.probes.example.com/shop/orders', 'spec.healthRef', { wakeOn: wakeOf[ctx.key] }),
    });
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(app('change', {}));
    source.apply(app('readiness', {}));
    await vi.waitFor(() =>
      expect(manager!.registry.referrersOf('HealthCheck.probes.example.com/shop/orders')).toHaveLength(2),
    );
    const pollOnce = async (expected: string[]) => {
      woken.mockClear();
      clock.advance(100);
      await vi.waitFor(() =>
        expect(woken.mock.calls.map(([k]) => k.slice(k.lastIndexOf('/') + 1)).sort()).toEqual(expected),
      );
    };
    await pollOnce(['change', 'readiness']); // the first poll
    answer = { exists: true, ready: false, message: 'almost' };
    await pollOnce(['change']);
    answer = { exists: true, ready: true, message: '' };
    await pollOnce(['change', 'readiness']);
  });

  it('judges a flip from the state published for the old object, without reading that object again', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    const ready = conditionReadiness('Ready');
    const judged: KubeObject[] = [];
    manager = new Manager({
      source,
      statsIntervalMs: 0,
      // A log that is written as it goes, as a server's is; a Manager's own log states no referent until asked.
      changelog: new ChangeLog({ maxEvents: 0 }),
      readiness: () => (o) => {
        judged.push(o);
        return ready(o);
      },
    });
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => void ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: 'readiness' }),
    });
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(db({ generation: 1, ready: false, message: 'creating volume' }));
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(manager!.registry.referrersOf(dbKey('orders'))).toHaveLength(1));
    await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
    const updates: [KubeObject, boolean][] = [
      [db({ generation: 1, ready: false, message: 'attaching volume' }), false],
      [db({ generation: 1, ready: true }), true],
      [db({ generation: 1, ready: true, message: 'serving' }), false],
      [db({ generation: 1, ready: false, message: 'failing over' }), true],
    ];
    for (const [next, wakes] of updates) {
      const old = manager.referenceControllers.cached(dbKey('orders'))!;
      judged.length = 0;
      woken.mockClear();
      source.apply(next);
      expect(woken).toHaveBeenCalledTimes(wakes ? 1 : 0);
      expect(judged).not.toContain(old);
      expect(judged.length).toBeGreaterThan(0);
    }
  });
});

describe('WakeFilters.dispatchAll', () => {
  const REFERENTS = ['Pod/ns/a', 'Pod/ns/b'];
  const REFERRERS = ['Service/ns/s1', 'Service/ns/s2', 'Service/ns/s3'];
  const CONTROLLERS = ['services', 'pdbs'];
  const MASKS = [
    wakeMask('change'),
    wakeMask('readiness'),
    wakeMask('generation'),
    wakeMask('resolution'),
    wakeMask('change') | WAKE_SELECTED,
    wakeMask('readiness') | WAKE_SELECTED,
    wakeMask('generation') | WAKE_SELECTED,
  ];
  const BITS = [WAKE_CHANGE, WAKE_CHANGE | WAKE_READINESS | WAKE_VERDICT, WAKE_CHANGE | WAKE_GENERATION, WAKE_ALL];
  type Op =
    | { op: 'refs'; controller: string; referrer: string; referents: string[] }
    | { op: 'mask'; controller: string; referrer: string; referent: string; mask: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      op: fc.constant('refs' as const),
      controller: fc.constantFrom(...CONTROLLERS),
      referrer: fc.constantFrom(...REFERRERS),
      referents: fc.subarray(REFERENTS),
    }),
    fc.record({
      op: fc.constant('mask' as const),
      controller: fc.constantFrom(...CONTROLLERS),
      referrer: fc.constantFrom(...REFERRERS),
      referent: fc.constantFrom(...REFERENTS),
      mask: fc.constantFrom(...MASKS),
    }),
  );

  it('wakes and restates exactly as dispatching each referrer does, through every change of references and masks', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), (ops) => {
        const registry = new ReferenceRegistry();
        const restated: string[] = [];
        const filters = new WakeFilters(
          registry,
          () => true,
          (c, r) => void restated.push(`${c}|${r}`),
        );
        for (const o of ops) {
          if (o.op === 'refs')
            registry.setReferences(
              o.controller,
              o.referrer,
              o.referents.map((referent) => ({ referent, fieldPath: 'spec.selector' })),
            );
          // A mask is written for a reference the referrer holds, as a reconcile does after registering it.
          else if (registry.multiplicity(o.controller, o.referrer, o.referent) > 0)
            filters.set(o.controller, o.referrer, o.referent, o.mask);
          for (const referent of REFERENTS)
            for (const bits of BITS) {
              const all: string[] = [];
              restated.length = 0;
              filters.dispatchAll(referent, bits, (c, r) => void all.push(`${c}|${r}`));
              const allRestated = [...restated];
              const each: string[] = [];
              restated.length = 0;
              registry.forEachReferrerOf(referent, (r) =>
                filters.dispatch(referent, r, bits, (c, k) => void each.push(`${c}|${k}`)),
              );
              expect(all.sort()).toEqual(each.sort());
              expect(allRestated.sort()).toEqual([...restated].sort());
            }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('skips the visit when every referrer is a selection match that sleeps through a bare change', () => {
    const registry = new ReferenceRegistry();
    const filters = new WakeFilters(registry);
    for (const s of ['Service/ns/s1', 'Service/ns/s2']) {
      registry.setReferences('services', s, [{ referent: 'Pod/ns/a', fieldPath: 'spec.selector' }]);
      filters.set('services', s, 'Pod/ns/a', wakeMask('readiness') | WAKE_SELECTED);
    }
    const visit = vi.spyOn(registry, 'forEachReferrerOf');
    const woken: string[] = [];
    filters.dispatchAll('Pod/ns/a', WAKE_CHANGE, (_c, r) => void woken.push(r));
    expect(visit).not.toHaveBeenCalled();
    expect(woken).toEqual([]);
    // A readiness flip is visited and wakes both.
    filters.dispatchAll('Pod/ns/a', WAKE_CHANGE | WAKE_READINESS | WAKE_VERDICT, (_c, r) => void woken.push(r));
    expect(woken.sort()).toEqual(['Service/ns/s1', 'Service/ns/s2']);
    // A third referrer without a filter wakes on every change, so a bare change is visited again.
    registry.setReferences('pdbs', 'PodDisruptionBudget/ns/p', [{ referent: 'Pod/ns/a', fieldPath: 'spec.selector' }]);
    woken.length = 0;
    filters.dispatchAll('Pod/ns/a', WAKE_CHANGE, (_c, r) => void woken.push(r));
    expect(woken).toEqual(['PodDisruptionBudget/ns/p']);
  });
});
