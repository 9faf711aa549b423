import {
  kindOfKey,
  nameOfKey,
  namespaceOfKey,
  parseKindKey,
  type GroupKind,
  type CachedObject,
  type ObjectKey,
  type Reference,
} from '../model';
import type {
  ObjectStore,
  ObservedReferentView,
  Readiness,
  ReadinessPredicate,
  ReferenceControllers,
  ReferenceControllerView,
  WatchError,
  WatchErrorReason,
} from '../engine';
import { formatDuration } from './duration';
import { producerSourcesOf, type Producer, type ProducerSource } from './producers';
import { MAX_COMPARISONS_PER_LOOKUP, SimilarNames } from './similar-names';

/**
 * ReferenceState is what diagnosis finds for one reference. Unlike the
 * engine's Resolution, which says only NotPrimed until a kind's cache is
 * full, it tells why the cache is not full: the kind is unknown, the watch is
 * forbidden, or it fails otherwise. RefNotPermitted is a referent the
 * referrer may not use (Gateway API: no ReferenceGrant allows it).
 */
export type ReferenceState =
  'Ready' | 'NotReady' | 'NotFound' | 'KindUnknown' | 'Forbidden' | 'NotPrimed' | 'WatchError' | 'RefNotPermitted';

/** ReferenceExplanation is one reference's state, why, and one line a person can act on. */
export interface ReferenceExplanation {
  referent: ObjectKey;
  fieldPath: string;
  state: ReferenceState;
  /** A short cause: the condition's reason, the watch error's reason, or the state itself. */
  reason: string;
  message: string;
  /** What to do about it; empty when the reference is Ready. */
  fix: string;
  /** Existing objects the reference may have meant (NotFound only), most likely first. */
  suggestions?: ObjectKey[];
  /** false: the referrer does not wait on it (an owner, a back-pointer), so it is never why the referrer is stuck. */
  blocking?: false;
  /** The object that creates the missing referent (a Certificate its Secret), as a rule with `produces` says. */
  producedBy?: ObjectKey;
}

interface NearMisses {
  similar: string[]; // names in the referent's namespace
  elsewhere: string[]; // namespaces holding the same name; '' is cluster-scoped
  complete: boolean; // false when the search for similar names stopped at a bound
}

/**
 * Per store that has a keysVersion: its similar-names index and the complete
 * near misses found in it, kept across diagnoses while its keys stay the same
 * (updates of objects under the same keys change neither). A store that
 * gains or loses a key is indexed again on the next diagnosis that needs it.
 */
interface SharedIndex {
  version: number;
  index: SimilarNames;
  nearMisses: Map<ObjectKey, NearMisses>;
}
const shared = new WeakMap<ObjectStore, SharedIndex>();

function sharedIndex(store: ObjectStore): SharedIndex | undefined {
  const entry = shared.get(store);
  return entry !== undefined && entry.version === store.keysVersion ? entry : undefined;
}

/** Keeps the index of store built while its keysVersion was `version`; returns what is kept, if anything. */
function share(store: ObjectStore, version: number | undefined, index: SimilarNames): SharedIndex | undefined {
  if (version === undefined) return undefined;
  const entry = { version, index, nearMisses: new Map<ObjectKey, NearMisses>() };
  shared.set(store, entry);
  return entry;
}

/** The explanation of a reference to a cached object, and what it was worked out from besides the object. */
interface Explained {
  fieldPath: string;
  readiness: ReadinessPredicate;
  failing: WatchError | undefined;
  explanation: ReferenceExplanation;
}

/**
 * Per cached object, the explanations of references to it, kept across
 * diagnoses: a cached object is immutable, so while the readiness predicate
 * and the watch's failure are the same, so is the explanation. Every snapshot
 * a dashboard loads explains the references of every stuck referrer again;
 * kept, it builds no string anew, and the wire encoder finds the same strings
 * it numbered last time.
 */
const explained = new WeakMap<CachedObject, Explained[]>();
/** Explanations kept per object: more than one only when several field paths name it. */
const EXPLAINED_PER_OBJECT = 4;

