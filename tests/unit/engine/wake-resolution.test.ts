import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ControllerOptions, type WakeOn } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { FakeClock } from '@/lib/queue';
import { APP_KIND, app, appKey, dbKey } from './fixtures';

const cacheKey = (name: string) => `Cache.demo.refwatch.dev/shop/${name}`;

/** A Database or Cache shop/NAME whose Ready condition says ready; message changes leave the verdict. */
function referent(
  kind: 'Database' | 'Cache',
  name: string,
  ready: boolean,
  opts: { generation?: number; message?: string } = {},
): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind,
    metadata: { name, namespace: 'shop', generation: opts.generation ?? 1 },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'Provisioned' : 'Provisioning',
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

/**
 * A controller "watch" whose Apps resolve Database shop/orders and Cache
 * shop/sessions, each with the App's wakeOn (spec.wakeOn); `woken` lists the
 * Apps a change queued.
 */
async function rig(
  apps: Record<string, WakeOn>,
  opts: { priming?: 'sync' | 'manual'; controller?: Partial<ControllerOptions> } = {},
) {
  const source = new MemoryInformerSource({ priming: opts.priming ?? 'sync' });
  manager = new Manager({ source, grace: 50, statsIntervalMs: 0 });
  const controller = manager.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: (ctx) => {
      const wakeOn = (ctx.object!.spec as { wakeOn: WakeOn }).wakeOn;
      ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn });
      ctx.resolve(cacheKey('sessions'), 'spec.cacheRef', { wakeOn });
    },
    ...opts.controller,
  });
  const woken = vi.spyOn(controller, 'enqueue');
  manager.start();
  for (const [name, wakeOn] of Object.entries(apps)) source.apply(app(name, { wakeOn }));
  if (opts.priming === 'manual') source.prime('App.demo.refwatch.dev');
  await vi.waitFor(() => expect(manager!.registry.referrersOf(dbKey('orders'))).toHaveLength(Object.keys(apps).length));
  await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  /** wakes applies changes and returns the names of the Apps they queued. */
  const wakes = (change: () => void): string[] => {
    woken.mockClear();
    change();
    return woken.mock.calls.map(([key]) => key.slice(key.lastIndexOf('/') + 1)).sort();
  };
  return { source, controller, wakes };
}

