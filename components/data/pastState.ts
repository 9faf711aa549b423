import type {
  ReferenceControllerEntity,
  ReferenceEntity,
  ReferentEntity,
  ReferrerEntity,
  ReferentState,
  ReferrerState,
  ReferenceControllerState,
} from '@/lib/changelog/entities';
import type { Snapshot } from '@/lib/changelog/wire';
import { kindOfKey, namespaceOfKey } from '@/lib/model/keys';
import { apiFetch } from './access';
import { ApiError } from './snapshotQuery';

/** One recorded state as GET /api/v1/history/state returns it (docs/api.md). */
export interface RecordedState {
  id: number;
  at: number;
  type: 'referrer' | 'referent' | 'reference' | 'controller' | 'warning';
  object: string;
  namespace: string;
  state: string;
  reason?: string;
  message?: string;
  related?: string;
  resourceVersion?: string;
  manager?: string;
  controller?: string;
}

/** PastState is what the history knew at one instant: the last recorded state of everything. */
export interface PastState {
  cluster: string;
  at: number;
  namespace?: string;
  states: RecordedState[];
}

/** fetchPastState reads GET /api/v1/history/state at an instant (epoch ms), of one namespace when given. */
export async function fetchPastState(at: number, namespace: string, signal?: AbortSignal): Promise<PastState> {
  const q = new URLSearchParams({ at: String(Math.floor(at)) });
  if (namespace) q.set('namespace', namespace);
  const res = await apiFetch(`/api/v1/history/state?${q.toString()}`, {
    signal,
    headers: { accept: 'application/json' },
    cache: 'no-store',
  });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
    throw new ApiError(body.error?.message ?? `GET /api/v1/history/state answered ${res.status}`, res.status);
  }
  return (await res.json()) as PastState;
}

/**
 * pastSnapshot draws a past moment with the live dashboard's own model: the
 * recorded states become a snapshot of referrers, referents, references and
 * reference controllers as they were at `past.at`. It takes from the live
 * snapshot only what history does not record (the cluster, the stuck
 * threshold), so live updates never change the past view.
 */
export function pastSnapshot(past: PastState, live: Pick<Snapshot, 'cluster' | 'stuckThresholdMs'>): Snapshot {
  const referrers: ReferrerEntity[] = [];
  const referents: ReferentEntity[] = [];
  const references: ReferenceEntity[] = [];
  const controllers: ReferenceControllerEntity[] = [];
  for (const s of past.states) {
    switch (s.type) {
      case 'referrer': {
        const controller = s.controller ?? '';
        const r: ReferrerEntity = {
          id: `${controller}|${s.object}`,
          key: s.object,
          controller,
          kind: kindOfKey(s.object),
          namespace: s.namespace,
          state: s.state as ReferrerState,
          since: s.at,
          references: 0,
          reconciles: 0,
        };
        // The engine's reason names the referent that holds it up: "<state>: <referent>".
        const reason = s.related !== undefined ? `${s.reason ?? s.state}: ${s.related}` : s.reason;
        if (reason !== undefined) r.reason = reason;
        if (s.message !== undefined) r.message = s.message;
        referrers.push(r);
        break;
      }
      case 'referent': {
        const r: ReferentEntity = {
          id: s.object,
          key: s.object,
          kind: kindOfKey(s.object),
          namespace: s.namespace,
          state: s.state as ReferentState,
          referencedBy: 0,
          changedAt: s.at,
        };
        if (s.message !== undefined) r.message = s.message;
        if (s.resourceVersion !== undefined) r.resourceVersion = s.resourceVersion;
        if (s.manager !== undefined) r.manager = s.manager;
        referents.push(r);
        break;
      }
      case 'reference': {
        if (s.state !== 'Added' || s.related === undefined) break;
        const controller = s.controller ?? '';
        const fieldPath = s.message ?? '';
        references.push({
          id: `${controller}|${s.object}|${s.related}|${fieldPath}`,
          controller,
          referrer: s.object,
          referent: s.related,
          fieldPath,
          count: 1,
          kind: kindOfKey(s.related),
          namespace: namespaceOfKey(s.object),
        });
        break;
      }
      case 'controller': {
        if (s.state === 'Cancelled') break;
        const c: ReferenceControllerEntity = {
          id: s.object,
          kind: kindOfKey(s.object),
          state: s.state as ReferenceControllerState,
          reason: s.reason ?? '',
          references: 0,
          referents: 0,
          startedAt: s.at,
          dispatches: 0,
          errors: [],
          history: [],
        };
        if (s.namespace) c.namespace = s.namespace;
        controllers.push(c);
        break;
      }
      default:
        break;
    }
  }
  const referencesOf = new Map<string, number>();
  const referencedBy = new Map<string, number>();
  for (const r of references) {
    const id = `${r.controller}|${r.referrer}`;
    referencesOf.set(id, (referencesOf.get(id) ?? 0) + 1);
    referencedBy.set(r.referent, (referencedBy.get(r.referent) ?? 0) + 1);
  }
  for (const r of referrers) r.references = referencesOf.get(r.id) ?? 0;
  for (const r of referents) r.referencedBy = referencedBy.get(r.key) ?? 0;
  return {
    revision: 0,
    cluster: live.cluster,
    controllers,
    watches: [],
    referrers,
    referents,
    references,
    queues: [],
    events: [],
    stuck: [],
    ...(live.stuckThresholdMs !== undefined ? { stuckThresholdMs: live.stuckThresholdMs } : {}),
  };
}
