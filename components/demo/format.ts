/** formatLatency prints milliseconds the way the demo's table reads: 4 ms, 1.25 s, 12.5 s, 2.1 min; '—' when unknown. */
export function formatLatency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 10_000) return `${(v / 1000).toFixed(2)} s`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`;
  return `${(v / 60_000).toFixed(1)} min`;
}

/**
 * formatSpeedup prints backoff ÷ watch: "230×", "12.5×". A censored figure
 * (backoff still had Apps waiting) is a lower bound and reads "≥ 230×".
 */
export function formatSpeedup(x: number | null | undefined, censored = false): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const n = x >= 100 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(0) : x.toFixed(1);
  return `${censored ? '≥ ' : ''}${n}×`;
}

/** formatPerApp prints a per-App ratio with two decimals at most: 3, 3.5, 3.25. */
export function formatPerApp(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return String(Math.round(x * 100) / 100);
}

/** formatCount prints a whole count with thousands separators. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/** share is done/total as a 0..1 fraction for a progress bar; 0 when there is nothing to do. */
export function share(done: number, total: number): number {
  if (!(total > 0)) return 0;
  return Math.min(1, Math.max(0, done / total));
}

const PHASE_TEXT: Record<string, string> = {
  Creating: 'Creating objects',
  Running: 'Running',
  Completed: 'Completed',
  TimedOut: 'Timed out',
  Stopped: 'Stopped',
  Failed: 'Failed',
};

export function phaseText(phase: string): string {
  return PHASE_TEXT[phase] ?? phase;
}
