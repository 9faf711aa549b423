import { describe, expect, it } from 'vitest';
import { percentile, requiredReadyAts, resolutionLatency, speedup, summarize, toCsv } from '@/server/demo';

describe('percentiles', () => {
  it('uses the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 90)).toBe(90);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes unsorted values, and reports nothing for none', () => {
    expect(summarize([30, 10, 20, 40])).toEqual({ p50: 20, p90: 40, p99: 40, max: 40, mean: 25 });
    expect(summarize([])).toBeNull();
  });

  it('divides backoff by watch for the speedup, guarding a zero watch figure', () => {
    expect(speedup(5000, 5)).toBe(1000);
    expect(speedup(5000, 0)).toBe(5000);
    expect(speedup(undefined, 5)).toBeNull();
    expect(speedup(NaN, 5)).toBeNull();
  });
});

describe('resolution latency', () => {
  it('is measured from the last referent to become ready', () => {
    expect(resolutionLatency(10_050, [9_000, 10_000, 4_000])).toBe(50);
  });

  it('is unknown while a referent is not ready', () => {
    expect(resolutionLatency(10_050, [9_000, undefined])).toBeUndefined();
    expect(resolutionLatency(10_050, [])).toBeUndefined();
  });
});

describe('latency of a churned App', () => {
  const latency = (
    resolvedAt: number,
    ready: { database?: number; secret?: number; cache?: number },
    cacheDroppedAt?: number,
  ) =>
    resolutionLatency(
      resolvedAt,
      requiredReadyAts({ database: ready.database, secret: ready.secret, cache: ready.cache }, cacheDroppedAt),
    );

  it('counts an App freed by the churn patch from the patch, not from its Database and Secret ready long before', () => {
    // Database ready at 1.0 s, Secret at 0, Cache not ready; the patch dropping cacheRef went out at 3.0 s.
    expect(latency(3_012, { database: 1_000, secret: 0 }, 3_000)).toBe(12);
    // Without the churn figure the same App would look 2 s slow in either mode.
    expect(latency(3_012, { database: 1_000, secret: 0, cache: 9_000 }, 3_000)).toBe(12);
  });

  it('counts from the Database when it became ready after the patch', () => {
    expect(latency(5_020, { database: 5_000, secret: 0 }, 3_000)).toBe(20);
  });

  it('counts from the Cache when it was ready before the patch, whoever resolved the App when', () => {
    expect(latency(2_010, { database: 1_000, secret: 0, cache: 2_000 }, 3_000)).toBe(10);
    expect(latency(9_000, { database: 1_000, secret: 0, cache: 2_000 }, 3_000)).toBe(7_000);
  });

  it('waits for the Cache when there was no churn', () => {
    expect(latency(9_005, { database: 1_000, secret: 0, cache: 9_000 })).toBe(5);
    expect(latency(9_005, { database: 1_000, secret: 0 })).toBeUndefined();
  });
});

describe('CSV export', () => {
  it('writes a header and one line per row, quoting what needs it', () => {
    const csv = toCsv(['app', 'note', 'ms'] as const, [
      { app: 'App.demo.refwatch.dev/ns/shop-1', note: 'plain', ms: 12 },
      { app: 'App.demo.refwatch.dev/ns/shop-2', note: 'says "hi", twice', ms: undefined },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'app,note,ms',
      'App.demo.refwatch.dev/ns/shop-1,plain,12',
      'App.demo.refwatch.dev/ns/shop-2,"says ""hi"", twice",',
      '',
    ]);
  });
});