/** explainCached explains a reference to an object in its kind's primed cache, or returns the kept explanation. */
function explainCached(
  ref: Reference,
  kind: string,
  object: CachedObject,
  readiness: ReadinessPredicate,
  failing: WatchError | undefined,
): ReferenceExplanation {
  let list = explained.get(object);
  if (list === undefined) explained.set(object, (list = []));
  for (const e of list) {
    const same = e.fieldPath === ref.fieldPath && e.explanation.referent === ref.referent;
    if (same && e.readiness === readiness && e.failing === failing) return e.explanation;
  }
  const explanation = Object.freeze(present(ref, kind, readiness(object), failing));
  if (list.length === EXPLAINED_PER_OBJECT) list.shift();
  list.push({ fieldPath: ref.fieldPath, readiness, failing, explanation });
  return explanation;
}

/** present explains a reference to an object in its kind's cache, Ready or not. */
function present(
  ref: Reference,
  kind: string,
  readiness: Readiness,
  failing: WatchError | undefined,
): ReferenceExplanation {
  if (readiness.ready)
    return {
      referent: ref.referent,
      fieldPath: ref.fieldPath,
      state: 'Ready',
      reason: 'Ready',
      message: `${ref.referent} is ready`,
      fix: '',
    };
  const condition = readiness.condition ?? 'ready';
  const reason = readiness.reason ?? 'NotReady';
  const detail = readiness.message && readiness.message !== reason ? `${reason}: ${readiness.message}` : reason;
  const fix =
    reason === 'ConditionMissing'
      ? `wait for the controller of ${kind} to report the ${condition} condition on it; if it never does, check that controller is running`
      : `wait for ${ref.referent} to become ${condition}, or fix what its condition reports (${describeCommand(ref.referent)})`;
  return {
    referent: ref.referent,
    fieldPath: ref.fieldPath,
    state: 'NotReady',
    reason,
    message: `${ref.referent} is not ${condition}: ${detail}${staleNote(kind, failing)}`,
    fix,
  };
}

/** Name comparisons one diagnosis may spend on similar-name searches, so a request costs at most tens of milliseconds. */
const COMPARISON_BUDGET = 250_000;

/**
 * ReferenceDiagnosis explains references from the reference controllers'
 * caches, read-only: it never registers a reference nor starts a watch. One
 * instance serves one request at one instant; it indexes each kind's cache
 * at most once and remembers each missing referent's near misses, so
 * diagnosing many referrers costs one pass per kind plus O(1) per reference.
 */
export class ReferenceDiagnosis {
  private readonly indexes = new Map<string, SimilarNames>();
  private readonly nearMisses = new Map<ObjectKey, NearMisses>();
  private comparisonsLeft = COMPARISON_BUDGET;
  /** Producers whose references are being explained: a cycle of producers ends there. */
  private readonly tracing = new Set<ObjectKey>();

  constructor(
    private readonly referenceControllers: ReferenceControllers,
    private readonly now: number,
  ) {}

  /**
   * prepare builds, `step` keys between steps, the similar-names index that
   * explaining a missing referent of ref's kind would otherwise build at once.
   */
  *prepare(ref: Reference, step: number): Generator<void> {
    const view = this.referenceControllers.inspectFor(ref.referent);
    const sub = view?.subscription;
    if (!view || !sub || !sub.isPrimed() || this.indexes.has(view.id) || sub.store.get(ref.referent)) return;
    const store = sub.store;
    const kept = sharedIndex(store);
    if (kept) {
      this.indexes.set(view.id, kept.index);
      return;
    }
    // The version before the first step: were a key added between steps, the index is not kept for the version after it.
    const version = store.keysVersion;
    const index = yield* SimilarNames.build(store.keys(), step);
    this.indexes.set(view.id, index);
    share(store, version, index);
  }

