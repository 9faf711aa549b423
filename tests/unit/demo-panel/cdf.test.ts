import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cdfPoints, logAxisRange } from '@/components/demo/cdf';

describe('cdfPoints', () => {
  it('steps at each distinct latency, as a share of the Apps that can resolve', () => {
    expect(cdfPoints([5, 5, 10, 40], 8)).toEqual([
      { x: 5, y: 2 / 8 },
      { x: 10, y: 3 / 8 },
      { x: 40, y: 4 / 8 },
    ]);
  });

  it('ends at 1 once every App resolved, and below 1 while some still wait', () => {
    expect(cdfPoints([1, 2, 3], 3).at(-1)!.y).toBe(1);
    expect(cdfPoints([1, 2, 3], 6).at(-1)!.y).toBe(0.5);
  });

  it('draws 0 ms latencies at the log axis floor, merged into one step', () => {
    expect(cdfPoints([0, 0, 1, 7], 4)).toEqual([
      { x: 1, y: 3 / 4 },
      { x: 7, y: 1 },
    ]);
  });

  it('is empty before the first resolution', () => {
    expect(cdfPoints([], 100)).toEqual([]);
  });

  it('never claims more than 100 % when more latencies than expected arrive', () => {
    expect(cdfPoints([1, 2, 3, 4], 2).at(-1)!.y).toBe(1);
  });

  it('keeps within the point budget, monotonic, ending at the true last point', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 3000 }),
        fc.integer({ min: 2, max: 300 }),
        (raw, budget) => {
          const sorted = [...raw].sort((a, b) => a - b);
          const full = cdfPoints(sorted, sorted.length, { maxPoints: 1_000_000 });
          const pts = cdfPoints(sorted, sorted.length, { maxPoints: budget });
          expect(pts.length).toBeLessThanOrEqual(budget);
          expect(pts.at(-1)).toEqual(full.at(-1));
          expect(pts[0]).toEqual(full[0]);
          for (let i = 1; i < pts.length; i++) {
            expect(pts[i]!.x).toBeGreaterThan(pts[i - 1]!.x);
            expect(pts[i]!.y).toBeGreaterThan(pts[i - 1]!.y);
          }
        },
      ),
    );
  });
});

describe('logAxisRange', () => {
  it('spans whole decades around both series', () => {
    expect(
      logAxisRange([
        [3, 40],
        [250, 12_000],
      ]),
    ).toEqual({ min: 1, max: 100_000 });
    expect(logAxisRange([[15], [900]])).toEqual({ min: 10, max: 1000 });
  });

  it('gives a decade even for one value on a power of ten', () => {
    expect(logAxisRange([[100], []])).toEqual({ min: 100, max: 1000 });
  });

  it('has a default range while nothing resolved yet', () => {
    const r = logAxisRange([[], []]);
    expect(r.min).toBe(1);
    expect(r.max).toBeGreaterThan(r.min);
  });
});
