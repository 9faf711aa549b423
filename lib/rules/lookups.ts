import { groupOfApiVersion, kindKey, type GroupKind, type KubeObject } from '../model';
import { isRecord } from './field-path';
import type { LookupRule, RuleSet } from './rule-set';

/** LookupFinding is one value a lookup rule found in an object: what ctx.lookup() is given. */
export interface LookupFinding {
  /** Concrete path of the value: `spec.destination.name`. */
  fieldPath: string;
  value: string;
  kind: GroupKind;
  labelSelector: string;
  field: string;
  decode: LookupRule['decode'];
  /** Where the candidates live when the rule fixes it; otherwise the referrer's namespace. */
  namespace: string | undefined;
  noun: string | undefined;
  by: string | undefined;
  /** The rule that found it: `argocd: rules[0].references[2]`. */
  rule: string;
}

/**
 * extractLookups returns the lookups the rule set finds in an object. An
 * absent or empty value, or one the rule skips (Argo CD's in-cluster
 * destination), is no reference.
 */
export function extractLookups(rs: RuleSet, obj: KubeObject): LookupFinding[] {
  if (!isRecord(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return [];
  const rules = rs.lookups.get(kindKey({ group: groupOfApiVersion(obj.apiVersion), kind: obj.kind }));
  if (!rules) return [];
  const out: LookupFinding[] = [];
  for (const rule of rules)
    for (const m of rule.path.match(obj)) {
      if (typeof m.value !== 'string' || m.value === '' || rule.skip.has(m.value)) continue;
      out.push({
        fieldPath: m.path,
        value: m.value,
        kind: rule.referent,
        labelSelector: rule.labelSelector,
        field: rule.field,
        decode: rule.decode,
        namespace: rule.namespace,
        noun: rule.noun,
        by: rule.by,
        rule: rule.origin,
      });
    }
  return out;
}
