import {
  formatKey,
  groupOfApiVersion,
  kindKey,
  referenceId,
  usesPathSegmentNames,
  validateGroup,
  validateKind,
  validateName,
  validateNamespace,
  type GroupKind,
  type KubeObject,
  type Reference,
} from '../model';
import { appendField, isRecord, type FieldMatch } from './field-path';
import {
  kindInfoOf,
  selectorMatches,
  type Convention,
  type ReferenceRule,
  type ReferenceTarget,
  type RuleSet,
} from './rule-set';
import type { ReferrerSelector, Scope } from './schema';

/**
 * RuleReference is a Reference found by a rule; `optional` is set only when
 * the referrer works without it, `severity` only when it never blocks its
 * referrer ('warn'), `needsGrant` only when a ReferenceGrant must allow it.
 */
export interface RuleReference extends Reference {
  optional?: true;
  severity?: 'warn';
  /** Into another namespace, permitted only by a ReferenceGrant there (set only when it crosses namespaces). */
  needsGrant?: true;
  /** A Service referent counts as Ready only with a Ready Pod behind its selector (set only for Services). */
  readyEndpoints?: true;
}

/** UnresolvedReference is a name the rules found but could not turn into a valid referent key. */
export interface UnresolvedReference {
  fieldPath: string;
  name: string;
  reason: string;
  /** The rule or convention that found it: `core: rules[0].references[2]`, `convention crossplane`. */
  rule: string;
}

export interface ReferenceScan {
  references: RuleReference[];
  /** Referents the object creates (rules with `produces`): not waited on, named as produced by it in diagnosis. Set when any. */
  produced?: RuleReference[];
  unresolved: UnresolvedReference[];
}

export interface ScanOptions {
  /** Scope from discovery, when known; it overrides the rules' scope facts. */
  scopeOf?: (gk: GroupKind) => Scope | undefined;
  /** Discovery categories of a kind, for conventions that select by category. */
  categoriesOf?: (gk: GroupKind) => readonly string[] | undefined;
}

/** extractReferences returns the references the rule set finds in an object, in rule order. Empty names are skipped. */
export function extractReferences(rs: RuleSet, obj: KubeObject, opts: ScanOptions = {}): RuleReference[] {
  return scanReferences(rs, obj, opts).references;
}

/**
 * scanReferences is extractReferences plus what it could not resolve: a
 * convention field whose referent kind is not known, or a name that makes no
 * valid key. The same (referent, field path) found by two rules counts once.
 */
