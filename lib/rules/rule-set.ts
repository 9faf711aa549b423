import { kindKey, type GroupKind } from '../model';
import { FieldPath, compileFieldPath } from './field-path';
import { validateRules } from './parse';
import type {
  ConventionFieldSpec,
  ReadinessPredicate,
  ReferenceRuleSpec,
  ReferentSpec,
  ReferrerSelector,
  RulesDocument,
  SelectorReferenceSpec,
  LookupReferenceSpec,
  RulesDocumentInput,
  Scope,
} from './schema';

/** ReferenceTarget turns one matched name into a referent: the compiled form of a reference or convention field. */
export interface ReferenceTarget {
  /** Where the rule came from, for messages: `core: rules[0].references[2]`. */
  origin: string;
  /** The default kind; undefined when only kindField names it. */
  kind: string | undefined;
  /** The default group, or a function of the referrer's group ({fromReferrer}). */
  group: string | ((referrerGroup: string) => string);
  scope: Scope | undefined;
  namespaceField: FieldPath | undefined;
  /** The referent's namespace for a cluster-scoped referrer when namespaceField gives none. */
  namespace: string | undefined;
  kindField: FieldPath | undefined;
  groupField: FieldPath | undefined;
  apiVersionField: FieldPath | undefined;
  optional: boolean;
  optionalField: FieldPath | undefined;
  /** 'warn': shown and explained, never blocking its referrer. */
  severity: 'block' | 'warn';
  /** Into another namespace, only a ReferenceGrant there permits it. */
  needsGrant: boolean;
  /** A Service referent whose selector matches no Ready Pod is NotReady. */
  readyEndpoints: boolean;
  /** Names count only when this field of their holder has one of these values. */
  when: { path: FieldPath; equals: readonly string[] } | undefined;
}

export interface ReferenceRule extends ReferenceTarget {
  path: FieldPath;
  /** Where the name is when `path` names nothing. */
  fallbackPath: FieldPath | undefined;
  /** The referrer creates the referent rather than waiting on it. */
  produces: boolean;
}

/** SelectorRule is a compiled selector reference: where the selector is, and what it selects. */
export interface SelectorRule {
  origin: string;
  selector: FieldPath;
  form: SelectorReferenceSpec['form'];
  referent: GroupKind;
  empty: SelectorReferenceSpec['empty'];
  namespaceSelector: FieldPath | undefined;
  namespaceSelectorForm: SelectorReferenceSpec['namespaceSelectorForm'];
  minReady: number | undefined;
  minMatchesField: FieldPath | undefined;
  onNoMatch: SelectorReferenceSpec['onNoMatch'];
  unreadyMeans: string | undefined;
}

/** LookupRule is a compiled lookup reference: where the value is, and which labelled objects hold it. */
export interface LookupRule {
  origin: string;
  path: FieldPath;
  referent: GroupKind;
  labelSelector: string;
  field: string;
  decode: 'base64' | undefined;
  noun: string | undefined;
  by: string | undefined;
  namespace: string | undefined;
  skip: ReadonlySet<string>;
}

export interface Convention {
  name: string;
  selector: ReferrerSelector | undefined;
  under: FieldPath[];
  /** Referent per field name (`providerConfigRef`). */
  fields: ReadonlyMap<string, ReferenceTarget>;
  ignore: ReadonlySet<string>;
}

export type CompiledPredicate =
  | { kind: 'exists' }
  | { kind: 'default' }
  | { kind: 'condition'; type: string; status: 'True' | 'False' | 'Unknown' }
  | { kind: 'field'; path: FieldPath; equals: readonly (string | number | boolean)[] }
  | { kind: 'all'; of: readonly CompiledPredicate[] };

export interface KindInfo {
  scope: Scope | undefined;
  ready: CompiledPredicate | undefined;
}

/**
 * RuleSet is one or more rules documents compiled for evaluation: field paths
 * parsed once, rules indexed by referrer kind. It is immutable.
 */