describe("wakeOn 'resolution'", () => {
  it('sleeps through referents appearing not ready, and wakes when the last one turns Ready', async () => {
    const { source, wakes } = await rig({ change: 'change', readiness: 'readiness', resolution: 'resolution' });
    expect(wakes(() => source.apply(referent('Database', 'orders', false)))).toEqual(['change', 'readiness']);
    expect(wakes(() => source.apply(referent('Cache', 'sessions', false)))).toEqual(['change', 'readiness']);
    // The Database turns Ready while the Cache is not: the App cannot have resolved.
    expect(wakes(() => source.apply(referent('Database', 'orders', true)))).toEqual(['change', 'readiness']);
    expect(wakes(() => source.apply(referent('Cache', 'sessions', true)))).toEqual([
      'change',
      'readiness',
      'resolution',
    ]);
  });

  it('says what a sleeping referrer waits for now, without a reconcile: NotFound, then Waiting once its referent exists', async () => {
    const { source, wakes } = await rig({ resolution: 'resolution' });
    const state = () => {
      const r = manager!.changelog.get('referrer', `watch|${appKey('resolution')}`)!;
      return { state: r.state, reason: r.reason, reconciles: r.reconciles };
    };
    const before = state();
    expect(before).toMatchObject({ state: 'NotFound', reason: `NotFound: ${dbKey('orders')}` });
    expect(wakes(() => source.apply(referent('Database', 'orders', false)))).toEqual([]);
    expect(state()).toEqual({
      state: 'NotFound',
      reason: `NotFound: ${cacheKey('sessions')}`,
      reconciles: before.reconciles,
    });
    expect(wakes(() => source.apply(referent('Cache', 'sessions', false)))).toEqual([]);
    expect(state()).toEqual({
      state: 'Waiting',
      reason: `NotReady: ${dbKey('orders')}`,
      reconciles: before.reconciles,
    });
    expect(wakes(() => source.apply(referent('Database', 'orders', true)))).toEqual([]);
    expect(state()).toEqual({
      state: 'Waiting',
      reason: `NotReady: ${cacheKey('sessions')}`,
      reconciles: before.reconciles,
    });
    // The last one turning Ready wakes it; the reconcile reports Resolved.
    expect(wakes(() => source.apply(referent('Cache', 'sessions', true)))).toEqual(['resolution']);
    await vi.waitFor(() => expect(state()).toMatchObject({ state: 'Resolved', reconciles: before.reconciles + 1 }));
  });

  it('wakes when a Ready referent stops being Ready or goes, while the others are Ready; not for a status message or a new spec', async () => {
    const { source, wakes } = await rig({ change: 'change', resolution: 'resolution' });
    source.apply(referent('Database', 'orders', true));
    source.apply(referent('Cache', 'sessions', true));
    expect(wakes(() => source.apply(referent('Database', 'orders', true, { message: 'status only' })))).toEqual([
      'change',
    ]);
    expect(wakes(() => source.apply(referent('Database', 'orders', true, { generation: 2 })))).toEqual(['change']);
    expect(wakes(() => source.apply(referent('Database', 'orders', false, { generation: 2 })))).toEqual([
      'change',
      'resolution',
    ]);
    // Now the Database blocks: the Cache going changes nothing the App waits for.
    expect(wakes(() => source.delete(cacheKey('sessions')))).toEqual(['change']);
    expect(wakes(() => source.apply(referent('Cache', 'sessions', true)))).toEqual(['change']);
    expect(wakes(() => source.apply(referent('Database', 'orders', true, { generation: 2 })))).toEqual([
      'change',
      'resolution',
    ]);
    expect(wakes(() => source.delete(dbKey('orders')))).toEqual(['change', 'resolution']);
  });

  it('a referrer woken by resolution resolves in one reconcile after the last referent turns Ready', async () => {
    const { source, controller } = await rig({ web: 'resolution' });
    const before = controller.stats.reconciles;
    source.apply(referent('Database', 'orders', false));
    source.apply(referent('Cache', 'sessions', false));
    source.apply(referent('Database', 'orders', true));
    source.apply(referent('Cache', 'sessions', true));
    await vi.waitFor(() =>
      expect(manager!.changelog.get('referrer', `watch|${appKey('web')}`)?.state).toBe('Resolved'),
    );
    expect(controller.stats.reconciles).toBe(before + 1);
  });

  it('a cache that primes wakes a resolution referrer only if all its referents are then Ready', async () => {
    const { source, wakes } = await rig({ change: 'change', resolution: 'resolution' }, { priming: 'manual' });
    source.apply(referent('Database', 'orders', false));
    source.apply(referent('Cache', 'sessions', true));
    // The Cache primes first: the Database's cache is not primed, so the Database is not Ready yet.
    expect(wakes(() => source.prime('Cache.demo.refwatch.dev'))).toEqual(['change']);
    // The Database primes not Ready: the App is still blocked.
    expect(wakes(() => source.prime('Database.demo.refwatch.dev'))).toEqual(['change']);
    expect(wakes(() => source.apply(referent('Database', 'orders', true)))).toEqual(['change', 'resolution']);
  });

  it('a cache that primes with every referent Ready wakes a resolution referrer', async () => {
    const { source, wakes } = await rig({ resolution: 'resolution' }, { priming: 'manual' });
    source.apply(referent('Database', 'orders', true));
    source.apply(referent('Cache', 'sessions', true));
    expect(wakes(() => source.prime('Cache.demo.refwatch.dev'))).toEqual([]);
    expect(wakes(() => source.prime('Database.demo.refwatch.dev'))).toEqual(['resolution']);
  });

  it("resolving one referent with 'resolution' and with 'change' wakes on every change, ungated", async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, grace: 50, statsIntervalMs: 0 });
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => {
        ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: 'resolution' });
        ctx.resolve(dbKey('orders'), 'spec.backupRef');
        ctx.resolve(cacheKey('sessions'), 'spec.cacheRef', { wakeOn: 'resolution' });
      },
    });
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(app('web', {}));
    await vi.waitFor(() => expect(manager!.registry.referencesOf('watch', appKey('web'))).toHaveLength(3));
    woken.mockClear();
    source.apply(referent('Database', 'orders', false));
    expect(woken).toHaveBeenCalledTimes(1);
    source.apply(referent('Cache', 'sessions', false));
    expect(woken).toHaveBeenCalledTimes(1);
  });

  it('an observed referent wakes a resolution referrer when it turns Ready, once its watched referents are Ready', async () => {
    const clock = new FakeClock(Date.now());
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, clock, statsIntervalMs: 0 });
    let answer = { exists: true, ready: false, message: 'warming up' };
    manager.addObserver({ kind: 'HealthCheck.probes.example.com', interval: 100, observe: () => answer });
    const controller = manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => {
        ctx.resolve('HealthCheck.probes.example.com/shop/orders', 'spec.healthRef', { wakeOn: 'resolution' });
        ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn: 'resolution' });
      },
    });
    const woken = vi.spyOn(controller, 'enqueue');
    manager.start();
    source.apply(referent('Database', 'orders', false));
    source.apply(app('web', {}));
    await vi.waitFor(() =>
      expect(manager!.registry.referrersOf('HealthCheck.probes.example.com/shop/orders')).toHaveLength(1),
    );
    const HEALTH = 'HealthCheck.probes.example.com/shop/orders';
    /** poll lets one interval pass and waits for the observed state it brings. */
    const poll = async (state: 'Ready' | 'NotReady') => {
      clock.advance(100);
      await vi.waitFor(() => expect(manager!.referenceControllers.resolve(HEALTH, '').state).toBe(state));
    };
    await poll('NotReady'); // the first poll, while the Database is not Ready
    woken.mockClear();
    answer = { exists: true, ready: true, message: '' };
    await poll('Ready');
    expect(woken).not.toHaveBeenCalled();
    answer = { exists: true, ready: false, message: 'flapping' };
    await poll('NotReady');
    source.apply(referent('Database', 'orders', true));
    expect(woken).not.toHaveBeenCalled();
    answer = { exists: true, ready: true, message: '' };
    await poll('Ready');
    expect(woken).toHaveBeenCalledTimes(1);
  });
});