export function scanReferences(rs: RuleSet, obj: KubeObject, opts: ScanOptions = {}): ReferenceScan {
  const out: ReferenceScan = { references: [], unresolved: [] };
  if (!isRecord(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return out;
  const referrer: GroupKind = { group: groupOfApiVersion(obj.apiVersion), kind: obj.kind };
  const namespace = typeof obj.metadata?.namespace === 'string' ? obj.metadata.namespace : '';
  const rules = rs.rules.get(kindKey(referrer));
  const categories = rs.conventions.length > 0 ? opts.categoriesOf?.(referrer) : undefined;
  const convention = rs.conventions.find((c) => selectorMatches(c.selector, referrer, categories));
  const ctx: Context = {
    rs,
    opts,
    referrerGroup: referrer.group,
    namespace,
    out,
    seen: convention || (rules !== undefined && mayRepeat(rules)) ? new Set() : undefined,
    seenPaths: convention ? new Set() : undefined,
  };

  if (rules)
    for (const rule of rules) {
      const matches = rule.path.match(obj);
      for (const m of matches) resolve(ctx, rule, m);
      if (rule.fallbackPath && !matches.some((m) => isName(m.value)))
        for (const m of rule.fallbackPath.match(obj)) resolve(ctx, rule, m);
    }
  if (convention) scanConvention(ctx, convention, obj);
  return out;
}

/**
 * namespaceFieldOf says where the namespace of a reference found at fieldPath
 * in a referrer of kind `referrer` would be written: the rule's namespaceField
 * beside the name (`spec.parentRefs[0].namespace`), or null when the rule has
 * none, so that the reference names objects of the referrer's own namespace
 * only (a Pod's `spec.volumes[0].configMap.name`). Undefined when no rule of
 * the kind yields fieldPath (a convention's field).
 */
export function namespaceFieldOf(rs: RuleSet, referrer: GroupKind, fieldPath: string): string | null | undefined {
  const pattern = fieldPath.replace(/\[\d+\]/g, '[*]');
  for (const rule of rs.rules.get(kindKey(referrer)) ?? []) {
    const sources = [rule.path.source, rule.fallbackPath?.source].map((p) => p?.replace(/^\./, ''));
    if (!sources.includes(pattern)) continue;
    if (!rule.namespaceField) return null;
    const dot = fieldPath.lastIndexOf('.');
    return `${dot < 0 ? '' : fieldPath.slice(0, dot + 1)}${rule.namespaceField.source.replace(/^\./, '')}`;
  }
  return undefined;
}

interface Context {
  rs: RuleSet;
  opts: ScanOptions;
  referrerGroup: string;
  namespace: string;
  out: ReferenceScan;
  /**
   * Reference ids found so far, kept only when two rules or a convention may find the same field; and field paths
   * a rule already resolved, kept only when a convention will skip them.
   */
  seen: Set<string> | undefined;
  seenPaths: Set<string> | undefined;
}

const FIELD_NAME = /^[A-Za-z_$][\w$-]*$/;

/** Rule lists in which two rules may reach the same field: only their scans check references for duplicates. */
const repeats = new WeakMap<readonly ReferenceRule[], boolean>();

function mayRepeat(rules: readonly ReferenceRule[]): boolean {
  let r = repeats.get(rules);
  if (r === undefined) {
    const patterns = rules.flatMap((rule) => [
      rule.path.pattern,
      ...(rule.fallbackPath ? [rule.fallbackPath.pattern] : []),
    ]);
    r = new Set(patterns).size < patterns.length;
    repeats.set(rules, r);
  }
  return r;
}

function scanConvention(ctx: Context, c: Convention, obj: KubeObject): void {
  for (const under of c.under) {
    for (const m of under.match(obj)) {
      if (!isRecord(m.value)) continue;
      for (const [field, v] of Object.entries(m.value)) {
        if (!FIELD_NAME.test(field) || c.ignore.has(field)) continue;
        const base = appendField(m.path, field);
        const candidates: FieldMatch[] = [];
        if (field.endsWith('Refs') && Array.isArray(v)) {
          v.forEach((el, i) => {
            if (isRecord(el) && Object.hasOwn(el, 'name'))
              candidates.push({ path: `${base}[${i}].name`, value: el.name, holder: el });
          });
        } else if (field.endsWith('Ref') && isRecord(v) && Object.hasOwn(v, 'name')) {
          candidates.push({ path: `${base}.name`, value: v.name, holder: v });
        }
        if (candidates.length === 0) continue;
        const target = c.fields.get(field);
        for (const cand of candidates) {
          if (ctx.seenPaths?.has(cand.path)) continue;
          if (target) resolve(ctx, target, cand);
          else if (typeof cand.value === 'string' && cand.value !== '') {
            ctx.out.unresolved.push({
              fieldPath: cand.path,
              name: cand.value,
              reason: `${field} names "${cand.value}" but convention ${c.name} does not know which kind it refers to; add ${field} to the convention's fields or write a rule for it`,
              rule: `convention ${c.name}`,
            });
          }
        }
      }
    }
  }
}

function resolve(ctx: Context, t: ReferenceTarget & { produces?: boolean }, m: FieldMatch): void {
  ctx.seenPaths?.add(m.path);
  const name = m.value;
  if (name === undefined || name === null || name === '') return;
  if (typeof name !== 'string') {
    ctx.out.unresolved.push({
      fieldPath: m.path,
      name: JSON.stringify(name),
      reason: `${m.path} should hold a name (a string) but holds ${typeof name}`,
      rule: t.origin,
    });
    return;
  }
  const holder = m.holder;
  if (t.when) {
    const v = t.when.path.get(holder);
    if (typeof v !== 'string' || !t.when.equals.includes(v)) return;
  }
  const kind = nonEmptyString(t.kindField?.get(holder)) ?? t.kind;
  if (kind === undefined) {
    ctx.out.unresolved.push({
      fieldPath: m.path,
      name,
      reason: `no kind next to ${m.path}: ${t.kindField?.source ?? 'kind'} is not set`,
      rule: t.origin,
    });
    return;
  }
  let group = typeof t.group === 'string' ? t.group : t.group(ctx.referrerGroup);
  if (t.groupField) {
    const g = t.groupField.get(holder);
    if (typeof g === 'string') group = g; // '' is the core group, as in Gateway API refs
  } else if (t.apiVersionField) {
    const av = nonEmptyString(t.apiVersionField.get(holder));
    if (av !== undefined) group = groupOfApiVersion(av);
  }
  const gk: GroupKind = { group, kind };
  const scope = ctx.opts.scopeOf?.(gk) ?? t.scope ?? kindInfoOf(ctx.rs, gk)?.scope ?? 'Namespaced';
  const namespace =
    scope === 'Cluster'
      ? ''
      : (nonEmptyString(t.namespaceField?.get(holder)) ?? (ctx.namespace === '' ? (t.namespace ?? '') : ctx.namespace));

  const invalid = checkParts(gk, namespace, name, m.path);
  if (invalid) {
    ctx.out.unresolved.push({ fieldPath: m.path, name, reason: invalid, rule: t.origin });
    return;
  }
  // A literal, not a spread of gk: the spread took most of the time of a reference (the admission bench).
  const referent = formatKey({ group, kind, namespace, name });
  const ref: RuleReference = { referent, fieldPath: m.path };
  if (ctx.seen) {
    const id = referenceId(ref);
    if (ctx.seen.has(id)) return;
    ctx.seen.add(id);
  }
  if (t.produces) {
    (ctx.out.produced ??= []).push(ref);
    return;
  }
  if (t.optional || t.optionalField?.get(holder) === true) ref.optional = true;
  if (t.severity === 'warn') ref.severity = 'warn';
  if (t.needsGrant && namespace !== '' && ctx.namespace !== '' && namespace !== ctx.namespace) ref.needsGrant = true;
  if (t.readyEndpoints && gk.group === '' && gk.kind === 'Service') ref.readyEndpoints = true;
  ctx.out.references.push(ref);
}

/** checkParts validates what parseKey would, part by part, without building and splitting the key. */
function checkParts(gk: GroupKind, namespace: string, name: string, field: string): string | undefined {
  const k = validateKind(gk.kind, `${field} kind`);
  if (!k.ok) return k.error.message;
  const g = validateGroup(gk.group, `${field} group`);
  if (!g.ok) return g.error.message;
  if (namespace !== '') {
    const ns = validateNamespace(namespace, `${field} namespace`);
    if (!ns.ok) return ns.error.message;
  }
  const n = validateName(name, field, usesPathSegmentNames(gk));
  return n.ok ? undefined : n.error.message;
}

function isName(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

function nonEmptyString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** referrerKinds lists the kinds the rules name as referrers: the kinds to watch. Conventions add kinds only through referrerSelectors. */
export function referrerKinds(rs: RuleSet): GroupKind[] {
  return rs.referrerKinds.map((gk) => ({ ...gk }));
}

/** referrerSelectors lists the conventions' selectors; which kinds they cover takes discovery (see coversReferrer). */
export function referrerSelectors(rs: RuleSet): ({ convention: string } & ReferrerSelector)[] {
  return rs.conventions.map((c) => ({ convention: c.name, ...c.selector }));
}

/** coversReferrer: do name rules, selector rules or a convention look at objects of this kind at all? Give categories from discovery when known. */
export function coversReferrer(rs: RuleSet, gk: GroupKind, categories?: readonly string[]): boolean {
  const key = kindKey(gk);
  return (
    rs.rules.has(key) ||
    rs.selectors.has(key) ||
    rs.lookups.has(key) ||
    rs.conventions.some((c) => selectorMatches(c.selector, gk, categories))
  );
}
