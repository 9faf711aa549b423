import {
  RefwatchError,
  kindKey,
  nameOfKey,
  namespaceOfKey,
  namespaceSelectorText,
  parseNamespaceSelector,
  type CachedObject,
  type EmptySelector,
  type GroupKind,
  type NamespaceSelector,
  type NamespaceSelectorForm,
  type ObjectKey,
  type Reference,
  type Selector,
  type SelectorForm,
} from '../model';
import { noMatchHint, plural } from '../diagnose/selector-hints';
import { parseSelectorOnce } from './selector-cache';
import type { SelectionSummary } from '../changelog';
import type { ObjectStore, WatchError } from './informer-source';
import type { SelectorWatch } from './label-index';
import type { ReferenceControllers, ReferenceScope } from './reference-controllers';
import { WAKE_SELECTED, wakeMask, type WakeOn } from './wake';

/** SelectSpec is one selector reference, as a reconciler declares it with ctx.select(). */
export interface SelectSpec {
  /** The kind the selector selects (Pods: `{ group: '', kind: 'Pod' }`). */
  kind: GroupKind;
  /** Where it looks: default the referrer's own namespace; '' for a cluster-scoped kind. */
  namespace?: string;
  /**
   * The selector as the API writes it (`{matchLabels, matchExpressions}`, or
   * a Service's plain map), or one parsed with parseSelector. An absent
   * selector selects nothing and is no reference.
   */
  selector: unknown;
  /** How `selector` is written; default: 'labelSelector' when it has only matchLabels/matchExpressions, else 'map'. */
  form?: SelectorForm;
  /** What an empty selector means: default 'all' for a label selector (PDB, NetworkPolicy), 'none' for a map (Service). */
  empty?: EmptySelector;
  /**
   * Namespaces to look in instead of `namespace`: a label selector over
   * Namespaces (the referrer then wakes when a Namespace's labels change), or
   * the Prometheus Operator's `{any: true}` / `{matchNames: [...]}`.
   */
  namespaceSelector?: unknown;
  /** How namespaceSelector is written; default: the Prometheus Operator's form when it has any or matchNames. */
  namespaceSelectorForm?: NamespaceSelectorForm;
  /** The field that holds namespaceSelector, named in errors; default: `namespaceSelector` beside fieldPath. */
  namespaceSelectorPath?: string;
  /** The field that holds the selector, shown in diagnosis and on edges; default 'spec.selector'. */
  fieldPath?: string;
  /**
   * Which changes of a matched object wake the referrer, besides the match
   * set changing (which always does): 'readiness' (default), 'change' or
   * 'generation'. 'resolution' is read as 'readiness'.
   */
  wakeOn?: WakeOn;
  /** Fewer matches than this is NotReady (a PDB's integer minAvailable). */
  minMatches?: number;
  /** Fewer Ready matches than this is NotReady (1 for a Service: no ready endpoints). */
  minReady?: number;
  /** What too few Ready matches means, for the message ("the Service has no ready endpoints"). */
  unreadyMeans?: string;
  /** A selector matching nothing: 'block' (default) keeps the referrer unresolved (NoMatch), 'warn' only says so. */
  onNoMatch?: 'block' | 'warn';
}

/**
 * SelectionState is what a selector reference resolves to:
 *   Ready       it matches, and the counts the relation implies hold
 *   NoMatch     it matches no object
 *   NotReady    it matches, but too few objects (minMatches) or too few Ready ones (minReady)
 *   NotPrimed   the kind's (or the Namespaces') cache is still loading
 *   NoSelector  the selector is absent or empty where empty means none: no reference
 */
export type SelectionState = 'Ready' | 'NoMatch' | 'NotReady' | 'NotPrimed' | 'NoSelector';