  /**
   * explain diagnoses one reference. namespaceField is the field that would
   * hold its referent's namespace, null when the reference can only name its
   * referrer's namespace, undefined when unknown (then `<fieldPath>.namespace`).
   */
  explain(ref: Reference, namespaceField?: string | null): ReferenceExplanation {
    const kind = kindOfKey(ref.referent);
    const observed = this.referenceControllers.observed(ref.referent, ref.fieldPath);
    if (observed) return this.polled(ref, kind, observed);
    const outside = this.referenceControllers.outOfScope(ref.referent);
    if (outside)
      return {
        referent: ref.referent,
        fieldPath: ref.fieldPath,
        state: 'Forbidden',
        reason: 'OutOfScope',
        message: outside.message,
        fix: WATCH_ERROR_ADVICE.OutOfScope(kind),
      };
    const view = this.referenceControllers.inspectFor(ref.referent);
    const sub = view?.subscription;
    if (!view || !sub || !sub.isPrimed()) return this.unprimed(ref, kind, view);
    const object = sub.store.get(ref.referent);
    if (!object) {
      const missing = this.notFound(
        ref,
        view.id,
        sub.store,
        view.failing,
        namespaceField === undefined ? namespacePath(ref.fieldPath) : namespaceField,
      );
      return this.producedBy(missing) ?? missing;
    }
    return explainCached(ref, kind, object, this.referenceControllers.readinessOf(kind), view.failing);
  }

  /** polled explains a reference to a kind served by an observer, from what its last poll reported. */
  private polled(ref: Reference, kind: string, view: ObservedReferentView): ReferenceExplanation {
    const base = { referent: ref.referent, fieldPath: ref.fieldPath };
    const r = view.resolution;
    const every = formatDuration(view.intervalMs);
    const when =
      view.lastPollAt !== undefined
        ? `polled ${formatDuration(Math.max(0, this.now - view.lastPollAt))} ago, every ${every}`
        : `polled every ${every}`;
    switch (r.state) {
      case 'Ready':
        return { ...base, state: 'Ready', reason: 'Ready', message: `${ref.referent} is ready (${when})`, fix: '' };
      case 'NotPrimed':
        return {
          ...base,
          state: 'NotPrimed',
          reason: 'NotPolled',
          message: `${ref.referent} has not been polled yet (the ${kind} observer polls every ${every})`,
          fix: 'wait for its first poll',
        };
      case 'NotFound':
        return {
          ...base,
          state: 'NotFound',
          reason: 'NotFound',
          message: `the ${kind} observer did not find ${ref.referent}: ${r.message} (${when})`,
          fix: `create it where the observer looks, or point ${fieldText(ref.fieldPath)} at one that exists`,
        };
      case 'NotReady': {
        const fix =
          r.reason === 'ObserveTimeout'
            ? `the ${kind} observer got no answer in time: check that what it polls is reachable and answers quickly, or raise the observer's timeout`
            : r.reason === 'ObserveFailed'
              ? `the ${kind} observer's poll fails: check that what it polls is reachable (address, network, credentials)`
              : `wait for ${ref.referent} to become ready, or fix what its observer reports`;
        return {
          ...base,
          state: 'NotReady',
          reason: r.reason ?? 'NotReady',
          message: `${ref.referent} is not ready: ${r.message ?? r.reason ?? 'not ready'} (${when})`,
          fix,
        };
      }
    }
  }

