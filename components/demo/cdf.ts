/** A point of an empirical CDF: `y` of the Apps resolved within `x` ms. */
export interface CdfPoint {
  x: number;
  y: number;
}

export interface CdfOptions {
  /** Plotting budget per series; the last point is always kept. Default 400. */
  maxPoints?: number;
  /** Latencies below this are drawn at it: a log axis has no 0. Default 1 ms. */
  minX?: number;
}

/**
 * cdfPoints turns ascending latencies into the points of a step CDF. `y` is
 * the share of `total` (the Apps that can resolve), so a mode that has not
 * resolved every App yet ends below 1 instead of pretending it is done.
 */
export function cdfPoints(sorted: readonly number[], total: number, opts: CdfOptions = {}): CdfPoint[] {
  const minX = opts.minX ?? 1;
  const maxPoints = Math.max(2, opts.maxPoints ?? 400);
  const n = sorted.length;
  if (n === 0) return [];
  const denominator = Math.max(total, n);
  const points: CdfPoint[] = [];
  for (let i = 0; i < n; i++) {
    const v = sorted[i]!;
    if (i + 1 < n && sorted[i + 1] === v) continue; // only the last of equal values carries the step
    const x = Math.max(minX, v);
    const y = (i + 1) / denominator;
    const prev = points[points.length - 1];
    if (prev && prev.x === x) prev.y = y;
    else points.push({ x, y });
  }
  if (points.length <= maxPoints) return points;
  const out: CdfPoint[] = [];
  const step = (points.length - 1) / (maxPoints - 1);
  for (let k = 0; k < maxPoints; k++) out.push(points[Math.round(k * step)]!);
  return out;
}

/**
 * logAxisRange is the x range that holds every series, widened to whole
 * decades, so the axis moves in steps while a run fills in rather than on
 * every poll.
 */
export function logAxisRange(series: readonly (readonly number[])[], minX = 1): { min: number; max: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    for (const v of s) {
      const x = Math.max(minX, v);
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  if (!Number.isFinite(lo)) return { min: minX, max: Math.max(minX * 10, 1000) };
  const min = 10 ** Math.floor(Math.log10(lo));
  let max = 10 ** Math.ceil(Math.log10(hi));
  if (max <= min) max = min * 10;
  return { min: Math.max(min, minX), max };
}
