import { replaceEqualDeep } from '@tanstack/react-query';
import { LEAN_MEDIA_TYPE, decodeSnapshot } from '@/lib/changelog/codec';
import type { Snapshot, Summary } from '@/lib/changelog/wire';
import { apiFetch } from './access';
import { isSummary } from './scope';

export const SNAPSHOT_QUERY_KEY = ['snapshot'] as const;

/**
 * Snapshots the stream's deltas made. applyDeltas keeps every entity a delta does not name, so the query need not
 * compare such a snapshot with the last one, entity by entity, to share what did not change (its structural
 * sharing: a pass over every entity in each frame that applies a batch). A fetched snapshot is still compared.
 */
const fromDeltas = new WeakSet<Snapshot>();

/** markFromDeltas notes a snapshot that applyDeltas made, before it goes into the query. */
export function markFromDeltas(snapshot: Snapshot): void {
  fromDeltas.add(snapshot);
}

/** shareStructure is the snapshot query's structural sharing: none for a snapshot the deltas made, else the query's own. */
export function shareStructure(previous: unknown, next: unknown): unknown {
  return typeof next === 'object' && next !== null && fromDeltas.has(next as Snapshot)
    ? next
    : replaceEqualDeep(previous, next);
}

/** ApiError carries the HTTP status so the UI can tell "no such API yet" from "server down". */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** fetchSnapshot reads GET /api/v1/snapshot, of one scope when `query` (e.g. `?namespace=shop`) says so. */
export async function fetchSnapshot(signal?: AbortSignal, query = ''): Promise<Snapshot> {
  const res = await apiFetch(`/api/v1/snapshot${query}`, {
    signal,
    headers: { accept: LEAN_MEDIA_TYPE },
    cache: 'no-store',
  });
  if (!res.ok) throw new ApiError(`GET /api/v1/snapshot answered ${res.status} ${res.statusText}`.trim(), res.status);
  const body: unknown = await res.json();
  try {
    return normalizeSnapshot(decodeSnapshot(body));
  } catch (e) {
    throw new ApiError(`GET /api/v1/snapshot: ${e instanceof Error ? e.message : String(e)}`, 0);
  }
}

export const SUMMARY_QUERY_KEY = ['summary'] as const;

/** fetchSummary reads GET /api/v1/summary; a server without one answers 404, and the dashboard then loads everything. */
export async function fetchSummary(signal?: AbortSignal): Promise<Summary> {
  const res = await apiFetch('/api/v1/summary', { signal, headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new ApiError(`GET /api/v1/summary answered ${res.status} ${res.statusText}`.trim(), res.status);
  const body: unknown = await res.json();
  if (!isSummary(body)) throw new ApiError('GET /api/v1/summary did not answer a summary', 0);
  return body;
}

/**
 * normalizeSnapshot fills missing arrays with empty ones so one absent field
 * from a newer or older server does not blank the whole dashboard.
 */
export function normalizeSnapshot(raw: unknown): Snapshot {
  if (raw === null || typeof raw !== 'object') throw new ApiError('snapshot is not a JSON object', 0);
  const s = raw as Partial<Snapshot>;
  const arr = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v : []);
  return {
    revision: typeof s.revision === 'number' ? s.revision : 0,
    cluster: s.cluster ?? {
      mode: 'embedded',
      server: '',
      reachable: false,
      message: 'the snapshot carried no cluster information',
    },
    controllers: arr(s.controllers),
    watches: arr(s.watches),
    referrers: arr(s.referrers),
    referents: arr(s.referents),
    references: arr(s.references),
    queues: arr(s.queues),
    events: arr(s.events),
    stuck: arr(s.stuck),
    ...(typeof s.stuckThresholdMs === 'number' && Number.isFinite(s.stuckThresholdMs) && s.stuckThresholdMs >= 0
      ? { stuckThresholdMs: s.stuckThresholdMs }
      : {}),
  };
}
