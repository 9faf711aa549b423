import type { FieldPath } from '../rules/field-path';
import type { ReferenceRule, RuleSet } from '../rules/rule-set';

/**
 * templateRuleSet is the rule set a workload's Pod template is scanned with:
 * the Pod rules that no rule of the workload itself already applies to the
 * template (a pack that names `spec.template.spec.volumes[*].secret.secretName`
 * for Deployments finds those references itself), so that a review does not
 * find each reference twice and drop one. The answer is the same as scanning
 * with every Pod rule and deduplicating, and is computed once per rule set and
 * workload kind. A rule set with conventions is returned whole: which fields a
 * convention skips depends on what the rules found.
 */
export function templateRuleSet(rs: RuleSet, workload: string, templatePath: string): RuleSet {
  if (rs.conventions.length > 0) return rs;
  let perKind = derived.get(rs);
  if (!perKind) derived.set(rs, (perKind = new Map()));
  let trs = perKind.get(workload);
  if (!trs) {
    const own = rs.rules.get(workload) ?? [];
    const pod = rs.rules.get('Pod') ?? [];
    const left = pod.filter((p) => !own.some((w) => appliesToTemplate(w, p, `${templatePath}.`)));
    trs = left.length === pod.length ? rs : { ...rs, rules: new Map([...rs.rules, ['Pod', left]]) };
    perKind.set(workload, trs);
  }
  return trs;
}

const derived = new WeakMap<RuleSet, Map<string, RuleSet>>();

/** appliesToTemplate: does the workload rule w find exactly what the Pod rule p finds in the template under prefix? */
function appliesToTemplate(w: ReferenceRule, p: ReferenceRule, prefix: string): boolean {
  // A group computed from the referrer's group differs between the workload and its Pods.
  if (typeof w.group !== 'string' || typeof p.group !== 'string' || w.group !== p.group) return false;
  return (
    w.path.source === prefix + p.path.source &&
    sameSource(w.fallbackPath, p.fallbackPath, prefix) &&
    w.kind === p.kind &&
    w.scope === p.scope &&
    w.namespace === p.namespace &&
    w.optional === p.optional &&
    w.severity === p.severity &&
    w.needsGrant === p.needsGrant &&
    w.readyEndpoints === p.readyEndpoints &&
    w.produces === p.produces &&
    // The fields below are read beside the name, in the same holder either way.
    sameSource(w.namespaceField, p.namespaceField) &&
    sameSource(w.kindField, p.kindField) &&
    sameSource(w.groupField, p.groupField) &&
    sameSource(w.apiVersionField, p.apiVersionField) &&
    sameSource(w.optionalField, p.optionalField) &&
    w.when?.path.source === p.when?.path.source &&
    (w.when?.equals ?? []).join('\n') === (p.when?.equals ?? []).join('\n')
  );
}

function sameSource(a: FieldPath | undefined, b: FieldPath | undefined, prefix = ''): boolean {
  return a === undefined || b === undefined ? a === b : a.source === prefix + b.source;
}
