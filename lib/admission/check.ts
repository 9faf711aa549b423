import { isRecord } from '../rules/field-path';
import { scanReferences, type RuleReference } from '../rules/extract';
import type { RuleSet } from '../rules/rule-set';
import { kindKey, splitKey, type KubeObject, type ObjectKey } from '../model';
import type { ReferentLookup } from './referent-lookup';
import { templateRuleSet } from './template-rules';

/** Finding is one dangling or doubtful reference of an object. */
export interface Finding {
  fieldPath: string;
  referent: ObjectKey;
  /** missing: no such object; notReady: it exists, but its referrers would wait. */
  problem: 'missing' | 'notReady';
  /** Close names in the referent's namespace, nearest first (missing only). */
  suggestions: string[];
  /** One line, kubectl's warning style: `<field>: <referent> does not exist yet`. */
  message: string;
  /** What to do about it. */
  fix: string;
}

/**
 * Workload kinds whose Pod template is a referrer in its own right: a
 * Deployment that names a missing Secret creates Pods that never start. The
 * Pod rules are run on the template and their paths prefixed, so a pack that
 * later names the same template fields directly yields the same findings,
 * deduplicated by field path.
 */
export const POD_TEMPLATES: Readonly<Record<string, string>> = {
  'apps/Deployment': 'spec.template',
  'apps/StatefulSet': 'spec.template',
  'apps/DaemonSet': 'spec.template',
  'apps/ReplicaSet': 'spec.template',
  'batch/Job': 'spec.template',
  'batch/CronJob': 'spec.jobTemplate.spec.template',
  '/ReplicationController': 'spec.template',
};

/** referencesOf lists an object's references: its own rules, plus its Pod template's. */
export function referencesOf(rs: RuleSet, object: KubeObject): RuleReference[] {
  const refs = scanReferences(rs, object).references;
  const template = podTemplateOf(object);
  if (!template) return refs;
  const found = scanReferences(templateRuleSet(rs, template.workload, template.path), template.pod).references;
  if (found.length === 0) return refs;
  // The references are fresh objects of this scan: their paths are prefixed in place.
  const seen = refs.length > 0 ? new Set(refs.map((r) => `${r.referent}|${r.fieldPath}`)) : undefined;
  for (const r of found) {
    r.fieldPath = `${template.path}.${r.fieldPath}`;
    if (seen) {
      const id = `${r.referent}|${r.fieldPath}`;
      if (seen.has(id)) continue;
      seen.add(id);
    }
    refs.push(r);
  }
  return refs;
}

function podTemplateOf(object: KubeObject): { path: string; workload: string; pod: KubeObject } | undefined {
  const av = object.apiVersion;
  const slash = av.indexOf('/');
  const group = slash < 0 ? '' : av.slice(0, slash);
  const path = POD_TEMPLATES[`${group}/${object.kind}`];
  if (!path) return undefined;
  let t: unknown = object;
  for (const part of path.split('.')) t = isRecord(t) ? t[part] : undefined;
  if (!isRecord(t)) return undefined;
  const meta = isRecord(t.metadata) ? t.metadata : {};
  return {
    path,
    workload: kindKey({ group, kind: object.kind }),
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      ...t,
      // The template's Pods live in the workload's namespace, whatever the template says.
      metadata: { ...meta, name: object.metadata.name, namespace: object.metadata.namespace },
    } as KubeObject,
  };
}

/** describeReferent writes a key the way a person reads it: `Secret shop/db-password`, `StorageClass fast`. */
export function describeReferent(key: ObjectKey): string {
  const p = splitKey(key);
  if (!p) return key;
  return p.namespace ? `${p.kind} ${p.namespace}/${p.name}` : `${p.kind} ${p.name}`;
}

export interface CheckOptions {
  /**
   * Say "does not exist yet" for a missing referent with no close name: it
   * may be on its way (kubectl apply -f dir/ sends objects one at a time).
   * Default true; `refwatch check` sees the whole set and says "does not exist".
   */
  yet?: boolean;
}

/**
 * checkObject evaluates the rule set's references of one object against
 * lookup. Optional references and referents the lookup cannot vouch for
 * (unprimed, forbidden) yield nothing: a finding is always one the caches back.
 */
export function checkObject(
  rs: RuleSet,
  lookup: ReferentLookup,
  object: KubeObject,
  opts: CheckOptions = {},
): Finding[] {
  const out: Finding[] = [];
  for (const ref of referencesOf(rs, object)) {
    if (ref.optional) continue;
    const f = judge(ref, lookup, opts.yet ?? true);
    if (f) out.push(f);
  }
  return out;
}

/** judge turns one reference and what the lookup knows of its referent into a finding, or none. */
export function judge(ref: RuleReference, lookup: ReferentLookup, yet: boolean): Finding | undefined {
  const s = lookup.lookup(ref.referent);
  if (s.state === 'unknown') return undefined;
  if (s.state === 'found' && s.readiness.ready) return undefined;
  const who = describeReferent(ref.referent);
  if (s.state === 'missing') {
    const suggestions = [...s.similar];
    const message =
      suggestions.length > 0
        ? `${ref.fieldPath}: ${who} does not exist; did you mean ${suggestions.join(' or ')}?`
        : `${ref.fieldPath}: ${who} does not exist${yet ? ' yet' : ''}`;
    const fix =
      suggestions.length > 0
        ? `set ${ref.fieldPath} to ${suggestions[0]}, or create ${who}`
        : `create ${who}, or correct ${ref.fieldPath}`;
    return { fieldPath: ref.fieldPath, referent: ref.referent, problem: 'missing', suggestions, message, fix };
  }
  const r = s.readiness;
  const why = r.message && r.message !== r.reason ? `${r.reason ?? 'NotReady'}: ${r.message}` : r.reason;
  const detail = why ? ` (${why})` : '';
  return {
    fieldPath: ref.fieldPath,
    referent: ref.referent,
    problem: 'notReady',
    suggestions: [],
    message: `${ref.fieldPath}: ${who} exists but is not ${r.condition ?? 'ready'} yet${detail}; this object will wait for it`,
    fix: `wait for ${who} to become ${r.condition ?? 'ready'}, or fix what its status reports`,
  };
}
