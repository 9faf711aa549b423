import { apiFetch } from './access';
import { apiErrorMessage } from './apiError';
import type { TimelineTransition } from '../panels/timeline';

/** Why the server could not read something; rule is the RBAC rule to grant when Forbidden. */
export interface DetailsProblem {
  reason: string;
  message: string;
  rule?: string;
}

export interface DetailsOwner {
  key: string;
  kind: string;
  name: string;
  controller: boolean;
}

export interface DetailsEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  at: number;
  source: string;
}

export interface DetailsTransition {
  at: number;
  role: string;
  controller?: string;
  state: string;
  reason?: string;
  message?: string;
}

export interface DetailsFix {
  referent: string;
  fieldPath: string;
  state: string;
  message: string;
  fix: string;
  commands: string[];
}

/** The answer of GET /api/v1/objects?key=KEY (docs/api.md), read defensively. */
export interface ObjectDetailsView {
  key: string;
  source: string;
  yaml?: string;
  objectProblem?: DetailsProblem;
  ownerReferences: DetailsOwner[];
  events: DetailsEvent[];
  eventsProblem?: DetailsProblem;
  history: DetailsTransition[];
  fixes: DetailsFix[];
  /** The stored timeline (docs/history.md), oldest first; absent when the server keeps no history. */
  timeline?: TimelineTransition[];
  timelineProblem?: string;
}

export async function fetchObjectDetails(key: string, signal?: AbortSignal): Promise<ObjectDetailsView> {
  const res = await apiFetch(`/api/v1/objects?key=${encodeURIComponent(key)}`, {
    signal,
    headers: { accept: 'application/json' },
    cache: 'no-store',
  });
  if (!res.ok) throw new Error(await apiErrorMessage(res, 'object details'));
  return parseObjectDetails(await res.json(), key);
}

type Rec = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : '');
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const records = (v: unknown): Rec[] =>
  Array.isArray(v) ? v.filter((r): r is Rec => r !== null && typeof r === 'object') : [];

function problem(v: unknown): DetailsProblem | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const p = v as Rec;
  return { reason: str(p.reason), message: str(p.message), ...(typeof p.rule === 'string' ? { rule: p.rule } : {}) };
}

/** parseObjectDetails never throws: a missing or mistyped field reads as empty, so the panel shows what it can. */
export function parseObjectDetails(raw: unknown, key: string): ObjectDetailsView {
  const o = (raw ?? {}) as Rec;
  const objectProblem = problem(o.objectProblem);
  const eventsProblem = problem(o.eventsProblem);
  return {
    key: str(o.key) || key,
    source: str(o.source) || 'none',
    ...(typeof o.yaml === 'string' ? { yaml: o.yaml } : {}),
    ...(objectProblem ? { objectProblem } : {}),
    ownerReferences: records(o.ownerReferences).map((r) => ({
      key: str(r.key),
      kind: str(r.kind),
      name: str(r.name),
      controller: r.controller === true,
    })),
    events: records(o.events).map((e) => ({
      type: str(e.type),
      reason: str(e.reason),
      message: str(e.message),
      count: num(e.count) || 1,
      at: num(e.at),
      source: str(e.source),
    })),
    ...(eventsProblem ? { eventsProblem } : {}),
    history: records(o.history).map((t) => ({
      at: num(t.at),
      role: str(t.role),
      state: str(t.state),
      ...(typeof t.controller === 'string' ? { controller: t.controller } : {}),
      ...(typeof t.reason === 'string' ? { reason: t.reason } : {}),
      ...(typeof t.message === 'string' ? { message: t.message } : {}),
    })),
    ...(Array.isArray(o.timeline)
      ? {
          timeline: records(o.timeline).map((t) => ({
            id: num(t.id),
            at: num(t.at),
            type: str(t.type),
            object: str(t.object),
            state: str(t.state),
            ...(typeof t.reason === 'string' ? { reason: t.reason } : {}),
            ...(typeof t.message === 'string' ? { message: t.message } : {}),
            ...(typeof t.related === 'string' ? { related: t.related } : {}),
            ...(typeof t.manager === 'string' ? { manager: t.manager } : {}),
            ...(typeof t.controller === 'string' ? { controller: t.controller } : {}),
          })),
        }
      : {}),
    ...(typeof o.timelineProblem === 'string' ? { timelineProblem: o.timelineProblem } : {}),
    fixes: records(o.fixes).map((f) => ({
      referent: str(f.referent),
      fieldPath: str(f.fieldPath),
      state: str(f.state),
      message: str(f.message),
      fix: str(f.fix),
      commands: Array.isArray(f.commands) ? f.commands.filter((c): c is string => typeof c === 'string') : [],
    })),
  };
}
