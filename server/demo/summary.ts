import type { DemoRunView } from './run';

const fmt = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);

/** summaryTable renders a run's figures as the CLI and the benchmark print them. */
export function summaryTable(v: DemoRunView): string {
  const lines: string[] = [];
  const header = [
    'mode',
    'resolved',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'reconciles/App',
    'API requests',
    'requests/App',
  ];
  const rows = (['watch', 'backoff'] as const).map((mode) => {
    const m = v.results.modes[mode];
    const l = m.censoredLatencyMs ?? m.latencyMs;
    const mark = m.censoredLatencyMs ? '*' : '';
    return [
      mode,
      `${m.resolved}/${v.progress.apps.resolvable}${mark}`,
      fmt(l?.p50),
      fmt(l?.p90),
      fmt(l?.p99),
      fmt(l?.max),
      fmt(m.reconciles.perApp, 2),
      String(m.requests.total),
      fmt(m.requests.perApp, 2),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line));
  const s = v.results.speedup;
  lines.push('');
  lines.push(
    `speedup (backoff ÷ watch): p50 ${fmt(s.p50, 1)}x, p90 ${fmt(s.p90, 1)}x, p99 ${fmt(s.p99, 1)}x${s.censored ? ' (backoff censored, so at least this)' : ''}`,
  );
  for (const mode of ['watch', 'backoff'] as const) {
    const m = v.results.modes[mode];
    if (m.censoredLatencyMs) {
      lines.push(
        `* ${mode}: ${m.unresolved} of ${v.progress.apps.resolvable} Apps were still unresolved when the run ended (${v.phase}, ${(v.progress.elapsedMs / 1000).toFixed(1)} s); its percentiles count each of them at the time it had waited so far, censored at the run's end (a lower bound). Over the ${m.resolved} resolved Apps alone: p50 ${fmt(m.latencyMs?.p50)} ms, p99 ${fmt(m.latencyMs?.p99)} ms.`,
      );
    }
  }
  const d = v.results.dangling;
  if (d.total > 0)
    lines.push(
      `dangling: ${d.total} Apps (typo ${d.byKind.typo}, wrong namespace ${d.byKind.wrongNamespace}, kind not installed ${d.byKind.kindNotInstalled}) never resolve; they are reported as stuck, not in the percentiles`,
    );
  const w = v.results.modes.watch.requests;
  const b = v.results.modes.backoff.requests;
  lines.push(
    `API requests: watch ${w.reconcile} by reconciles + ${w.watches} list/watch; backoff ${b.reconcile} by reconciles + ${b.watches} list/watch (the App watch, shared)`,
  );
  if (v.results.apiServer) {
    lines.push(
      `the API server counted ${v.results.apiServer.requests} requests during the run: setup ${v.results.setupRequests}, readiness simulator ${v.results.simulatorRequests}, watch and backoff as above, discovery and the rest ${v.results.apiServer.requests - v.results.setupRequests - v.results.simulatorRequests - w.reconcile - b.reconcile - w.watches}`,
    );
  }
  return lines.join('\n');
}
