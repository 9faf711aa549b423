import {
  kindOfKey,
  lastManager,
  namespaceOfKey,
  shared,
  parseKindKey,
  type CachedObject,
  type Labels,
  type ObjectKey,
  type Selector,
} from '../model';
import type { ReferenceRegistry, Referrer } from '../registry';
import type {
  ChangeLog,
  ReferenceControllerEntity,
  ReferenceControllerState,
  ReferentEntity,
  ReferentState,
} from '../changelog';
import type { Clock } from '../queue';
import type { InformerEvent, InformerSource, InformerSubscription, ObjectStore, WatchError } from './informer-source';
import type { Readiness, ReadinessPredicate } from './readiness';
import type { Resolution, ResolutionState } from './resolution';
import type { ObservedReferentView, Observers } from './observer';
import { LabelIndex, type SelectorWatch } from './label-index';
import { existenceVerdict, updateVerdict, WAKE_ALL, WAKE_PRIMED, type WakeFilters } from './wake';

const MAX_ERRORS = 10;
const MAX_HISTORY = 30;

export interface ReferenceControllersDeps {
  source: InformerSource;
  registry: ReferenceRegistry;
  changelog: ChangeLog;
  clock: Clock;
  /** How long a kind with no references keeps its watch before it is cancelled. */
  grace: number;
  readiness: (kind: string) => ReadinessPredicate;
  /** Whether the kind's watch may serve metadata only (its readiness needs no more). */
  metadataOnly: (kind: string) => boolean;
  /** Queues one referrer of a changed referent (through its controller's work queue). */
  enqueue: (controller: string, referrer: ObjectKey) => void;
  /** Watch only these namespaces (the Manager's `namespaces` option); undefined: all of them. */
  namespaces?: readonly string[];
  /** Kinds served by polling instead of a watch: no watch starts for them, and they resolve from their observer. */
  observers?: Observers;
  /** The referrers that asked to be woken by less than every change (wakeOn). */
  wake?: WakeFilters;
  /** Told when a kind's cluster-wide list is Forbidden and it is watched in each namespace of its referents instead. */
  onScopeFallback?: (kind: string) => void;
  /** How long a cancelled controller stays listed (the dashboard's recent cancellations) before it is removed (ms). */
  cancelledRetention: number;
  /** At most this many cancelled controllers stay listed; beyond it the oldest cancelled one goes at once. */
  maxCancelled: number;
}

/** ReferenceScope is what one reference controller watches: a kind, in all namespaces or in one. */
export interface ReferenceScope {
  kind: string;
  namespace?: string;
}

/** scopeId names a scope's reference controller: the kind key, or `Kind.group/namespace`. */
export function scopeId(kind: string, namespace?: string): string {
  return namespace ? `${kind}/${namespace}` : kind;
}

/**
 * ReferenceController is the shared watch, cache and dispatcher of one
 * referent kind. Its whole lifecycle lives in ReferenceControllers below.
 */
interface ReferenceController {
  id: string;
  kind: string;
  /** Set for a per-namespace controller, which watches only there. */
  namespace?: string;
  /** A per-namespace controller's referenced referents: it lives while one remains. */
  referents?: Set<ObjectKey>;
  state: ReferenceControllerState;
  reason: string;
  subscription: InformerSubscription | undefined;
  /** Bumped on each (re)start so events from a cancelled subscription are ignored. */
  generation: number;
  startedAt: number;
  primedAt?: number;
  graceTimer?: unknown;
  graceUntil?: number;
  /** While Cancelled: the timer that removes it once the retention window is over. */
  retentionTimer?: unknown;
  cancelledAt?: number;
  dispatches: number;
  errors: WatchError[];
  /** The error the watch is failing with now; cleared when it recovers, primes or restarts. */
  failing?: WatchError;
  history: ReferenceControllerEntity['history'];
  /**
   * The selectors registered on this kind, on the cache's label index: they keep the kind watched, and the
   * index with it. The index holds the cache's objects while the cache is primed (`loaded`).
   */
  selectors?: LabelIndex;
}

/** SelectAnswer is a selector's match set from its kind's cache, or why the cache cannot answer yet. */
export type SelectAnswer =
  | { primed: true; keys: ObjectKey[]; store: ObjectStore }
  | { primed: false; error: WatchError | undefined; message: string };

/** ReferenceControllerView is a read-only look at one reference controller, for diagnosis. */
export interface ReferenceControllerView {
  id: string;
  kind: string;
  namespace?: string;
  state: ReferenceControllerState;
  startedAt: number;
  primedAt?: number;
  subscription: InformerSubscription | undefined;
  failing: WatchError | undefined;
}

