import type { Summary } from '@/lib/changelog/wire';

export type { Summary, SummaryGroup, SummaryStuck } from '@/lib/changelog/wire';

/**
 * A registry with at most this many references opens straight on the whole
 * graph, as a small cluster or the demo always has; a larger one opens on the
 * overview and loads one scope at a time. 2,000 references is about the
 * most the graph draws readably, and a snapshot of them is a few hundred KB.
 */
export const OVERVIEW_ABOVE_REFERENCES = 2000;

/** What the server is asked for: GET /api/v1/snapshot and /api/v1/stream take the same scope. */
export interface DataScope {
  namespace: string;
  kind: string;
  q: string;
  object: string;
  stuck: boolean;
}

/**
 * DataMode is what the dashboard loads:
 *   overview  the summary alone (stream ?overview=1)
 *   all       the whole registry, as on a small cluster
 *   scoped    one scope's snapshot and the deltas inside it
 */
export type DataMode = { mode: 'overview' } | { mode: 'all' } | { mode: 'scoped'; scope: DataScope };

/** The URL's scope parameters, as the dashboard's view keeps them. */
export interface ScopeParams {
  ns: string;
  kind: string;
  q: string;
  object: string;
  stuck: boolean;
  /** 'overview', 'graph' (everything) or 'scope' (the server's scope) asks for one explicitly; '' lets the registry's size decide. */
  view: string;
}

export function hasScope(p: ScopeParams): boolean {
  return p.ns !== '' || p.kind !== '' || p.q.trim() !== '' || p.object !== '' || p.stuck;
}

/**
 * chooseMode decides what to load. A small registry (or an unknown size:
 * an older server without a summary) loads everything and filters in the
 * browser, as the dashboard always did; a large one loads the overview
 * until a scope is chosen.
 */
export function chooseMode(p: ScopeParams, references: number | undefined): DataMode {
  if (p.view === 'overview' && !hasScope(p)) return { mode: 'overview' };
  if (p.view === 'graph') return { mode: 'all' };
  if (!isLarge(references) && p.view !== 'scope') return { mode: 'all' };
  if (!hasScope(p)) return { mode: 'overview' };
  return { mode: 'scoped', scope: { namespace: p.ns, kind: p.kind, q: p.q.trim(), object: p.object, stuck: p.stuck } };
}

/** isLarge: a registry of this many references opens on the overview. */
export function isLarge(references: number | undefined | null): boolean {
  return typeof references === 'number' && references > OVERVIEW_ABOVE_REFERENCES;
}

/** scopeQuery is the query string both endpoints take for a mode ('' for everything). */
export function scopeQuery(mode: DataMode): string {
  if (mode.mode === 'overview') return '?overview=1';
  if (mode.mode === 'all') return '';
  const q = new URLSearchParams();
  const s = mode.scope;
  if (s.namespace) q.set('namespace', s.namespace);
  if (s.kind) q.set('kind', s.kind);
  if (s.q) q.set('q', s.q);
  if (s.object) q.set('object', s.object);
  if (s.stuck) q.set('stuck', '1');
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** modeKey identifies a mode in the query cache: each scope has its own snapshot. */
export function modeKey(mode: DataMode): string {
  return mode.mode === 'scoped' ? `scoped${scopeQuery(mode)}` : mode.mode;
}

/** isSummary tells a summary from anything else a server may send. */
export function isSummary(v: unknown): v is Summary {
  const s = v as Partial<Summary> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.totals === 'object' &&
    Array.isArray(s.namespaces) &&
    Array.isArray(s.kinds) &&
    Array.isArray(s.stuckList)
  );
}