export interface RuleSet {
  /** Reference rules by referrer kind key (`Pod`, `HTTPRoute.gateway.networking.k8s.io`). */
  readonly rules: ReadonlyMap<string, readonly ReferenceRule[]>;
  /** Selector rules by referrer kind key (`Service`, `PodDisruptionBudget.policy`). */
  readonly selectors: ReadonlyMap<string, readonly SelectorRule[]>;
  /** Lookup rules by referrer kind key (`Application.argoproj.io`). */
  readonly lookups: ReadonlyMap<string, readonly LookupRule[]>;
  /** Conventions in order; an object uses the first whose selector matches it. */
  readonly conventions: readonly Convention[];
  /** Kind facts by kind key; `Kind.*` entries apply to the kind in any group. */
  readonly kinds: ReadonlyMap<string, KindInfo>;
  /** The referrer kinds named by rules, in first-seen order. */
  readonly referrerKinds: readonly GroupKind[];
}

/**
 * compileRuleSet merges validated documents in order. Rules and conventions
 * add up; a later `kinds` entry overrides an earlier one field by field, so a
 * user file given after the packs can change one kind's readiness.
 */
export function compileRuleSet(docs: readonly RulesDocument[]): RuleSet {
  const rules = new Map<string, ReferenceRule[]>();
  const selectors = new Map<string, SelectorRule[]>();
  const lookups = new Map<string, LookupRule[]>();
  const referrerKinds: GroupKind[] = [];
  const conventions: Convention[] = [];
  const kinds = new Map<string, KindInfo>();
  docs.forEach((doc, d) => {
    const label = doc.name ?? `document ${d}`;
    doc.rules.forEach((rule, r) => {
      const key = kindKey(rule.referrer);
      if (!rules.has(key) && !selectors.has(key) && !lookups.has(key))
        referrerKinds.push({ group: rule.referrer.group, kind: rule.referrer.kind });
      rule.references.forEach((ref: ReferenceRuleSpec | SelectorReferenceSpec | LookupReferenceSpec, i) => {
        if ('lookup' in ref) {
          const list = lookups.get(key) ?? [];
          lookups.set(key, list);
          list.push(compileLookupRule(ref, `${label}: rules[${r}].references[${i}]`));
          return;
        }
        if ('selector' in ref) {
          const list = selectors.get(key) ?? [];
          selectors.set(key, list);
          list.push(compileSelectorRule(ref, `${label}: rules[${r}].references[${i}]`));
          return;
        }
        const list = rules.get(key) ?? [];
        rules.set(key, list);
        list.push({
          ...compileTarget(ref, `${label}: rules[${r}].references[${i}]`),
          path: compileFieldPath(ref.path),
          fallbackPath: ref.fallbackPath === undefined ? undefined : compileFieldPath(ref.fallbackPath),
          produces: ref.produces ?? false,
        });
      });
    });
    doc.conventions.forEach((c, ci) => {
      conventions.push({
        name: c.name,
        selector: c.referrers,
        under: c.under.map(compileFieldPath),
        fields: new Map(
          c.fields.map((f: ConventionFieldSpec, fi) => [
            f.field,
            compileTarget(f, `${label}: conventions[${ci}].fields[${fi}]`),
          ]),
        ),
        ignore: new Set(c.ignore),
      });
    });
    for (const k of doc.kinds) {
      const key = k.group === '*' ? `${k.kind}.*` : kindKey({ group: k.group, kind: k.kind });
      const prev = kinds.get(key);
      kinds.set(key, {
        scope: k.scope ?? prev?.scope,
        ready: k.ready !== undefined ? compilePredicate(k.ready) : prev?.ready,
      });
    }
  });
  return { rules, selectors, lookups, conventions, kinds, referrerKinds };
}

function compileLookupRule(spec: LookupReferenceSpec, origin: string): LookupRule {
  return {
    origin,
    path: compileFieldPath(spec.path),
    referent: { group: spec.lookup.referent.group, kind: spec.lookup.referent.kind },
    labelSelector: spec.lookup.labelSelector,
    field: spec.lookup.field.replace(/^\./, ''),
    decode: spec.lookup.decode,
    noun: spec.lookup.noun,
    by: spec.lookup.by,
    namespace: spec.namespace,
    skip: new Set(spec.skip ?? []),
  };
}

