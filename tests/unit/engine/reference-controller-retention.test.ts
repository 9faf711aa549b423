import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { FakeClock } from '@/lib/queue';
import { createMetrics } from '@/server/metrics';
import { APP_KIND, app, appKey, database } from './fixtures';

const NAMESPACES = 500;
const GRACE = 1_000;
const RETENTION = 60_000;
const DB = 'Database.demo.refwatch.dev';

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/**
 * A manager watching per namespace: each namespace's first reference starts a
 * reference controller of its own, as the `namespaces` option or a Forbidden
 * cluster-wide list does.
 */
function rig(opts: { maxCancelled?: number; namespaces: string[] }) {
  const clock = new FakeClock(1_000_000);
  const source = new MemoryInformerSource({ priming: 'sync' });
  // Tombstones age on the same clock, so compact() lets them go within the test.
  const changelog = new ChangeLog({ now: () => clock.now() });
  const m = (manager = new Manager({
    source,
    clock,
    changelog,
    grace: GRACE,
    cancelledRetention: RETENTION,
    statsIntervalMs: 0,
    namespaces: opts.namespaces,
    ...(opts.maxCancelled !== undefined ? { maxCancelled: opts.maxCancelled } : {}),
  }));
  m.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: (ctx) => {
      const ref = (ctx.object?.spec as { databaseRef?: string } | undefined)?.databaseRef;
      if (ref) ctx.resolve(`${DB}/${ctx.object!.metadata.namespace}/${ref}`, 'spec.databaseRef');
    },
  });
  m.start();
  const metrics = createMetrics();
  metrics.attach(m, { watches: () => [], telemetry: { restartCounts: () => [], relistCounts: () => [] } } as never);
  const counted = async () => {
    const text = await metrics.registry.metrics();
    let n = 0;
    for (const line of text.split('\n'))
      if (line.startsWith('refwatch_reference_controllers{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
    return n;
  };
  const idle = () =>
    vi.waitFor(() => expect(m.controller('watch')!.queue.stats()).toMatchObject({ depth: 0, processing: 0 }), {
      timeout: 20_000,
    });
  /** One namespace's life: an App and its Database appear, resolve, and go again. */
  const cycle = async (namespaces: string[]) => {
    for (const ns of namespaces) {
      source.apply(database('orders', true, ns));
      source.apply(app('web', { databaseRef: 'orders' }, ns));
    }
    await idle();
    for (const ns of namespaces) expect(m.referenceControllers.state(DB, ns)).toBe('Active');
    for (const ns of namespaces) {
      source.delete(appKey('web', ns));
      source.delete(`${DB}/${ns}/orders`);
    }
    await idle();
    clock.advance(GRACE);
  };
  const finish = () => {
    clock.advance(RETENTION);
    clock.advance(120_000); // past the change log's tombstone retention
    m.changelog.compact();
  };
  return { m, clock, source, metrics, counted, cycle, finish };
}

function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

const names = (from: number, n: number) => Array.from({ length: n }, (_, i) => `ns-${from + i}`);

describe('cancelled reference controllers', () => {
  it('500 namespaces come and go: controllers, change-log entries, the metric and the heap return to their start', async () => {
    const all = names(0, 3 * NAMESPACES);
    const { m, counted, cycle, finish, metrics } = rig({ namespaces: all });
    try {
      // A first round warms what the engine keeps for good (code, hidden classes, map capacity).
      await cycle(all.slice(0, NAMESPACES));
      finish();
      expect(m.referenceControllers.entities()).toEqual([]);
      const heap0 = heapAfterGc();
      const entities0 = m.changelog.size();

      await cycle(all.slice(NAMESPACES, 2 * NAMESPACES));
      // Cancelled and still listed within the retention window: the dashboard shows recent cancellations.
      expect(m.referenceControllers.state(DB, `ns-${2 * NAMESPACES - 1}`)).toBe('Cancelled');
      expect(m.referenceControllers.state(DB, `ns-${NAMESPACES}`)).toBeUndefined();
      expect(m.changelog.size('controller')).toBe(100); // the default maxCancelled
      await cycle(all.slice(2 * NAMESPACES));
      finish();

      expect(m.referenceControllers.entities()).toEqual([]);
      expect(m.changelog.size('controller')).toBe(0);
      expect(await counted()).toBe(0);
      expect(m.changelog.size()).toBe(entities0);
      const grown = heapAfterGc() - heap0;
      // A thousand controllers kept would hold megabytes; what is left is allocator noise.
      expect(grown).toBeLessThan(1_000_000);
    } finally {
      metrics.detach();
    }
  }, 120_000);

  it('keeps at most maxCancelled, the oldest cancellation going first, and forgets each after the retention', async () => {
    const { m, clock, cycle } = rig({ namespaces: names(0, 5), maxCancelled: 3 });
    await cycle(['ns-0', 'ns-1']);
    await cycle(['ns-2', 'ns-3', 'ns-4']);
    expect(['ns-0', 'ns-1', 'ns-2', 'ns-3', 'ns-4'].map((ns) => m.referenceControllers.state(DB, ns))).toEqual([
      undefined,
      undefined,
      'Cancelled',
      'Cancelled',
      'Cancelled',
    ]);
    expect(m.changelog.get('controller', `${DB}/ns-0`)).toBeUndefined();
    clock.advance(RETENTION);
    expect(m.changelog.size('controller')).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a controller referenced again within the retention is the same one, started again, and stays', async () => {
    const { m, clock, source, cycle } = rig({ namespaces: ['shop'] });
    await cycle(['shop']);
    expect(m.referenceControllers.state(DB, 'shop')).toBe('Cancelled');
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(m.referenceControllers.state(DB, 'shop')).toBe('Active'));
    clock.advance(RETENTION * 2);
    expect(m.referenceControllers.state(DB, 'shop')).toBe('Active');
    const history = m.changelog.get('controller', `${DB}/shop`)!.history.map((h) => h.reason);
    expect(history).toContain('referenced again after cancellation');
  });

  it('refuses a negative retention, naming the option', () => {
    expect(() => new Manager({ source: new MemoryInformerSource(), maxCancelled: -1 })).toThrow(
      /maxCancelled must be a finite number of controllers >= 0, got -1/,
    );
  });
});
