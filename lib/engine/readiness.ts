import type { CachedObject } from '../model';

/** Readiness says whether a referent is in the state its referrers need, and if not, why. */
export interface Readiness {
  ready: boolean;
  /** The condition type consulted (e.g. Ready), when there was one. */
  condition?: string;
  reason?: string;
  message?: string;
}

/**
 * ReadinessPredicate judges a referent from its cached object. One marked
 * `readsMetadataOnly` reads nothing but metadata, so its kind can be cached
 * as metadata only (see readsMetadataOnly()).
 */
export type ReadinessPredicate = ((object: CachedObject) => Readiness) & { readonly readsMetadataOnly?: boolean };

/** readsMetadataOnly marks a predicate that reads only apiVersion, kind and metadata (labels, annotations, deletionTimestamp…). */
export function readsMetadataOnly(predicate: (object: CachedObject) => Readiness): ReadinessPredicate {
  return Object.assign((object: CachedObject) => predicate(object), { readsMetadataOnly: true as const });
}

interface Condition {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

/** conditionsOf returns status.conditions, or [] when the object has none. */
export function conditionsOf(object: CachedObject): Condition[] {
  const status = object.status as { conditions?: unknown } | undefined;
  return Array.isArray(status?.conditions) ? (status.conditions as Condition[]) : [];
}

/**
 * conditionReadiness is ready when the named condition is True. Its Ready
 * answer and its answer for a missing condition are made once and shared
 * (frozen): a referent's readiness is judged on each of its events and
 * each resolve() of it.
 */
export function conditionReadiness(type: string): ReadinessPredicate {
  // Every answer has all four fields: the code that reads them sees one shape.
  const ready: Readiness = Object.freeze({ ready: true, condition: type, reason: undefined, message: undefined });
  const missing: Readiness = Object.freeze({
    ready: false,
    condition: type,
    reason: 'ConditionMissing',
    message: `no ${type} condition yet`,
  });
  return (object) => {
    const conditions = conditionsOf(object);
    let c: Condition | undefined;
    for (let i = 0; i < conditions.length && c === undefined; i++) if (conditions[i]?.type === type) c = conditions[i];
    if (!c) return missing;
    if (c.status === 'True') return ready;
    return {
      ready: false,
      condition: type,
      reason: typeof c.reason === 'string' && c.reason !== '' ? c.reason : `${type}=${String(c.status)}`,
      message: typeof c.message === 'string' ? c.message : undefined,
    };
  };
}

const readyCondition = conditionReadiness('Ready');

/** defaultReadiness: the condition Ready is True, or the object has no conditions at all. */
export const defaultReadiness: ReadinessPredicate = (object) =>
  conditionsOf(object).length === 0 ? { ready: true } : readyCondition(object);

/** existsReadiness: existing is enough (Secrets, ConfigMaps…); its kinds are cached as metadata only. */
export const existsReadiness: ReadinessPredicate = readsMetadataOnly(() => ({ ready: true }));

/** Core kinds without status: the default readiness of their objects is their existence. */
const EXISTENCE_KINDS = new Set(['Secret', 'ConfigMap', 'ServiceAccount']);

/**
 * needsMetadataOnly says whether a referent kind judged by predicate can be
 * cached as metadata only: the predicate reads only metadata, or the kind is
 * Secret, ConfigMap or ServiceAccount judged by defaultReadiness (they have
 * no conditions, so they are ready once they exist).
 */
export function needsMetadataOnly(kind: string, predicate: ReadinessPredicate): boolean {
  return predicate.readsMetadataOnly === true || (predicate === defaultReadiness && EXISTENCE_KINDS.has(kind));
}
