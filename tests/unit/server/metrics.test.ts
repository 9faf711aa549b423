import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { SharedInformerPool } from '@/lib/kube';
import { FakeClock } from '@/lib/queue';
import { getMetrics } from '@/server/api';
import { createMetrics, type Metrics } from '@/server/metrics';
import type { Runtime } from '@/server/runtime';
import { APP_KIND, app, appKey, database, dbKey } from '../engine/fixtures';

/** A pool with no watches: the gauges read only the manager here. */
const noPool = {
  watches: () => [],
  telemetry: { restartCounts: () => [], relistCounts: () => [] },
} as unknown as SharedInformerPool;

let manager: Manager | undefined;
let metrics: Metrics | undefined;
afterEach(async () => {
  metrics?.detach();
  await manager?.stop();
  manager = undefined;
  metrics = undefined;
});

describe('per-controller metrics', () => {
  it('drop the series of a removed controller, so /metrics does not grow with every controller ever added', async () => {
    const m = (metrics = createMetrics());
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({
      source,
      statsIntervalMs: 0,
      queueMetrics: (controller) => m.queueMetrics(controller),
      hooks: { onResolved: (controller, _key, latencyMs) => m.observeResolution(controller, latencyMs) },
    });
    m.attach(manager, noPool);
    const addRun = (name: string) =>
      manager!.addController({
        name,
        for: APP_KIND,
        reconcile: (ctx) => void ctx.resolve(dbKey('orders'), 'spec.databaseRef'),
      });
    for (const name of ['demo/watch/aaaaaa', 'demo/watch/bbbbbb']) addRun(name);
    manager.start();
    source.apply(database('orders', true));
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(manager!.registry.referrerCount).toBe(2));
    m.reconcileErrors.inc({ controller: 'demo/watch/aaaaaa' });

    const before = await m.registry.metrics();
    for (const metric of [
      'refwatch_queue_adds_total',
      'refwatch_queue_latency_seconds_count',
      'refwatch_reconcile_duration_seconds_count',
      'refwatch_reconcile_errors_total',
    ]) {
      expect(before).toContain(`${metric}{controller="demo/watch/aaaaaa"}`);
    }

    await manager.removeController('demo/watch/aaaaaa');
    const after = await m.registry.metrics();
    expect(after).not.toContain('controller="demo/watch/aaaaaa"');
    // The controller still there keeps its series.
    expect(after).toContain('refwatch_queue_adds_total{controller="demo/watch/bbbbbb"}');
    expect(manager.registry.referrers('demo/watch/bbbbbb').map((r) => r.key)).toEqual([appKey('web')]);

    // Added again under the same name, it counts afresh.
    addRun('demo/watch/aaaaaa');
    await vi.waitFor(async () =>
      expect(await m.registry.metrics()).toContain('refwatch_queue_adds_total{controller="demo/watch/aaaaaa"} 1'),
    );
  });
});

describe('a scrape', () => {
  it('leaves the change log as it was: reading metrics changes no state', async () => {
    const m = (metrics = createMetrics());
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, statsIntervalMs: 0, queueMetrics: (controller) => m.queueMetrics(controller) });
    m.attach(manager, noPool);
    manager.addController({
      name: 'watch',
      for: APP_KIND,
      reconcile: (ctx) => void ctx.resolve(dbKey('orders'), 'spec.databaseRef'),
    });
    manager.start();
    source.apply(database('orders', true));
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(manager!.registry.referrerCount).toBe(1));
    // Queue and reference-controller stats have moved since they were last published: a write would show.
    expect(manager.changelog.get('queue', 'watch')).toBeUndefined();
    const revision = manager.changelog.revision;

    const res = await getMetrics({ manager, metrics: m } as unknown as Runtime);
    const text = await res.text();

    expect(manager.changelog.revision).toBe(revision);
    expect(manager.changelog.get('queue', 'watch')).toBeUndefined();
    // The queue depth is read from the queue itself, so it is there without a published stats entity.
    expect(text).toContain('refwatch_queue_depth{controller="watch"} 0');
  });

  it('stats reach the change log on the engine tick, which stops with the manager', async () => {
    const clock = new FakeClock(Date.now());
    const source = new MemoryInformerSource({ priming: 'sync' });
    manager = new Manager({ source, clock, statsIntervalMs: 500 });
    manager.addController({ name: 'watch', for: APP_KIND, reconcile: () => {} });
    manager.start();
    source.apply(app('web', {}));
    await vi.waitFor(() => expect(manager!.controller('watch')!.stats.reconciles).toBe(1));
    expect(manager.changelog.get('queue', 'watch')).toBeUndefined();
    clock.advance(500);
    expect(manager.changelog.get('queue', 'watch')).toMatchObject({ reconciles: 1 });

    await manager.stop();
    expect(clock.pendingTimers()).toBe(0);
    const revision = manager.changelog.revision;
    clock.advance(5_000);
    expect(manager.changelog.revision).toBe(revision);
  });
});
