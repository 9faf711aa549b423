import { groupOfApiVersion, type GroupKind, type KubeObject } from '../model';
import { isRecord } from './field-path';
import { kindInfoOf, type CompiledPredicate, type RuleSet } from './rule-set';

/**
 * Readiness is whether a referent is in the state its referrers need. NotReady
 * says why: the condition (type, reason, message) or the field that decided.
 */
export type Readiness =
  | { ready: true }
  | {
      ready: false;
      /** The condition's reason, or ConditionMissing / FieldMismatch when refwatch decided. */
      reason: string;
      message: string;
      /** The condition type that decided, if one did. */
      condition?: string;
      /** The field path that decided, for {field, equals} predicates. */
      field?: string;
    };

const DEFAULT: CompiledPredicate = { kind: 'default' };

/** predicateFor is the readiness predicate the rule set applies to a kind: its kinds entry, else the default. */
export function predicateFor(rs: RuleSet, gk: GroupKind): CompiledPredicate {
  return kindInfoOf(rs, gk)?.ready ?? DEFAULT;
}

/** readinessOf judges an object that exists in the cache. Missing objects are the caller's NotFound. */
export function readinessOf(rs: RuleSet, obj: KubeObject): Readiness {
  const gk = { group: typeof obj.apiVersion === 'string' ? groupOfApiVersion(obj.apiVersion) : '', kind: obj.kind };
  return evaluate(predicateFor(rs, gk), obj);
}

interface Condition {
  type: string;
  status?: unknown;
  reason?: unknown;
  message?: unknown;
}

export function evaluate(p: CompiledPredicate, obj: KubeObject): Readiness {
  switch (p.kind) {
    case 'exists':
      return { ready: true };
    case 'default': {
      const conditions = conditionsOf(obj);
      if (conditions.length === 0) return { ready: true };
      return judgeCondition(conditions, 'Ready', 'True', 'it has conditions but none of type Ready');
    }
    case 'condition':
      return judgeCondition(conditionsOf(obj), p.type, p.status, `no ${p.type} condition yet`);
    case 'all':
      for (const one of p.of) {
        const r = evaluate(one, obj);
        if (!r.ready) return r;
      }
      return { ready: true };
    case 'field': {
      const v = p.path.get(obj);
      if (p.equals.some((e) => e === v)) return { ready: true };
      const want = p.equals.map((e) => JSON.stringify(e)).join(' or ');
      const have = v === undefined ? 'is not set' : `is ${JSON.stringify(v)}`;
      return {
        ready: false,
        reason: 'FieldMismatch',
        field: p.path.source,
        message: `${p.path.source} ${have}; ready when it is ${want}`,
      };
    }
  }
}

function judgeCondition(conditions: Condition[], type: string, want: string, missing: string): Readiness {
  const c = conditions.find((x) => x.type === type);
  if (!c) return { ready: false, reason: 'ConditionMissing', condition: type, message: missing };
  if (c.status === want) return { ready: true };
  const status = typeof c.status === 'string' ? c.status : 'unset';
  return {
    ready: false,
    condition: type,
    reason: typeof c.reason === 'string' && c.reason !== '' ? c.reason : `${type}${status}`,
    message:
      typeof c.message === 'string' && c.message !== ''
        ? c.message
        : `condition ${type} is ${status}; ready when ${want}`,
  };
}

function conditionsOf(obj: KubeObject): Condition[] {
  const status = obj.status;
  if (!isRecord(status) || !Array.isArray(status.conditions)) return [];
  return status.conditions.filter((c): c is Condition => isRecord(c) && typeof c.type === 'string');
}