/** Selection is what ctx.select() answers: the matched objects, from the kind's cache, and a verdict. */
export interface Selection {
  state: SelectionState;
  fieldPath: string;
  /** The selected kind, `Kind.group`. */
  kind: string;
  /** The selector in kubectl form (`app=web,tier in (a,b)`); '' selects everything. */
  selector: string;
  /** Where it looked, in words: `shop`, `any namespace`, `namespaces with team=shop`. */
  where: string;
  keys: ObjectKey[];
  /** The matched objects as the kind's cache holds them: frozen, not copies. */
  objects: CachedObject[];
  ready: number;
  /** Whether this selection keeps its referrer unresolved (a 'warn' NoMatch does not). */
  blocking: boolean;
  reason?: string;
  message?: string;
  /** What to do about it, when the kind of reference knows better than a selector's generic fix (a lookup). */
  fix?: string;
  error?: WatchError;
}

interface Registered {
  scope: ReferenceScope;
  watch: SelectorWatch;
  fieldPath: string;
}

/**
 * SelectorReferences holds one controller's registered selectors per
 * referrer. Like name references, a reconcile states them whole: those it
 * did not select again are unregistered when it ends (invariant 2), and each
 * is registered before its kind's cache is read (invariant 3).
 */
export class SelectorReferences {
  private readonly byReferrer = new Map<ObjectKey, Map<string, Registered>>();

  constructor(
    private readonly controller: string,
    private readonly rcs: ReferenceControllers,
  ) {}

  /** ensure registers the selector unless it already is, and returns its id. */
  ensure(
    referrer: ObjectKey,
    scope: ReferenceScope,
    namespace: string | undefined,
    selector: Selector,
    fieldPath: string,
  ): string {
    let mine = this.byReferrer.get(referrer);
    // A referrer unchanged since its last reconcile states the same Selector object (parsed once per
    // frozen object): its registration is found by identity, without building and hashing its id again.
    if (mine)
      for (const [id, r] of mine)
        if (
          r.watch.selector === selector &&
          r.fieldPath === fieldPath &&
          r.watch.namespace === namespace &&
          r.scope.kind === scope.kind &&
          r.scope.namespace === scope.namespace
        )
          return id;
    const id = `${fieldPath}|${scope.kind}|${scope.namespace ?? ''}|${namespace ?? '*'}|${selector.text}`;
    if (mine?.has(id)) return id;
    if (!mine) this.byReferrer.set(referrer, (mine = new Map()));
    const watch: SelectorWatch = { controller: this.controller, referrer, namespace, selector };
    mine.set(id, { scope, watch, fieldPath });
    this.rcs.watchSelector(scope, watch);
    return id;
  }

  /** keepOnly unregisters the referrer's selectors whose ids are not in keep. */
  keepOnly(referrer: ObjectKey, keep: ReadonlySet<string>): void {
    const mine = this.byReferrer.get(referrer);
    if (!mine) return;
    for (const [id, r] of mine) {
      if (keep.has(id)) continue;
      mine.delete(id);
      this.rcs.unwatchSelector(r.scope, r.watch);
    }
    if (mine.size === 0) this.byReferrer.delete(referrer);
  }

  drop(referrer: ObjectKey): void {
    this.keepOnly(referrer, new Set());
  }

  has(referrer: ObjectKey): boolean {
    return this.byReferrer.has(referrer);
  }

  /** selectorAt is the selector text behind the referrer's references of this field path, if a selector declared them. */
  selectorAt(referrer: ObjectKey, fieldPath: string): string | undefined {
    const mine = this.byReferrer.get(referrer);
    if (!mine) return undefined;
    for (const r of mine.values())
      if (r.fieldPath === fieldPath && r.scope.kind !== 'Namespace') return r.watch.selector.text;
    return undefined;
  }
}

/** SelectContext is what select() needs from the reconcile that calls it. */
export interface SelectContext {
  referrer: ObjectKey;
  rcs: ReferenceControllers;
  selectors: SelectorReferences;
  /** The ids of the selectors this reconcile declared. */
  keep: Set<string>;
  /** Registers a matched object as a reference of the referrer, waking it on the changes the mask names. */
  reference(ref: Reference, mask: number): void;
}