  /** unprimed explains a reference whose kind's cache does not hold its initial snapshot. */
  private unprimed(ref: Reference, kind: string, view: ReferenceControllerView | undefined): ReferenceExplanation {
    const base = { referent: ref.referent, fieldPath: ref.fieldPath };
    const failing = view?.failing;
    if (failing?.reason === 'KindUnknown')
      return {
        ...base,
        state: 'KindUnknown',
        reason: 'KindUnknown',
        message: failing.message,
        fix: kindUnknownFix(kind, fieldText(ref.fieldPath)),
      };
    if (failing?.reason === 'Forbidden')
      return {
        ...base,
        state: 'Forbidden',
        reason: 'Forbidden',
        message: failing.message,
        fix: forbiddenFix(kind, failing),
      };
    if (failing) {
      return {
        ...base,
        state: 'WatchError',
        reason: failing.reason,
        message: `the ${kind} watch is failing: ${failing.message}`,
        fix: `${watchErrorAdvice(failing.reason, kind)}; ${this.retry(failing)}`,
      };
    }
    if (!view || !view.subscription) {
      return {
        ...base,
        state: 'NotPrimed',
        reason: 'NotWatched',
        message: `no watch of ${kind} is running${view ? ` (its reference controller is ${view.state})` : ''}`,
        fix: `wait: the watch starts when a reconcile declares a reference to ${kind}`,
      };
    }
    return {
      ...base,
      state: 'NotPrimed',
      reason: 'Priming',
      message: `the ${kind} cache has been loading its initial snapshot for ${formatDuration(Math.max(0, this.now - view.startedAt))}`,
      fix: `wait: nothing is judged missing until the cache is primed; if priming takes long, check the API server's health and how many ${kind} objects it lists`,
    };
  }

  /**
   * notFound explains a referent missing from the cache of scope (a kind, or a
   * kind in one namespace); namespaceField is null when the reference cannot
   * name another namespace.
   */
  private notFound(
    ref: Reference,
    scope: string,
    store: ObjectStore,
    failing: WatchError | undefined,
    namespaceField: string | null,
  ): ReferenceExplanation {
    const { referent, fieldPath } = ref;
    const kind = kindOfKey(referent);
    const namespace = namespaceOfKey(referent);
    const name = nameOfKey(referent);
    const near = this.nearMissesOf(referent, scope, store);
    const suggestions = [
      ...near.elsewhere.map((ns) => `${kind}/${ns}/${name}`),
      ...near.similar.map((n) => `${kind}/${namespace}/${n}`),
    ];
    const clauses: string[] = [];
    if (near.similar.length > 0) clauses.push(`did you mean ${near.similar.join(' or ')}?`);
    if (near.elsewhere.length > 0) clauses.push(`${name} exists ${whereText(near.elsewhere)}`);
    if (!near.complete) clauses.push(`only part of the ${kind} cache was searched for similar names`);
    const message = `${referent} not found${clauses.length > 0 ? `; ${clauses.join('; ')}` : ''}${staleNote(kind, failing)}`;
    let fix: string;
    if (near.elsewhere.length > 0) {
      const other = near.elsewhere[0]!;
      if (namespaceField === null) {
        // The reference names an object of the referrer's own namespace: only a copy there can serve it.
        fix = `${fieldText(fieldPath)} can only name a ${kind} in the referrer's own namespace ${namespace}: create ${kind} ${name} in ${namespace} (a copy of the one in ${other === '' ? 'the cluster scope' : `namespace ${other}`})`;
      } else {
        fix =
          other === ''
            ? `${kind} ${name} is cluster-scoped: leave ${namespaceField} empty`
            : namespace === ''
              ? `set ${namespaceField} to ${other}`
              : `set ${namespaceField} to ${other}, or move ${name} to namespace ${namespace}`;
      }
    } else if (near.similar.length > 0) {
      fix = `set ${fieldText(fieldPath)} to ${near.similar[0]}, or create ${referent}`;
    } else {
      fix = `create ${referent}, or point ${fieldText(fieldPath)} at an existing ${kind} (${listCommand(kind, namespace)})`;
    }
    const out: ReferenceExplanation = { referent, fieldPath, state: 'NotFound', reason: 'NotFound', message, fix };
    if (suggestions.length > 0) out.suggestions = suggestions;
    return out;
  }