function compileSelectorRule(spec: SelectorReferenceSpec, origin: string): SelectorRule {
  return {
    origin,
    selector: compileFieldPath(spec.selector),
    form: spec.form,
    referent: { group: spec.referent.group, kind: spec.referent.kind },
    empty: spec.empty,
    namespaceSelector: spec.namespaceSelector === undefined ? undefined : compileFieldPath(spec.namespaceSelector),
    namespaceSelectorForm: spec.namespaceSelectorForm,
    minReady: spec.minReady,
    minMatchesField: spec.minMatchesField === undefined ? undefined : compileFieldPath(spec.minMatchesField),
    onNoMatch: spec.onNoMatch,
    unreadyMeans: spec.unreadyMeans,
  };
}

/**
 * definePack validates a built-in pack at load. A built-in pack that fails is
 * a bug in refwatch, not bad input, so it throws with every issue listed.
 */
export function definePack(name: string, input: RulesDocumentInput): RulesDocument {
  const parsed = validateRules({ name, ...input }, `pack ${name}`);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

function compileTarget(spec: ReferenceRuleSpec | ConventionFieldSpec, origin: string): ReferenceTarget {
  const opt = (p: string | undefined) => (p === undefined ? undefined : compileFieldPath(p));
  return {
    origin,
    kind: spec.referent?.kind,
    group: compileGroup(spec.referent?.group ?? ''),
    scope: spec.scope,
    namespaceField: opt(spec.namespaceField),
    namespace: spec.namespace,
    kindField: opt(spec.kindField),
    groupField: opt(spec.groupField),
    apiVersionField: opt(spec.apiVersionField),
    optional: spec.optional ?? false,
    optionalField: opt(spec.optionalField),
    severity: spec.severity ?? 'block',
    needsGrant: spec.needsGrant ?? false,
    readyEndpoints: spec.readyEndpoints ?? false,
    when:
      spec.when === undefined
        ? undefined
        : {
            path: compileFieldPath(spec.when.field),
            equals: Array.isArray(spec.when.equals) ? spec.when.equals : [spec.when.equals],
          },
  };
}

function compileGroup(g: ReferentSpec['group']): ReferenceTarget['group'] {
  if (typeof g === 'string') return g;
  const n = g.lastLabels;
  if (n === undefined) return (referrerGroup) => referrerGroup;
  return (referrerGroup) => referrerGroup.split('.').slice(-n).join('.');
}

function compilePredicate(p: ReadinessPredicate): CompiledPredicate {
  if (p === 'exists') return { kind: 'exists' };
  if (p === 'default') return { kind: 'default' };
  if ('all' in p) return { kind: 'all', of: p.all.map(compilePredicate) };
  if ('condition' in p) return { kind: 'condition', type: p.condition, status: p.status };
  return { kind: 'field', path: compileFieldPath(p.field), equals: Array.isArray(p.equals) ? p.equals : [p.equals] };
}

/** kindInfoOf looks a kind up: its exact entry, then its any-group (`*`) entry. */
export function kindInfoOf(rs: RuleSet, gk: GroupKind): KindInfo | undefined {
  return rs.kinds.get(kindKey(gk)) ?? rs.kinds.get(`${gk.kind}.*`);
}

/**
 * selectorMatches: does a convention's selector cover this referrer kind?
 * categories undefined means discovery is not at hand: a categories criterion
 * then matches every kind.
 */
export function selectorMatches(
  sel: ReferrerSelector | undefined,
  gk: GroupKind,
  categories: readonly string[] | undefined,
): boolean {
  if (!sel || (sel.groups === undefined && sel.groupSuffixes === undefined && sel.categories === undefined))
    return true;
  if (sel.groups?.includes(gk.group)) return true;
  if (sel.groupSuffixes?.some((s) => gk.group === s || gk.group.endsWith(`.${s}`))) return true;
  if (sel.categories !== undefined)
    return categories === undefined || sel.categories.some((c) => categories.includes(c));
  return false;
}
