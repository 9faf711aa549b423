import { groupOfApiVersion, kindKey, type GroupKind, type KubeObject } from '../model';
import { isRecord } from './field-path';
import type { RuleSet, SelectorRule } from './rule-set';

/** SelectorFinding is one selector a rule found in an object: what ctx.select() is given. */
export interface SelectorFinding {
  /** Concrete path of the selector: `spec.selector`. */
  fieldPath: string;
  kind: GroupKind;
  /** The selector as the object holds it; parsed (and judged) by the engine. */
  selector: unknown;
  form: SelectorRule['form'];
  empty: SelectorRule['empty'];
  namespaceSelector: unknown;
  namespaceSelectorForm: SelectorRule['namespaceSelectorForm'];
  /** Concrete path of the namespace selector, when the rule names one. */
  namespaceSelectorPath: string | undefined;
  minReady: number | undefined;
  /** The integer the matches must reach, read from minMatchesField; a percentage is left unchecked. */
  minMatches: number | undefined;
  onNoMatch: SelectorRule['onNoMatch'];
  unreadyMeans: string | undefined;
  /** The rule that found it: `core: rules[6].references[0]`. */
  rule: string;
}

/**
 * extractSelectors returns the selectors the rule set finds in an object. A
 * selector field that is absent is no reference; whether an empty one is
 * depends on the rule's `empty`, which the engine applies.
 */
export function extractSelectors(rs: RuleSet, obj: KubeObject): SelectorFinding[] {
  if (!isRecord(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return [];
  const rules = rs.selectors.get(kindKey({ group: groupOfApiVersion(obj.apiVersion), kind: obj.kind }));
  if (!rules) return [];
  const out: SelectorFinding[] = [];
  for (const rule of rules) {
    for (const m of rule.selector.match(obj)) {
      if (m.value === undefined || m.value === null) continue;
      const minMatches = rule.minMatchesField?.match(obj)[0]?.value;
      const ns = rule.namespaceSelector?.match(obj)[0];
      out.push({
        fieldPath: m.path,
        kind: rule.referent,
        selector: m.value,
        form: rule.form,
        empty: rule.empty,
        namespaceSelector: ns?.value,
        namespaceSelectorForm: rule.namespaceSelectorForm,
        namespaceSelectorPath: rule.namespaceSelector?.source,
        minReady: rule.minReady,
        minMatches: typeof minMatches === 'number' && Number.isInteger(minMatches) ? minMatches : undefined,
        onNoMatch: rule.onNoMatch,
        unreadyMeans: rule.unreadyMeans,
        rule: rule.origin,
      });
    }
  }
  return out;
}