  /**
   * producedBy explains a missing referent that another object produces (a
   * Secret a Certificate creates): the producer, and what blocks it, followed
   * down to the deepest cause. Undefined when no rule names a producer.
   */
  private producedBy(missing: ReferenceExplanation): ReferenceExplanation | undefined {
    let found: { source: ProducerSource; producer: Producer } | undefined;
    for (const source of producerSourcesOf(this.referenceControllers)) {
      const producer = source.producersOf(missing.referent)[0];
      if (producer) {
        found = { source, producer };
        break;
      }
    }
    if (!found || this.tracing.has(found.producer.producer)) return undefined;
    const { source, producer } = found;
    const by = `it is produced by ${producer.producer} (${producer.fieldPath})`;
    this.tracing.add(producer.producer);
    let blocking: ReferenceExplanation | undefined;
    try {
      for (const ref of source.referencesOf(producer.controller, producer.producer)) {
        const e = this.explain(ref, source.namespaceFieldOf(producer.controller, ref.fieldPath));
        if (e.state === 'NotFound') {
          blocking = e;
          break;
        }
        if (e.state !== 'Ready') blocking ??= e;
      }
    } finally {
      this.tracing.delete(producer.producer);
    }
    const base = { referent: missing.referent, fieldPath: missing.fieldPath, producedBy: producer.producer };
    if (blocking)
      return {
        ...base,
        state: 'NotFound',
        reason: 'NotProduced',
        message: `${missing.referent} not found: ${by}, which waits on ${blocking.referent}: ${blocking.message}`,
        fix: blocking.fix,
      };
    return {
      ...base,
      state: 'NotFound',
      reason: 'NotProduced',
      message: `${missing.referent} not found: ${by}, whose references are all ready`,
      fix: `wait for the controller of ${kindOfKey(producer.producer)} to create it; if it does not, see what it reports (${describeCommand(producer.producer)})`,
    };
  }

  private nearMissesOf(referent: ObjectKey, scope: string, store: ObjectStore): NearMisses {
    let near = this.nearMisses.get(referent);
    if (near) return near;
    let kept = sharedIndex(store);
    near = kept?.nearMisses.get(referent);
    if (near) {
      this.nearMisses.set(referent, near);
      return near;
    }
    let index = this.indexes.get(scope);
    if (!index) {
      index = kept?.index ?? new SimilarNames(store.keys());
      this.indexes.set(scope, index);
      kept ??= share(store, store.keysVersion, index);
    }
    const namespace = namespaceOfKey(referent);
    const name = nameOfKey(referent);
    const found = index.similarIn(namespace, name, Math.min(MAX_COMPARISONS_PER_LOOKUP, this.comparisonsLeft));
    this.comparisonsLeft -= found.compared;
    near = {
      similar: found.matches.map((s) => s.name),
      elsewhere: index.namespacesWith(name, namespace),
      complete: found.complete,
    };
    this.nearMisses.set(referent, near);
    // Kept for later diagnoses only when complete (one with more of its budget left would search further), and only beside the index it came from.
    if (near.complete && kept?.index === index) kept.nearMisses.set(referent, near);
    return near;
  }

  private retry(error: WatchError): string {
    if (error.retryAt === undefined) return 'no retry is scheduled';
    const wait = error.retryAt - this.now;
    return wait <= 0 ? 'the watch is retrying now' : `the watch retries in ${formatDuration(wait)}`;
  }
}