const NAMESPACE_KIND = 'Namespace';

/**
 * select declares a selector reference and answers it from the kind's label
 * index. Each matched object becomes a reference of the referrer under the
 * selector's field path (an edge on the graph; its readiness wakes the
 * referrer as wakeOn says); the selector itself wakes the referrer when its
 * match set changes.
 */
export function select(ctx: SelectContext, spec: SelectSpec): Selection {
  const fieldPath = spec.fieldPath ?? 'spec.selector';
  const kind = kindKey(spec.kind);
  const selector = parsedSelector(spec, fieldPath);
  const nsField =
    spec.namespaceSelector === undefined ? '' : (spec.namespaceSelectorPath ?? namespaceSelectorField(fieldPath));
  const nsSelector =
    spec.namespaceSelector === undefined
      ? undefined
      : unwrapParsed(parseNamespaceSelector(spec.namespaceSelector, nsField, spec.namespaceSelectorForm));
  const own = spec.namespace ?? namespaceOfKey(ctx.referrer);
  const where = nsSelector ? namespaceSelectorText(nsSelector) : own === '' ? 'the cluster' : own;
  const base = { fieldPath, kind, selector: selector?.text ?? '', where, keys: [], objects: [], ready: 0 };
  if (!selector) return { ...base, state: 'NoSelector', blocking: false };
  const namespaces = lookIn(ctx, nsSelector, own, nsField);
  if (!namespaces.ok) return { ...base, ...namespaces.notPrimed, state: 'NotPrimed', blocking: true };
  const mask =
    wakeMask(spec.wakeOn === undefined || spec.wakeOn === 'resolution' ? 'readiness' : spec.wakeOn) | WAKE_SELECTED;
  const keys: ObjectKey[] = [];
  // The cache a one-namespace selection was answered from is the one cached() would find for each match.
  let store: ObjectStore | undefined;
  for (const namespace of namespaces.value) {
    const scoped: ReferenceScope = namespace === undefined ? { kind } : ctx.rcs.scopeIn(kind, namespace);
    ctx.keep.add(ctx.selectors.ensure(ctx.referrer, scoped, namespace, selector, fieldPath));
    const answer = ctx.rcs.select(scoped, namespace, selector);
    if (!answer.primed)
      return {
        ...base,
        state: 'NotPrimed',
        blocking: true,
        reason: answer.error?.reason ?? 'NotPrimed',
        message: answer.message,
        error: answer.error,
      };
    if (namespace !== undefined && namespaces.value.length === 1) store = answer.store;
    if (namespaces.only === undefined) keys.push(...answer.keys);
    else for (const k of answer.keys) if (namespaces.only.has(namespaceOfKey(k))) keys.push(k);
  }
  keys.sort();
  const objects: CachedObject[] = [];
  let ready = 0;
  for (const key of keys) {
    ctx.reference({ referent: key, fieldPath }, mask);
    const object = store ? store.get(key) : ctx.rcs.cached(key);
    if (object) objects.push(object);
    if (ctx.rcs.isReadyObject(kind, key, object)) ready++;
  }
  const sel = { ...base, keys, objects, ready };
  if (keys.length === 0) {
    const what = selector.text === '' ? 'match the empty selector' : `match ${selector.text}`;
    const scope = ctx.rcs.scopeIn(kind, own);
    const hint =
      namespaces.value.length === 1 && namespaces.value[0] !== undefined
        ? noMatchHint(selector, ctx.rcs.labelsIn(scope, namespaces.value[0]), spec.kind.kind)
        : undefined;
    const where = nsSelector ? `in ${namespaceSelectorText(nsSelector)}` : own === '' ? '' : `in ${own} `;
    return {
      ...sel,
      state: 'NoMatch',
      blocking: spec.onNoMatch !== 'warn',
      reason: 'NoMatch',
      message: `0 ${plural(spec.kind.kind)} ${where}${what}${hint ? `; ${hint}` : ''}`.replace(/ {2,}/g, ' '),
    };
  }
  const kinds = (n: number) => `${n} ${plural(spec.kind.kind, n)}`;
  if (spec.minMatches !== undefined && keys.length < spec.minMatches)
    return {
      ...sel,
      state: 'NotReady',
      blocking: true,
      reason: 'TooFewMatches',
      message: `selects ${kinds(keys.length)}, fewer than the ${spec.minMatches} it needs`,
    };
  if (spec.minReady !== undefined && ready < spec.minReady)
    return {
      ...sel,
      state: 'NotReady',
      blocking: true,
      reason: 'TooFewReady',
      message: `selects ${kinds(keys.length)}, ${ready} Ready${spec.unreadyMeans ? `: ${spec.unreadyMeans}` : ''}`,
    };
  return { ...sel, state: 'Ready', blocking: false };
}

