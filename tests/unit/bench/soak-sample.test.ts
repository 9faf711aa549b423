import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SharedInformerPool } from '@/lib/kube';
import {
  LEFTOVER_FIGURES,
  leftovers,
  parseSample,
  released,
  settled,
  slopePerHour,
  type Sample,
} from '@/bench/soak/sample';
import { createMetrics, type Metrics } from '@/server/metrics';
import { app, appKey, database, dbKey, harness, type Harness } from '../engine/fixtures';

/** A pool with no watches: the gauges read only the manager here. */
const noPool = {
  watches: () => [],
  telemetry: { restartCounts: () => [], relistCounts: () => [] },
} as unknown as SharedInformerPool;

let h: Harness | undefined;
let metrics: Metrics | undefined;
afterEach(async () => {
  metrics?.detach();
  await h?.manager.stop();
  h = undefined;
  metrics = undefined;
});

async function scrape(): Promise<Sample> {
  return parseSample(await metrics!.registry.metrics(), 0);
}

function sample(over: Partial<Sample>): Sample {
  const zero = Object.fromEntries(
    [
      'elapsedS',
      'rssMB',
      'heapUsedMB',
      'changelogLive',
      'changelogEvents',
      'changelogTombstones',
      'revisionsRetained',
      'referrers',
      'referents',
      'references',
      'watches',
      'referenceControllers',
      'timers',
      'handles',
      'sseClients',
      'metricSeries',
    ].map((k) => [k, 0]),
  );
  return { ...zero, ...over } as Sample;
}

describe('soak samples read from /metrics', () => {
  it('count the registry and the change log as a referrer comes and goes', async () => {
    h = harness();
    metrics = createMetrics();
    metrics.attach(h.manager, noPool);
    // The soak reads a server, whose change log is served and so holds every entity as it goes; a Manager's own
    // log holds referrers, referents and edges only once asked about them. A subscriber asks, as the server's does.
    h.manager.changelog.subscribe(() => undefined);
    h.manager.start();
    const before = await scrape();
    expect(before).toMatchObject({ referrers: 0, referents: 0, references: 0, changelogTombstones: 0 });
    expect(before.rssMB).toBeGreaterThan(10);
    expect(before.heapUsedMB).toBeGreaterThan(1);
    expect(before.metricSeries).toBeGreaterThan(20);

    h.source.apply(database('orders', true));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(h!.manager.registry.referrersOf(dbKey('orders'))).toHaveLength(1));
    const during = await scrape();
    expect(during).toMatchObject({ referrers: 1, referents: 1, references: 1, referenceControllers: 1 });
    expect(during.changelogLive).toBeGreaterThan(before.changelogLive);

    h.source.delete(appKey('web'));
    await vi.waitFor(() => expect(h!.manager.registry.referrersOf(dbKey('orders'))).toHaveLength(0));
    const after = await scrape();
    expect(after).toMatchObject({ referrers: 0, referents: 0, references: 0 });
    // The App's referrer and reference are gone, and held as tombstones until compaction.
    expect(h.manager.changelog.get('referrer', `watch|${appKey('web')}`)).toBeUndefined();
    expect(after.changelogTombstones).toBe(h.manager.changelog.tombstones());
    expect(after.changelogTombstones).toBeGreaterThanOrEqual(2);
    expect(after.revisionsRetained).toBe(h.manager.changelog.revision - h.manager.changelog.compactedRevision);
  });

  it('name the metric a server older than the soak lacks', () => {
    expect(() => parseSample('# HELP x y\n# TYPE x gauge\nx 1\n', 0)).toThrow(
      /no refwatch_process_process_resident_memory_bytes: rebuild the server/,
    );
  });
});

describe('soak figures', () => {
  it('slopePerHour is the least-squares slope per hour', () => {
    // 2 MB per minute, plus noise symmetric about the middle, which a least-squares fit ignores: 120 MB/h.
    const noise = [0.5, -0.5, -0.5, 0.5];
    const samples = [0, 60, 120, 180].map((t, i) => sample({ elapsedS: t, rssMB: 100 + (2 * t) / 60 + noise[i]! }));
    expect(slopePerHour(samples, 'rssMB')).toBeCloseTo(120, 6);
    expect(slopePerHour([sample({ elapsedS: 0, rssMB: 1 }), sample({ elapsedS: 3600, rssMB: 1 })], 'rssMB')).toBe(0);
    expect(slopePerHour([sample({})], 'rssMB')).toBeNaN();
  });

  it('leftovers compare the end with the start, tombstones with none, and settled holds only when none is above', () => {
    const start = sample({ referrers: 3, changelogLive: 10, changelogTombstones: 4 });
    expect(leftovers(start, sample({ referrers: 3, changelogLive: 12, changelogTombstones: 2 }))).toMatchObject({
      referrers: 0,
      changelogLive: 2,
      changelogTombstones: 2,
    });
    expect(settled(start, sample({ referrers: 3, changelogLive: 10 }))).toBe(true);
    for (const figure of LEFTOVER_FIGURES)
      expect(
        settled(start, {
          ...start,
          changelogTombstones: 0,
          [figure]: (figure === 'changelogTombstones' ? 0 : start[figure]) + 1,
        }),
        figure,
      ).toBe(false);
  });

  it('released looks at the registry, watches and reference controllers only', () => {
    const base = sample({ watches: 6, changelogLive: 12 });
    expect(released(base, sample({ watches: 6, changelogLive: 15, changelogTombstones: 700 }))).toBe(true);
    expect(released(base, sample({ watches: 7 }))).toBe(false);
    expect(released(base, sample({ watches: 6, referrers: 1 }))).toBe(false);
    expect(released(base, sample({ watches: 6, referenceControllers: 1 }))).toBe(false);
  });
});