/** guessResource turns a kind into its likely plural resource name, as kubectl guesses it (Database → databases). */
export function guessResource(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** rbacRule renders a rule the way a ClusterRole's rules spell it. */
export function rbacRule(rule: { apiGroup: string; resource: string; verbs: readonly string[] }): string {
  return `apiGroups: ${JSON.stringify([rule.apiGroup])}, resources: ${JSON.stringify([rule.resource])}, verbs: ${JSON.stringify(rule.verbs)}`;
}

function groupKindOf(kind: string): GroupKind {
  const parsed = parseKindKey(kind);
  return parsed.ok ? parsed.value : { group: '', kind };
}

/** resourceOf is the `resource.group` name kubectl and CRDs use (databases.demo.refwatch.dev), guessed from the kind. */
export function resourceOf(kind: string): string {
  const gk = groupKindOf(kind);
  const resource = guessResource(gk.kind);
  return gk.group === '' ? resource : `${resource}.${gk.group}`;
}

function kindUnknownFix(kind: string, fieldPath: string): string {
  const gk = groupKindOf(kind);
  if (gk.group === '' || gk.group.endsWith('.k8s.io'))
    return `this cluster does not serve ${kind}: correct the kind ${fieldPath} refers to, or use a cluster version that serves it`;
  return `install the CustomResourceDefinition for ${resourceOf(kind)}, or correct the kind ${fieldPath} refers to`;
}

function forbiddenFix(kind: string, error: WatchError): string {
  const gk = groupKindOf(kind);
  const rule = error.missingRule ?? {
    apiGroup: gk.group,
    resource: guessResource(gk.kind),
    verbs: ['get', 'list', 'watch'],
  };
  const snippet = rbacRule(rule);
  if (!error.missingRule)
    return `check the credentials the controller uses, then grant its service account this ClusterRole rule: ${snippet}`;
  if (rule.namespace)
    return `grant the controller's service account this rule in a Role in namespace ${rule.namespace}: ${snippet}`;
  return `grant the controller's service account this ClusterRole rule: ${snippet}`;
}

const WATCH_ERROR_ADVICE: Record<WatchErrorReason, (kind: string) => string> = {
  Unreachable: () => 'check that the API server is reachable from refwatch (its address, the network, any proxy)',
  Throttled: () =>
    'the API server is throttling requests (429): raise its priority-and-fairness limits for this client, or reduce the load',
  ServerError: () => 'the API server is failing (5xx): check its logs and health',
  Expired: () =>
    "the watch lists again after 410 Gone and recovers by itself; if it keeps happening, check etcd compaction and the API server's watch cache",
  Invalid: (kind) => `the API server rejected the watch request: check the kind ${kind} and any selector`,
  KindUnknown: (kind) => kindUnknownFix(kind, 'the reference'),
  Forbidden: () => 'grant the controller list and watch on this kind',
  OutOfScope: () =>
    "add the referent's namespace to the Manager's namespaces option (the server's --namespaces), or point the reference into a namespace it lists",
  ObserveFailed: () => "check that what the kind's observer polls is reachable",
  ObserveTimeout: () => "check that what the kind's observer polls answers within the observer's timeout",
};

function watchErrorAdvice(reason: WatchErrorReason, kind: string): string {
  return (WATCH_ERROR_ADVICE[reason] ?? (() => 'check the API server'))(kind);
}

/** staleNote warns that a primed cache may be behind the cluster while its watch fails. */
function staleNote(kind: string, failing: WatchError | undefined): string {
  return failing ? ` (the ${kind} watch is failing with ${failing.reason}, so the cache may be stale)` : '';
}

function whereText(namespaces: string[]): string {
  const named = namespaces.filter((ns) => ns !== '');
  const parts: string[] = [];
  if (named.length > 0) parts.push(`in namespace${named.length > 1 ? 's' : ''} ${named.join(', ')}`);
  if (named.length < namespaces.length) parts.push('cluster-scoped');
  return parts.join(' and ');
}

function fieldText(fieldPath: string): string {
  return fieldPath === '' ? 'the reference' : fieldPath;
}

/** namespacePath is the field that would hold the referent's namespace: spec.databaseRef(.name) → spec.databaseRef.namespace. */
function namespacePath(fieldPath: string): string {
  if (fieldPath === '') return "the reference's namespace";
  return fieldPath.endsWith('.name') ? `${fieldPath.slice(0, -'.name'.length)}.namespace` : `${fieldPath}.namespace`;
}

function describeCommand(referent: ObjectKey): string {
  const namespace = namespaceOfKey(referent);
  return `kubectl describe ${resourceOf(kindOfKey(referent))}${namespace ? ` -n ${namespace}` : ''} ${nameOfKey(referent)}`;
}

function listCommand(kind: string, namespace: string): string {
  return `kubectl get ${resourceOf(kind)}${namespace ? ` -n ${namespace}` : ''}`;
}
