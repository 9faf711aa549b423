import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** Sample is what the soak reads from the server's /metrics at one moment. */
export interface Sample {
  /** Seconds since the soak started. */
  elapsedS: number;
  rssMB: number;
  heapUsedMB: number;
  /** Live change-log entities, events excluded: events are a ring of fixed size, not state. */
  changelogLive: number;
  changelogEvents: number;
  changelogTombstones: number;
  revisionsRetained: number;
  referrers: number;
  referents: number;
  references: number;
  watches: number;
  /** Reference controllers not cancelled. */
  referenceControllers: number;
  timers: number;
  /** Active handles and requests other than timers (sockets, servers, file requests). */
  handles: number;
  sseClients: number;
  /** Series on /metrics: labels of things that are gone must not stay. */
  metricSeries: number;
}

/** The figures compared at the end of a soak against its start; each must come back to where it was. */
export const LEFTOVER_FIGURES = [
  'changelogLive',
  'changelogTombstones',
  'referrers',
  'referents',
  'references',
  'watches',
  'referenceControllers',
] as const satisfies readonly (keyof Sample)[];
export type LeftoverFigure = (typeof LEFTOVER_FIGURES)[number];

interface Family {
  name: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

/**
 * parseSample reads one scrape of /metrics (the refwatch_* gauges and the
 * process metrics prom-client collects under the refwatch_process_ prefix).
 * A missing family is an error naming it: the server is older than this soak.
 */
export function parseSample(text: string, elapsedS: number): Sample {
  const families = new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
  const sum = (name: string, where: (labels: Record<string, string>) => boolean = () => true): number => {
    const f = families.get(name);
    if (!f) throw new Error(`/metrics has no ${name}: rebuild the server (npm run build) so it matches this soak`);
    let total = 0;
    for (const m of f.metrics) if (where(m.labels ?? {})) total += Number(m.value ?? 0);
    return total;
  };
  const MB = 1024 * 1024;
  return {
    elapsedS,
    rssMB: sum('refwatch_process_process_resident_memory_bytes') / MB,
    heapUsedMB: sum('refwatch_process_nodejs_heap_size_used_bytes') / MB,
    changelogLive: sum('refwatch_changelog_entities', (l) => l.state === 'live' && l.entity !== 'event'),
    changelogEvents: sum('refwatch_changelog_entities', (l) => l.state === 'live' && l.entity === 'event'),
    changelogTombstones: sum('refwatch_changelog_entities', (l) => l.state === 'tombstone'),
    revisionsRetained: sum('refwatch_changelog_revisions_retained'),
    referrers: sum('refwatch_referrers'),
    referents: sum('refwatch_referents'),
    references: sum('refwatch_references'),
    watches: sum('refwatch_watches'),
    referenceControllers: sum('refwatch_reference_controllers', (l) => l.state !== 'Cancelled'),
    timers: sum('refwatch_process_nodejs_active_resources', (l) => l.type === 'Timeout'),
    handles: sum('refwatch_process_nodejs_active_resources', (l) => l.type !== 'Timeout'),
    sseClients: sum('refwatch_sse_clients'),
    metricSeries: [...families.values()].reduce((n, f) => n + f.metrics.length, 0),
  };
}

/** slopePerHour is the least-squares slope of a figure over elapsed time, per hour; NaN with fewer than two points. */
export function slopePerHour(samples: readonly Sample[], figure: keyof Sample): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const xs = samples.map((s) => s.elapsedS / 3600);
  const ys = samples.map((s) => s[figure]);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

/**
 * leftovers is, per figure, how far the end is above the start (negative:
 * below). Tombstones are counted whole: they outlive a deletion only for the
 * change log's retention, so once that passed none may remain, whatever the
 * start held.
 */
export function leftovers(start: Sample, end: Sample): Record<LeftoverFigure, number> {
  const left = Object.fromEntries(LEFTOVER_FIGURES.map((f) => [f, end[f] - start[f]])) as Record<
    LeftoverFigure,
    number
  >;
  left.changelogTombstones = end.changelogTombstones;
  return left;
}

/** settled: every leftover figure is back at or below its start, and no tombstone is left. */
export function settled(start: Sample, now: Sample): boolean {
  return Object.values(leftovers(start, now)).every((d) => d <= 0);
}

/** The engine's state that a deleted run releases at once (after the watches' grace), tombstones aside. */
const RELEASED = [
  'referrers',
  'referents',
  'references',
  'watches',
  'referenceControllers',
] as const satisfies readonly LeftoverFigure[];

/** released: the registry, the watches and the reference controllers are back at or below `base`. */
export function released(base: Sample, now: Sample): boolean {
  return RELEASED.every((f) => now[f] <= base[f]);
}

/** formatSample is the progress line printed per sample. */
export function formatSample(s: Sample, extra = ''): string {
  const m = Math.floor(s.elapsedS / 60);
  const sec = Math.round(s.elapsedS % 60);
  return (
    `soak ${String(m).padStart(3)}m${String(sec).padStart(2, '0')}s  rss ${s.rssMB.toFixed(1)} MB  heap ${s.heapUsedMB.toFixed(1)} MB  ` +
    `changelog ${s.changelogLive} live/${s.changelogTombstones} tomb/${s.changelogEvents} ev/${s.revisionsRetained} rev  ` +
    `registry ${s.referrers}/${s.referents}/${s.references}  watches ${s.watches}  rc ${s.referenceControllers}  ` +
    `timers ${s.timers}  handles ${s.handles}  sse ${s.sseClients}  series ${s.metricSeries}${extra ? `  ${extra}` : ''}`
  );
}
