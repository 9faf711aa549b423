import type { Percentiles } from '../../lib/demo/wire';
export type { Percentiles };

/** percentile is the nearest-rank percentile of an ascending array; NaN when it is empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** summarize returns the percentiles of values, or null when there are none. */
export function summarize(values: readonly number[]): Percentiles | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: Math.round((sum / sorted.length) * 10) / 10,
  };
}

/**
 * resolutionLatency is how long after its last referent became ready a
 * controller resolved an App: resolvedAt − max(readyAt), all epoch ms.
 * Undefined when a referent has no readyAt yet (it is not ready).
 */
export function resolutionLatency(resolvedAt: number, readyAts: readonly (number | undefined)[]): number | undefined {
  let last = -Infinity;
  for (const t of readyAts) {
    if (t === undefined) return undefined;
    if (t > last) last = t;
  }
  return last === -Infinity ? undefined : resolvedAt - last;
}

/** When an App's referents became ready (epoch ms); undefined while one is not. */
export interface AppReadyAts {
  database: number | undefined;
  secret: number | undefined;
  cache: number | undefined;
}

/**
 * requiredReadyAts lists the times an App's resolution waited for, for
 * resolutionLatency. An App needs its Database, its Secret and its Cache; once
 * the churn patch dropped its cacheRef (sent at cacheDroppedAt) it needs the
 * Cache no longer, so it waited for the earlier of the Cache's readiness and
 * the patch: an App freed by the patch is timed from the patch, never from a
 * Database or Secret that was ready long before.
 */
export function requiredReadyAts(ready: AppReadyAts, cacheDroppedAt?: number): (number | undefined)[] {
  let cache = ready.cache;
  if (cacheDroppedAt !== undefined) cache = cache === undefined ? cacheDroppedAt : Math.min(cache, cacheDroppedAt);
  return [ready.database, ready.secret, cache];
}

/** speedup is how many times slower backoff is than watch at a percentile; null when either is missing or watch is 0. */
export function speedup(backoff: number | undefined, watch: number | undefined): number | null {
  if (backoff === undefined || watch === undefined || !Number.isFinite(backoff) || !Number.isFinite(watch)) return null;
  return Math.round((backoff / Math.max(watch, 1)) * 10) / 10;
}

function csvField(v: unknown): string {
  if (v === undefined || v === null) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** toCsv writes rows as RFC 4180 CSV with a header of the given columns. */
export function toCsv<T extends object>(columns: readonly (keyof T & string)[], rows: readonly T[]): string {
  const lines = [columns.join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}
