import type { RootCause } from '@/lib/changelog/wire';
import { apiFetch } from './access';
import { apiErrorMessage } from './apiError';

/**
 * The explain answer for one object, read defensively: the endpoint's shape
 * may grow, and a field missing from it must not break the inspector.
 */
export interface ExplainReference {
  referent: string;
  fieldPath: string;
  state: string;
  reason: string;
  message: string;
  fix: string;
  suggestions: string[];
}

export interface Explanation {
  object: string;
  controller?: string;
  state: string;
  references: ExplainReference[];
  /** The first controller view's chain to its deepest cause, when its blocking referent is itself blocked. */
  rootCause?: RootCause;
}

export async function fetchExplain(key: string, signal?: AbortSignal): Promise<Explanation> {
  const res = await apiFetch(`/api/v1/explain?object=${encodeURIComponent(key)}`, {
    signal,
    headers: { accept: 'application/json' },
    cache: 'no-store',
  });
  if (!res.ok) throw new Error(await apiErrorMessage(res, 'explain'));
  return parseExplanation(await res.json(), key);
}

/**
 * parseExplanation accepts the per-controller answer
 * `{object, controllers: [{controller, state, references}]}` and the flat
 * `{object, controller, state, references}`; references of several
 * controllers are merged (one row per referent and field path).
 */
export function parseExplanation(raw: unknown, key: string): Explanation {
  const o = (raw ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const records = (v: unknown) =>
    Array.isArray(v) ? v.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object') : [];
  const views = Array.isArray(o.controllers) ? records(o.controllers) : [o];
  const first = views[0] ?? {};
  const seen = new Set<string>();
  const references: ExplainReference[] = [];
  for (const view of views) {
    for (const r of records(view.references)) {
      const ref: ExplainReference = {
        referent: str(r.referent),
        fieldPath: str(r.fieldPath),
        state: str(r.state),
        reason: str(r.reason),
        message: str(r.message),
        fix: str(r.fix),
        suggestions: Array.isArray(r.suggestions)
          ? r.suggestions.filter((x): x is string => typeof x === 'string')
          : [],
      };
      const id = `${ref.referent}#${ref.fieldPath}`;
      if (seen.has(id)) continue;
      seen.add(id);
      references.push(ref);
    }
  }
  const rootCause = views.map((v) => parseRootCause(v.rootCause)).find((rc) => rc !== undefined);
  return {
    ...(rootCause ? { rootCause } : {}),
    object: str(o.object) || key,
    ...(typeof first.controller === 'string' ? { controller: first.controller } : {}),
    state: str(first.state),
    references,
  };
}

/** parseRootCause keeps a root cause whose path is a list of keys and whose cause is named; anything else is dropped. */
function parseRootCause(raw: unknown): RootCause | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const path = Array.isArray(r.path) ? r.path.filter((k): k is string => typeof k === 'string') : [];
  if (path.length < 2 || typeof r.referent !== 'string') return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const rc: RootCause = {
    path,
    referent: r.referent,
    state: str(r.state),
    reason: str(r.reason),
    message: str(r.message),
    fix: str(r.fix),
  };
  if (r.cycle === true) rc.cycle = true;
  if (r.truncated === true) rc.truncated = true;
  return rc;
}