/** summaryOf is what the change log keeps of a selection. */
export function summaryOf(s: Selection): SelectionSummary {
  const summary: SelectionSummary = {
    fieldPath: s.fieldPath,
    kind: s.kind,
    selector: s.selector,
    where: s.where,
    state: s.state,
    matched: s.keys.length,
    ready: s.ready,
  };
  if (s.fix !== undefined) summary.fix = s.fix;
  return summary;
}

function parsedSelector(spec: SelectSpec, field: string): Selector | undefined {
  const raw = spec.selector;
  if (isParsed(raw)) return raw;
  const form = spec.form ?? guessForm(raw);
  return parseSelectorOnce(raw, { form, empty: spec.empty ?? (form === 'map' ? 'none' : 'all'), field });
}

function isParsed(raw: unknown): raw is Selector {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    Array.isArray((raw as Selector).requirements) &&
    typeof (raw as Selector).text === 'string'
  );
}

function guessForm(raw: unknown): SelectorForm {
  if (raw === null || typeof raw !== 'object') return 'labelSelector';
  const keys = Object.keys(raw);
  return keys.length === 0 || keys.every((k) => k === 'matchLabels' || k === 'matchExpressions')
    ? 'labelSelector'
    : 'map';
}

function unwrapParsed<T>(r: { ok: true; value: T } | { ok: false; error: RefwatchError }): T {
  if (!r.ok) throw r.error;
  return r.value;
}

function namespaceSelectorField(fieldPath: string): string {
  const dot = fieldPath.lastIndexOf('.');
  return `${dot < 0 ? '' : fieldPath.slice(0, dot + 1)}namespaceSelector`;
}

type Namespaces =
  | { ok: true; value: (string | undefined)[]; only?: ReadonlySet<string> }
  | { ok: false; notPrimed: { reason: string; message: string; error?: WatchError } };

/**
 * lookIn turns a namespace selector into where to look: one namespace, every
 * namespace (undefined), named ones, or every namespace filtered by the
 * Namespaces whose labels match, which registers a selector on Namespaces so
 * that a relabelled Namespace wakes the referrer.
 */
function lookIn(ctx: SelectContext, ns: NamespaceSelector | undefined, own: string, nsField: string): Namespaces {
  if (!ns) return { ok: true, value: [own] };
  if (ns.type === 'any') return { ok: true, value: [undefined] };
  if (ns.type === 'names') return { ok: true, value: [...ns.names] };
  const scope: ReferenceScope = { kind: NAMESPACE_KIND };
  ctx.keep.add(ctx.selectors.ensure(ctx.referrer, scope, '', ns.selector, nsField));
  const answer = ctx.rcs.select(scope, '', ns.selector);
  if (!answer.primed)
    return {
      ok: false,
      notPrimed: { reason: answer.error?.reason ?? 'NotPrimed', message: answer.message, error: answer.error },
    };
  return { ok: true, value: [undefined], only: new Set(answer.keys.map(nameOfKey)) };
}