describe('forWakeOn', () => {
  const spec = (extra: Record<string, unknown>, generation: number, status?: object): KubeObject => ({
    ...app('web', { wakeOn: 'change' }),
    metadata: { name: 'web', namespace: 'shop', generation },
    ...extra,
    ...(status ? { status } : {}),
  });

  it("'generation' queues an App when it is created, its spec changes or it goes, not for a status or label write", async () => {
    const { source, controller } = await rig({}, { controller: { forWakeOn: 'generation' } });
    const queued = vi.spyOn(controller.queue, 'add');
    source.apply(spec({}, 1));
    expect(queued).toHaveBeenCalledTimes(1);
    source.apply(spec({}, 1, { resolvedAt: 'now' }));
    source.apply({
      ...spec({}, 1, { resolvedAt: 'now' }),
      metadata: { name: 'web', namespace: 'shop', generation: 1, labels: { touched: 'yes' } },
    });
    expect(queued).toHaveBeenCalledTimes(1);
    source.apply(spec({ spec: { wakeOn: 'change', cacheRef: 'other' } }, 2));
    expect(queued).toHaveBeenCalledTimes(2);
    source.delete(appKey('web'));
    expect(queued).toHaveBeenCalledTimes(3);
  });

  it("'change' (the default) queues an App for every update", async () => {
    const { source, controller } = await rig({});
    const queued = vi.spyOn(controller.queue, 'add');
    source.apply(spec({}, 1));
    source.apply(spec({}, 1, { resolvedAt: 'now' }));
    expect(queued).toHaveBeenCalledTimes(2);
  });

  it('an unknown forWakeOn, or one without `for`, is an error naming the field', () => {
    manager = new Manager({ source: new MemoryInformerSource(), statsIntervalMs: 0 });
    expect(() =>
      manager!.addController({
        name: 'a',
        for: APP_KIND,
        forWakeOn: 'readiness' as 'generation',
        reconcile: () => undefined,
      }),
    ).toThrow(
      expect.objectContaining({
        field: 'forWakeOn',
        message: expect.stringContaining('forWakeOn must be "change" or "generation", got "readiness"'),
      }),
    );
    expect(() => manager!.addController({ name: 'b', forWakeOn: 'generation', reconcile: () => undefined })).toThrow(
      expect.objectContaining({ field: 'forWakeOn', message: expect.stringContaining('give `for`') }),
    );
  });
});