/**
 * ReferenceControllers runs one reference controller per referent kind, or
 * per kind and namespace for a namespaced kind when the manager is given
 * `namespaces` or when listing the kind in all namespaces is Forbidden:
 *
 *   first reference ─▶ Starting ─▶ Priming ─(initial snapshot)─▶ Active
 *   last reference gone ─▶ Grace ─(re-referenced)─▶ Active | Priming
 *                               └─(grace elapsed)─▶ Cancelled: watch released
 *   a reference after Cancelled starts a new watch (Starting again).
 *
 * Until a kind is primed nothing is dispatched and nothing is NotFound
 * (invariant 4). A referent event adds that referent's referrers to their
 * controllers' queues (invariant 5); reconcilers then read the cache (7).
 *
 * A per-namespace controller follows the same lifecycle, started by the
 * first reference into its namespace and cancelled a grace period after the
 * last. A kind found Forbidden in all namespaces is remembered for the life
 * of the manager and never listed cluster-wide again: RBAC rarely widens
 * while a controller runs, and a restart probes afresh.
 */
export class ReferenceControllers {
  private readonly byId = new Map<string, ReferenceController>();
  /** The ids of the Cancelled controllers, oldest cancellation first. */
  private readonly cancelled = new Set<string>();
  private readonly releasing = new Set<Promise<void>>();
  private readonly namespaces: ReadonlySet<string> | undefined;
  /** Kinds whose cluster-wide list was Forbidden: watched per namespace from then on. */
  private readonly forbiddenClusterWide = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: ReferenceControllersDeps) {
    if (deps.namespaces) this.namespaces = new Set(deps.namespaces);
    deps.registry.subscribe({
      onDelta: (d) => {
        if (this.namespaces || this.forbiddenClusterWide.size > 0)
          for (const r of [...d.removed, ...d.added]) this.trackNamespaced(r.referent);
      },
      onKind: (e) => {
        if (deps.observers?.observes(e.kind)) return;
        if (this.perNamespace(e.kind)) return; // trackNamespaced runs those
        if (e.type === 'active') this.ensure({ kind: e.kind });
        else this.beginGrace(this.byId.get(e.kind));
      },
    });
  }

  /** outOfScope says why a referent cannot be watched: its namespace is outside the `namespaces` option. */
  outOfScope(referent: ObjectKey): WatchError | undefined {
    if (!this.namespaces) return undefined;
    const namespace = namespaceOfKey(referent);
    if (namespace === '' || this.namespaces.has(namespace)) return undefined;
    const list = [...this.namespaces].join(', ');
    return {
      reason: 'OutOfScope',
      message: `${referent} is in namespace ${namespace}, outside the namespaces this manager watches (${list}): add ${namespace} to the Manager's namespaces option (the server's --namespaces) or point the reference into ${list}`,
      at: this.deps.clock.now(),
    };
  }

  /** scopeOf is the scope whose reference controller serves a referent. */
  scopeOf(referent: ObjectKey): ReferenceScope {
    return this.scopeIn(kindOfKey(referent), namespaceOfKey(referent));
  }

  /** scopeIn is scopeOf for the objects of a kind in a namespace ('' cluster-scoped), with no key to build and parse. */
  scopeIn(kind: string, namespace: string): ReferenceScope {
    if (namespace !== '' && this.splitsByNamespace(kind)) return { kind, namespace };
    return { kind };
  }

  /** resolve reads one referent from its kind's shared cache. The reference must already be registered. */
  resolve(referent: ObjectKey, fieldPath: string): Resolution {
    // The kind is sliced out of the key once, and the namespace only where controllers are split by it: a
    // reconcile resolves each of its references, and each slice is a new string to hash for the lookups.
    const kind = kindOfKey(referent);
    // A polled kind is outside Kubernetes: no namespace scope applies to it.
    if (this.deps.observers?.observes(kind)) return this.deps.observers.resolve(referent, fieldPath);
    const outside = this.outOfScope(referent);
    if (outside)
      return resolutionOf('NotPrimed', referent, fieldPath, undefined, outside.reason, outside.message, outside);
    const namespace = this.splitsByNamespace(kind) ? namespaceOfKey(referent) : '';
    const rc = this.byId.get(scopeId(kind, namespace)) ?? this.ensure(this.scopeIn(kind, namespace));
    const sub = rc.subscription;
    if (!sub || !sub.isPrimed()) {
      const error = rc.errors.at(-1);
      return resolutionOf(
        'NotPrimed',
        referent,
        fieldPath,
        undefined,
        error?.reason ?? 'NotPrimed',
        error?.message ?? `the ${label(rc)} cache is still loading its initial snapshot`,
        error,
      );
    }
    const object = sub.store.get(referent);
    if (!object) return resolutionOf('NotFound', referent, fieldPath, undefined, 'NotFound', `${referent} not found`);
    const r = this.deps.readiness(kind)(object);
    if (r.ready) return resolutionOf('Ready', referent, fieldPath, object);
    return resolutionOf(
      'NotReady',
      referent,
      fieldPath,
      object,
      r.reason ?? 'NotReady',
      r.message ?? r.reason ?? 'not ready',
    );
  }

  /** isReady says whether a referent resolves Ready now, as resolve() would judge it, starting nothing. */
  isReady(referent: ObjectKey): boolean {
    return this.isReadyObject(kindOfKey(referent), referent, this.cached(referent));
  }

  /** isReadyObject is isReady for a referent of a known kind whose cached object the caller holds. */
  isReadyObject(kind: string, referent: ObjectKey, object: CachedObject | undefined): boolean {
    if (this.deps.observers?.observes(kind)) return this.deps.observers.resolve(referent, '').state === 'Ready';
    if (object === undefined || this.outOfScope(referent)) return false;
    return this.deps.readiness(kind)(object).ready;
  }

  /** cached returns a referent's cached object, if its kind is watched and primed. */
  cached(referent: ObjectKey): CachedObject | undefined {
    const sub = this.controllerOf(referent)?.subscription;
    return sub?.isPrimed() ? sub.store.get(referent) : undefined;
  }

  /** subscriptionOf exposes a scope's subscription (store and watch status), for diagnosis. */
  subscriptionOf(kind: string, namespace?: string): InformerSubscription | undefined {
    return this.byId.get(scopeId(kind, namespace))?.subscription;
  }

  /** inspect looks at a scope's reference controller without starting one: diagnosis must not watch or register. */
  inspect(kind: string, namespace?: string): ReferenceControllerView | undefined {
    const rc = this.byId.get(scopeId(kind, namespace));
    if (!rc) return undefined;
    const view: ReferenceControllerView = {
      id: rc.id,
      kind,
      state: rc.state,
      startedAt: rc.startedAt,
      primedAt: rc.primedAt,
      subscription: rc.subscription,
      failing: rc.failing,
    };
    if (rc.namespace) view.namespace = rc.namespace;
    return view;
  }

  /** inspectFor is inspect for the scope serving a referent. */
  inspectFor(referent: ObjectKey): ReferenceControllerView | undefined {
    const scope = this.scopeOf(referent);
    return this.inspect(scope.kind, scope.namespace);
  }

  /** observed is diagnosis's look at a referent of a polled kind; undefined when its kind is watched. */
  observed(referent: ObjectKey, fieldPath: string): ObservedReferentView | undefined {
    return this.deps.observers?.inspect(referent, fieldPath);
  }

  /** readinessOf is the readiness predicate the engine applies to referents of the kind. */
  readinessOf(kind: string): ReadinessPredicate {
    return this.deps.readiness(kind);
  }

  state(kind: string, namespace?: string): ReferenceControllerState | undefined {
    return this.byId.get(scopeId(kind, namespace))?.state;
  }

  entities(): ReferenceControllerEntity[] {
    return [...this.byId.values()].map((rc) => this.entity(rc)).concat(this.deps.observers?.entities() ?? []);
  }

  /**
   * refreshCounts republishes the reference controllers whose counts (references,
   * cached referents, dispatches) moved since they were last published. Counts
   * change on every event; publishing them periodically keeps that off the dispatch path.
   */
  refreshCounts(): void {
    for (const rc of this.byId.values()) {
      const prev = this.deps.changelog.get('controller', rc.id);
      const references = this.referenceCount(rc);
      const referents = rc.subscription?.store.size ?? 0;
      if (prev && prev.references === references && prev.referents === referents && prev.dispatches === rc.dispatches)
        continue;
      this.publish(rc);
    }
  }

  /**
   * watchSelector registers a selector on its kind's scope: the kind is
   * watched while a selector looks at it (a selector matching nothing keeps
   * the watch too), its cache keeps a label index, and a change of an
   * object's labels that changes the selector's match set queues the referrer.
   */
  watchSelector(scope: ReferenceScope, watch: SelectorWatch): void {
    const rc = this.ensure(scope);
    (rc.selectors ??= new LabelIndex()).watch(watch);
    if (!rc.selectors.loaded && rc.subscription?.isPrimed()) this.indexLabels(rc);
    this.publish(rc);
  }

  /** unwatchSelector drops a selector; a kind left with neither references nor selectors begins its grace. */
  unwatchSelector(scope: ReferenceScope, watch: SelectorWatch): void {
    const rc = this.byId.get(scopeId(scope.kind, scope.namespace));
    if (!rc?.selectors) return;
    rc.selectors.unwatch(watch);
    if (rc.selectors.watchCount > 0) return;
    rc.selectors = undefined;
    if (this.referenceCount(rc) === 0) this.beginGrace(rc);
    else this.publish(rc);
  }

  /** select answers a registered selector from its scope's label index: the matching keys, or why not yet. */
  select(scope: ReferenceScope, namespace: string | undefined, selector: Selector): SelectAnswer {
    const rc = this.byId.get(scopeId(scope.kind, scope.namespace));
    const sub = rc?.subscription;
    if (!rc || !sub?.isPrimed() || !rc.selectors?.loaded) {
      const error = rc?.errors.at(-1);
      const what = rc ? label(rc) : scope.kind;
      return {
        primed: false,
        error,
        message: error?.message ?? `the ${what} cache is still loading its initial snapshot`,
      };
    }
    return { primed: true, keys: rc.selectors.select(namespace, selector), store: sub.store };
  }

  /** labelsIn lists the label sets of a scope's cached objects in a namespace, for explaining a selector that matches nothing. */
  labelsIn(scope: ReferenceScope, namespace: string): Labels[] {
    const index = this.byId.get(scopeId(scope.kind, scope.namespace))?.selectors;
    if (!index?.loaded) return [];
    const out: Labels[] = [];
    for (const key of index.keysIn(namespace)) out.push(index.labels(key)!);
    return out;
  }

  /** labelIndexOf exposes a scope's label index, for tests and benchmarks. */
  labelIndexOf(kind: string, namespace?: string): LabelIndex | undefined {
    return this.byId.get(scopeId(kind, namespace))?.selectors;
  }

  private indexLabels(rc: ReferenceController): void {
    const store = rc.subscription?.store;
    if (!store || !rc.selectors) return;
    rc.selectors.load(store.keys(), (key) => store.get(key)?.metadata.labels);
  }

  /** relabel keeps the label index in step with one event and queues the referrers whose selectors' answers it changed. */
  private relabel(rc: ReferenceController, event: InformerEvent & { type: 'added' | 'updated' | 'deleted' }): void {
    const index = rc.selectors!;
    if (event.type === 'deleted') index.delete(event.key, this.enqueueSelector);
    else index.set(event.key, namespaceOfKey(event.key), event.object.metadata.labels, this.enqueueSelector);
  }

  /** stop cancels every reference controller and awaits their releases. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const rc of this.byId.values()) {
      this.clearGrace(rc);
      this.clearRetention(rc);
      if (rc.subscription) this.release(rc);
    }
    await Promise.all([...this.releasing]);
  }

  private controllerOf(referent: ObjectKey): ReferenceController | undefined {
    const scope = this.scopeOf(referent);
    return this.byId.get(scopeId(scope.kind, scope.namespace));
  }

  /** perNamespace says whether the kind's referents are watched per namespace (never true of a cluster-scoped kind). */
  private perNamespace(kind: string): boolean {
    return this.splitsByNamespace(kind) && this.hasNamespacedReferents(kind);
  }

  /** splitsByNamespace says whether a kind's namespaced referents are watched per namespace: scopeIn's rule. */
  private splitsByNamespace(kind: string): boolean {
    return this.namespaces !== undefined || this.forbiddenClusterWide.has(kind);
  }

  /** hasNamespacedReferents says whether the kind is namespaced, as far as its referents tell (a kind is one or the other). */
  private hasNamespacedReferents(kind: string): boolean {
    for (const referent of this.deps.registry.referentsOfKind(kind)) return namespaceOfKey(referent) !== '';
    return false;
  }

  /** trackNamespaced starts or ends the grace of a per-namespace controller as its referents come and go. */
  private trackNamespaced(referent: ObjectKey): void {
    if (this.deps.observers?.observes(kindOfKey(referent))) return;
    const scope = this.scopeOf(referent);
    if (scope.namespace === undefined || this.outOfScope(referent)) return;
    if (this.deps.registry.isReferenced(referent)) {
      this.ensure(scope).referents?.add(referent);
      return;
    }
    const rc = this.byId.get(scopeId(scope.kind, scope.namespace));
    if (!rc?.referents?.delete(referent)) return;
    if (rc.referents.size === 0) this.beginGrace(rc);
  }

  /**
   * watchPerNamespace gives up the kind's cluster-wide watch after a 403 and
   * starts one per namespace its referents live in; RBAC grants those with
   * Roles. Referrers wake when each namespace's cache primes.
   */
  private watchPerNamespace(rc: ReferenceController): void {
    this.forbiddenClusterWide.add(rc.kind);
    this.cancel(
      rc,
      `listing ${rc.kind} in all namespaces is forbidden: watching each namespace its referents live in instead`,
    );
    for (const referent of this.deps.registry.referentsOfKind(rc.kind)) this.trackNamespaced(referent);
    this.deps.onScopeFallback?.(rc.kind);
  }

  private referenceCount(rc: ReferenceController): number {
    let n = rc.selectors?.watchCount ?? 0;
    // A kind forbidden cluster-wide has its references counted by its per-namespace controllers.
    if (!rc.referents) return n + (this.forbiddenClusterWide.has(rc.kind) ? 0 : this.deps.registry.kindCount(rc.kind));
    for (const referent of rc.referents) n += this.deps.registry.referrerCountOf(referent);
    return n;
  }

  private referentsOf(rc: ReferenceController): Iterable<ObjectKey> {
    return rc.referents ?? this.deps.registry.referentsOfKind(rc.kind);
  }

  private ensure(scope: ReferenceScope): ReferenceController {
    const { kind, namespace } = scope;
    const id = scopeId(kind, namespace);
    let rc = this.byId.get(id);
    if (rc && rc.state === 'Grace') {
      // Re-referenced within grace: keep the watch.
      this.clearGrace(rc);
      this.transition(
        rc,
        rc.subscription?.isPrimed() ? 'Active' : 'Priming',
        'referenced again within the grace period',
        'ControllerReactivated',
      );
      return rc;
    }
    if (rc && rc.state !== 'Cancelled') return rc;
    if (rc) this.clearRetention(rc);
    const now = this.deps.clock.now();
    if (!rc) {
      rc = {
        id,
        kind,
        state: 'Starting',
        reason: 'first reference',
        subscription: undefined,
        generation: 0,
        startedAt: now,
        dispatches: 0,
        errors: [],
        history: [],
      };
      if (namespace !== undefined) {
        rc.namespace = namespace;
        rc.referents = new Set();
      }
      this.byId.set(id, rc);
    } else {
      rc.startedAt = now;
      rc.primedAt = undefined;
      rc.cancelledAt = undefined;
      rc.graceUntil = undefined;
      rc.failing = undefined;
    }
    this.transition(
      rc,
      'Starting',
      rc.generation === 0 ? 'first reference' : 'referenced again after cancellation',
      'ControllerStarted',
    );
    if (this.stopped) return rc;
    const parsed = parseKindKey(kind);
    if (!parsed.ok) {
      this.recordError(rc, { reason: 'Invalid', message: parsed.error.message, at: now });
      return rc;
    }
    const generation = ++rc.generation;
    const controller = rc;
    rc.subscription = this.deps.source.acquire(
      namespace === undefined ? parsed.value : { ...parsed.value, namespace },
      (event) => {
        if (controller.generation === generation) this.onEvent(controller, event);
      },
      { metadataOnly: this.deps.metadataOnly(kind) },
    );
    if (rc.state === 'Starting')
      this.transition(
        rc,
        rc.subscription.isPrimed() ? 'Active' : 'Priming',
        rc.subscription.isPrimed() ? 'cache already primed' : 'loading the initial snapshot',
      );
    return rc;
  }

  private onEvent(rc: ReferenceController, event: InformerEvent): void {
    switch (event.type) {
      case 'added':
      case 'updated':
      case 'deleted':
        // Priming gate: the cache fills, but nothing is dispatched or judged until primed.
        if (!rc.subscription?.isPrimed()) return;
        if (rc.selectors?.loaded) this.relabel(rc, event);
        if (!this.deps.registry.isReferenced(event.key)) return;
        rc.dispatches++;
        if (this.deps.observers?.observes(rc.kind)) this.deps.observers.publishReferent(event.key);
        else {
          // The event's own controller and one readiness verdict serve both the published state and the wake bits.
          const readiness = this.deps.readiness(rc.kind);
          const object = event.type === 'deleted' ? undefined : event.object;
          const verdict = object && readiness(object);
          const before = this.publishWatched(rc, event.key, object, verdict);
          // What the event changed is judged once per event, and only when some referrer filters. The old
          // object's readiness is the state published for it, when that is a verdict: the old object is not
          // read again (it is cold by now, and reading its conditions cost more than the rest of the dispatch).
          if (!this.deps.wake?.filtered(event.key)) this.dispatch(event.key);
          else if (event.type === 'updated')
            this.dispatch(
              event.key,
              updateVerdict(event.old, event.object, readiness, verdict!.ready, verdictOf(before)),
            );
          else this.dispatch(event.key, existenceVerdict(event.object, readiness, verdict?.ready));
        }
        return;
      case 'primed': {
        rc.primedAt = this.deps.clock.now();
        rc.failing = undefined;
        if (rc.state === 'Priming' || rc.state === 'Starting')
          this.transition(
            rc,
            'Active',
            `initial snapshot of ${rc.subscription?.store.size ?? 0} objects in ${rc.primedAt - rc.startedAt} ms`,
            'ControllerPrimed',
          );
        else this.publish(rc);
        if (rc.selectors) {
          this.indexLabels(rc);
          rc.selectors.forEachWatch(this.enqueueSelector);
        }
        // Referrers told NotPrimed meanwhile run again, now against a full cache.
        for (const referent of [...this.referentsOf(rc)]) {
          this.publishReferent(referent, rc.subscription?.store.get(referent));
          this.dispatch(referent, WAKE_PRIMED);
        }
        return;
      }
      case 'error': {
        this.recordError(rc, event.error);
        const rule = event.error.missingRule;
        if (
          rc.namespace === undefined &&
          event.error.reason === 'Forbidden' &&
          rule &&
          rule.namespace === undefined &&
          this.hasNamespacedReferents(rc.kind)
        ) {
          this.watchPerNamespace(rc);
          return;
        }
        if (!rc.subscription?.isPrimed())
          for (const referent of [...this.referentsOf(rc)]) this.publishReferent(referent, undefined);
        return;
      }
      case 'recovered':
        rc.failing = undefined;
        this.appendHistory(rc, rc.state, 'watch recovered');
        this.event('WatchRecovered', rc.kind, `${label(rc)} watch recovered`);
        this.publish(rc);
        return;
    }
  }

  /** dispatch queues the referrers of the referent that a change with these bits wakes: the hot path of a referent event. */
  private dispatch(referent: ObjectKey, bits = WAKE_ALL): void {
    const wake = this.deps.wake;
    if (!wake?.filtered(referent)) this.deps.registry.forEachReferrerOf(referent, this.enqueueReferrer);
    else wake.dispatchAll(referent, bits, this.deps.enqueue);
  }

  /** Bound once: dispatch and relabel pass them on every event, and an event should allocate nothing for them. */
  private readonly enqueueReferrer = (r: Referrer): void => this.deps.enqueue(r.controller, r.key);
  private readonly enqueueSelector = (w: SelectorWatch): void => this.deps.enqueue(w.controller, w.referrer);

  private beginGrace(rc: ReferenceController | undefined): void {
    if (!rc || rc.state === 'Cancelled' || rc.state === 'Grace') return;
    if (rc.selectors && rc.selectors.watchCount > 0) return; // a selector still looks at the kind
    const grace = this.deps.grace;
    rc.graceUntil = this.deps.clock.now() + grace;
    this.transition(
      rc,
      'Grace',
      `no references left; cancelling in ${grace} ms unless referenced again`,
      'ControllerGrace',
    );
    rc.graceTimer = this.deps.clock.setTimeout(() => {
      rc.graceTimer = undefined;
      if (rc.state !== 'Grace' || this.referenceCount(rc) > 0) return;
      this.cancel(rc, `no references for ${grace} ms`);
    }, grace);
  }

  private cancel(rc: ReferenceController, reason: string): void {
    rc.cancelledAt = this.deps.clock.now();
    rc.graceUntil = undefined;
    this.release(rc);
    this.transition(rc, 'Cancelled', reason, 'ControllerCancelled');
    this.retain(rc);
  }

  /**
   * retain keeps a cancelled controller listed for the retention window, and
   * at most maxCancelled of them: per-namespace controllers come and go with
   * namespaces, and a set that only grew would be counted, published and
   * held for ever.
   */
  private retain(rc: ReferenceController): void {
    if (this.stopped) return;
    this.cancelled.delete(rc.id);
    this.cancelled.add(rc.id);
    rc.retentionTimer = this.deps.clock.setTimeout(() => {
      rc.retentionTimer = undefined;
      this.forget(rc);
    }, this.deps.cancelledRetention);
    for (const id of this.cancelled) {
      if (this.cancelled.size <= this.deps.maxCancelled) break;
      const oldest = this.byId.get(id);
      if (oldest) this.forget(oldest);
      else this.cancelled.delete(id);
    }
  }

  /** forget removes a cancelled controller: from the set, the change log and the counts. */
  private forget(rc: ReferenceController): void {
    if (rc.state !== 'Cancelled' || this.byId.get(rc.id) !== rc) return;
    this.clearRetention(rc);
    this.byId.delete(rc.id);
    this.deps.changelog.remove('controller', rc.id);
  }

  private clearRetention(rc: ReferenceController): void {
    if (rc.retentionTimer !== undefined) this.deps.clock.clearTimeout(rc.retentionTimer);
    rc.retentionTimer = undefined;
    this.cancelled.delete(rc.id);
  }

  private release(rc: ReferenceController): void {
    const sub = rc.subscription;
    rc.subscription = undefined;
    rc.selectors?.unload(); // loaded again from the next subscription's snapshot
    rc.generation++;
    if (!sub) return;
    const p = sub.release().catch((e: unknown) => {
      this.recordError(rc, {
        reason: 'ServerError',
        message: `releasing the watch failed: ${String(e)}`,
        at: this.deps.clock.now(),
      });
    });
    this.releasing.add(p);
    void p.finally(() => this.releasing.delete(p));
  }

  private clearGrace(rc: ReferenceController): void {
    if (rc.graceTimer !== undefined) this.deps.clock.clearTimeout(rc.graceTimer);
    rc.graceTimer = undefined;
    rc.graceUntil = undefined;
  }

  private transition(
    rc: ReferenceController,
    state: ReferenceControllerState,
    reason: string,
    event?: Parameters<ReferenceControllers['event']>[0],
  ): void {
    rc.state = state;
    rc.reason = reason;
    this.appendHistory(rc, state, reason);
    if (event) this.event(event, rc.kind, `${label(rc)}: ${state}: ${reason}`);
    this.publish(rc);
  }

  private appendHistory(rc: ReferenceController, state: ReferenceControllerState, reason: string): void {
    rc.history.push({ at: this.deps.clock.now(), state, reason });
    if (rc.history.length > MAX_HISTORY) rc.history.splice(0, rc.history.length - MAX_HISTORY);
  }

  private recordError(rc: ReferenceController, error: WatchError): void {
    rc.errors.push(error);
    rc.failing = error;
    if (rc.errors.length > MAX_ERRORS) rc.errors.splice(0, rc.errors.length - MAX_ERRORS);
    this.event('WatchError', rc.kind, `${label(rc)}: ${error.reason}: ${error.message}`);
    this.publish(rc);
  }

  private entity(rc: ReferenceController): ReferenceControllerEntity {
    const entity: ReferenceControllerEntity = {
      id: rc.id,
      kind: rc.kind,
      state: rc.state,
      reason: rc.reason,
      references: this.referenceCount(rc),
      referents: rc.subscription?.store.size ?? 0,
      startedAt: rc.startedAt,
      primedAt: rc.primedAt,
      primingMs: rc.primedAt !== undefined ? rc.primedAt - rc.startedAt : undefined,
      graceUntil: rc.graceUntil,
      cancelledAt: rc.cancelledAt,
      dispatches: rc.dispatches,
      errors: rc.errors.slice(),
      history: rc.history.slice(),
    };
    if (rc.namespace !== undefined) entity.namespace = rc.namespace;
    return entity;
  }

  private publish(rc: ReferenceController): void {
    this.deps.changelog.put('controller', rc.id, this.entity(rc));
  }

  /** publishReferent records a referenced referent's state as its kind's cache sees it. */
  publishReferent(referent: ObjectKey, object: CachedObject | undefined): void {
    if (this.deps.observers?.observes(kindOfKey(referent))) return this.deps.observers.publishReferent(referent);
    this.publishWatched(this.controllerOf(referent), referent, object, undefined);
  }

  /** publishCached is publishReferent with the referent's object as its kind's cache holds it, its scope looked up once. */
  publishCached(referent: ObjectKey): void {
    if (this.deps.observers?.observes(kindOfKey(referent))) return this.deps.observers.publishReferent(referent);
    const rc = this.controllerOf(referent);
    const sub = rc?.subscription;
    this.publishWatched(rc, referent, sub?.isPrimed() ? sub.store.get(referent) : undefined, undefined);
  }

  /**
   * publishWatched is publishReferent for a watched kind, given the referent's controller and, if known, its
   * verdict. It returns the state published before, if any: the verdict on the object this one replaces.
   */
  private publishWatched(
    rc: ReferenceController | undefined,
    referent: ObjectKey,
    object: CachedObject | undefined,
    verdict: Readiness | undefined,
  ): ReferentState | undefined {
    // A log that defers referents (a Manager's own, not asked yet) is told each one's state when it is asked:
    // until then nothing is kept, and an event's old object is judged again where its state is needed.
    if (this.deps.changelog.defers('referent')) return undefined;
    const referencedBy = this.deps.registry.referrerCountOf(referent);
    if (referencedBy === 0) {
      this.deps.changelog.remove('referent', referent);
      return undefined;
    }
    const kind = rc?.kind ?? kindOfKey(referent);
    const outside = this.outOfScope(referent);
    let state: ReferentState;
    let message: string | undefined;
    if (outside) {
      state = 'Forbidden';
      message = outside.message;
    } else if (!rc?.subscription?.isPrimed()) {
      const err = rc?.errors.at(-1);
      state =
        err && (err.reason === 'KindUnknown' || err.reason === 'Forbidden')
          ? err.reason
          : err
            ? 'WatchError'
            : 'NotPrimed';
      message = err?.message ?? `the ${kind} cache is still loading`;
    } else if (!object) {
      state = 'NotFound';
      message = `${referent} not found`;
    } else {
      const r = verdict ?? this.deps.readiness(kind)(object);
      state = r.ready ? 'Ready' : 'NotReady';
      message = r.ready ? undefined : [r.reason, r.message].filter(Boolean).join(': ');
    }
    // A revision only when what a client shows changes: an event that leaves the verdict, its message and
    // the object's identity as they were (a status heartbeat, a label) writes nothing, so the stream's
    // traffic follows state changes and not object churn. changedAt and resourceVersion say when the
    // shown state was reached.
    const uid = object?.metadata.uid;
    const prev = this.deps.changelog.get('referent', referent);
    const same = prev !== undefined && prev.state === state && prev.message === message && prev.uid === uid;
    if (same && prev.referencedBy === referencedBy) return prev.state;
    // The previous version's strings are kept, as a referrer's are (Controller.publish): the key of the
    // event that brought this one, a message built again, would otherwise live as long as this version.
    const value: ReferentEntity = {
      id: prev?.id ?? referent,
      key: prev?.key ?? referent,
      kind,
      namespace: prev?.namespace ?? shared(namespaceOfKey(referent)),
      state,
      referencedBy,
      uid,
      resourceVersion: same ? prev.resourceVersion : object?.metadata.resourceVersion,
      manager: same ? prev.manager : object ? lastManager(object.metadata) : undefined,
      changedAt: same ? prev.changedAt : this.deps.clock.now(),
    };
    if (message !== undefined) value.message = prev?.message === message ? prev.message : message;
    this.deps.changelog.put('referent', referent, value);
    return prev?.state;
  }

  /**
   * publishReferents states every referenced referent, from its kind's cache or its observer, to a change log
   * that has stopped deferring them: each state dates from then.
   */
  publishReferents(): void {
    for (const kind of this.deps.registry.activeKinds())
      for (const referent of this.deps.registry.referentsOfKind(kind)) this.publishCached(referent);
  }

  private seq = 0;
  private event(
    type:
      | 'ControllerStarted'
      | 'ControllerPrimed'
      | 'ControllerGrace'
      | 'ControllerCancelled'
      | 'ControllerReactivated'
      | 'WatchError'
      | 'WatchRecovered',
    kind: string,
    message: string,
  ): void {
    if (!this.deps.changelog.keepsEvents) return;
    const at = this.deps.clock.now();
    this.deps.changelog.put('event', `rc-${at}-${++this.seq}`, { id: `rc-${at}-${this.seq}`, at, type, kind, message });
  }
}

/** label names a reference controller in messages: `Secret`, or `Secret in namespace shop`. */
function label(rc: ReferenceController): string {
  return rc.namespace === undefined ? rc.kind : `${rc.kind} in namespace ${rc.namespace}`;
}

/** verdictOf reads a published referent state as a readiness verdict: undefined when it is not one. */
function verdictOf(state: ReferentState | undefined): boolean | undefined {
  return state === 'Ready' ? true : state === 'NotReady' ? false : undefined;
}

/**
 * resolutionOf builds a Resolution with every field present, in one order, whatever its state: a reconcile that
 * tests `r.state` across Ready, NotFound and NotReady answers then meets one object shape, and V8 keeps the
 * code it optimized for it instead of compiling it again as each new shape arrives.
 */
function resolutionOf(
  state: ResolutionState,
  referent: ObjectKey,
  fieldPath: string,
  object: CachedObject | undefined,
  reason?: string,
  message?: string,
  error?: WatchError,
): Resolution {
  return { state, referent, fieldPath, object, reason, message, error };
}
