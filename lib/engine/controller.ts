import {
  kindKey,
  kindOfKey,
  namespaceOfKey,
  shared,
  RefwatchError,
  type CachedObject,
  type ObjectKey,
  type Reference,
} from '../model';
import { RateLimitingQueue, type QueueMetricsProvider, type RateLimiter } from '../queue';
import type { ReferrerEntity, ReferrerState } from '../changelog';
import { targetsIn, type InformerSubscription, type WatchTarget } from './informer-source';
import type { Resolution } from './resolution';
import { blockingResolution } from './conditions';
import type { EngineContext } from './engine-context';
import { select, SelectorReferences, summaryOf, type Selection, type SelectSpec } from './selection';
import { lookup, LookupReferences, type LookupSpec } from './lookup';
import { Unpublished } from './unpublished';
import { forWakeOnIsGeneration, unionMask, wakeMask, type ForWakeOn, type ResolveOptions } from './wake';

/** What a reconcile that selected or looked up nothing keeps: none of the referrer's selectors or lookups. */
const NO_IDS: ReadonlySet<string> = new Set();
/** The selections of a reconcile that made none: most reconciles. */
const NO_SELECTIONS: readonly Selection[] = [];

/** ReconcileResult lets a reconciler ask to run again after a while (e.g. a TTL), or say its referrer is gone. */
export interface ReconcileResult {
  /**
   * Reconcile the referrer again after this many ms (not before, unless an
   * event queues it). 0, as left out, means no requeue: controller-runtime's
   * meaning of a zero RequeueAfter, so ported code cannot spin.
   */
  requeueAfter?: number;
  /**
   * The referrer no longer exists (deleted where a controller without `for`
   * keeps its referrers): drop it as Controller.forget does, with whatever
   * this reconcile resolved.
   */
  forget?: boolean;
}

/**
 * ReconcileContext is what a reconciler sees during one reconcile of one referrer.
 * Reconcilers keep no state between calls (invariant 2): every reference is
 * declared again through resolve(), and the set collected during one reconcile
 * replaces the referrer's references when it ends.
 */
export interface ReconcileContext {
  readonly controller: string;
  readonly key: ObjectKey;
  /**
   * The referrer itself, from the controller's own cache, when the controller
   * watches its kind. Frozen and shared: to change it, write a new object (a patch).
   */
  readonly object: CachedObject | undefined;
  /** Aborted when the manager stops. */
  readonly signal: AbortSignal;
  /**
   * resolve registers the reference (subscribe before read, invariant 3) and
   * reads the referent from its kind's shared cache (invariant 7).
   * `wakeOn` says which changes of the referent wake this referrer again.
   */
  resolve(ref: Reference, opts?: ResolveOptions): Resolution;
  resolve(referent: ObjectKey, fieldPath: string, opts?: ResolveOptions): Resolution;
  /**
   * select declares a selector reference (a Service's Pods) and answers it
   * from the kind's shared cache and its label index: the matched objects
   * and a verdict (NoMatch when it matches nothing). The referrer wakes when
   * the match set changes, and when a matched object changes as wakeOn says.
   * An invalid selector throws a RefwatchError naming the field.
   */
  select(spec: SelectSpec): Selection;
  /**
   * lookup declares a reference to the object, among those a label selector
   * picks, whose field equals a value (an Argo CD cluster Secret by its
   * decoded data.name). Only the selected objects are watched, projected to
   * that field; any change among them wakes the referrer. NoMatch names the
   * nearest value held. An empty labelSelector throws a RefwatchError.
   */
  lookup(spec: LookupSpec): Selection;
}

export type Reconciler = (ctx: ReconcileContext) => Promise<ReconcileResult | void> | ReconcileResult | void;

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  /**
   * The referrers' own kind: each change of such an object queues it; workers
   * start once it is primed. Under the Manager's `namespaces` it is watched in
   * each of those namespaces, unless it names its own or is cluster-scoped.
   * When listing it in all namespaces is Forbidden, it is watched in the
   * Manager's fallbackNamespaces instead, as kubectl falls back to its
   * context's namespace.
   */
  for?: WatchTarget;
  /**
   * Which updates of the controller's own objects queue them (creation and
   * deletion always do): 'change' (default) any new resourceVersion;
   * 'generation' only a new metadata.generation, as controller-runtime's
   * GenerationChangedPredicate, so the controller's own status writes do not
   * wake it. Only for kinds whose generation counts spec changes: custom
   * resources with a status subresource, and most built-in workloads.
   */
  forWakeOn?: ForWakeOn;
  workers?: number;
  /** Used for failed reconciles only; waiting on a referent never grows backoff (invariant 6). */
  rateLimiter?: RateLimiter;
  /** Observes the controller's work queue (adds, latency, work duration, retries). */
  queueMetrics?: QueueMetricsProvider;
  /**
   * For diagnosis: given the field path a reference was declared with, the
   * field that would hold its referent's namespace, or null when the
   * reference can only name objects in the referrer's own namespace (a Pod's
   * ConfigMap volume). Without an answer, explain suggests `<fieldPath>.namespace`.
   */
  namespaceFieldOf?: (fieldPath: string) => string | null | undefined;
  /**
   * For diagnosis: what the controller adds to the explanation of one of its
   * references that is not Ready, given the referrer and the reference's
   * state: whether it blocks, a name for the referrer's state (`orphaned`),
   * and what it costs meanwhile (a webhook's blast radius).
   */
  describeReference?: (referrer: CachedObject, ref: Reference, state: string) => ReferenceNote | undefined;
}

/** ReferenceNote is what a controller says about one of its references beyond its state. */
export interface ReferenceNote {
  /** false: it never blocks its referrer (it was resolved with `blocking: false`). */
  blocking?: boolean;
  /** A name for the referrer's condition while the referent is not Ready, e.g. `orphaned`. */
  label?: string;
  /** What goes wrong meanwhile, one sentence: "failurePolicy Fail: every CREATE of pods … fails". */
  impact?: string;
  /**
   * What the reference's state really is, whatever the referent's own: a
   * reference the referrer may not use (it was resolved with `deny`).
   */
  override?: { state: string; reason: string; message: string; fix: string };
}

export interface ControllerStats {
  reconciles: number;
  errors: number;
  resolved: number;
}

/**
 * Controller runs a reconciler over a work queue with N workers. Referent
 * events reach it only through enqueue (invariant 5); a reconciler
 * that throws is counted and retried rate-limited, and its worker keeps going.
 */
export class Controller {
  readonly name: string;
  readonly queue: RateLimitingQueue;
  readonly stats: ControllerStats = { reconciles: 0, errors: 0, resolved: 0 };
  private readonly reconcile: Reconciler;
  private readonly generationOnly: boolean;
  readonly workerCount: number;
  private readonly workers: Promise<void>[] = [];
  /** The watches of the controller's own kind: one, or one per namespace of the Manager's `namespaces`. */
  private readonly primaries: InformerSubscription[] = [];
  private readonly primaryNamespaces: (string | undefined)[] = [];
  /** The keys being reconciled now, each marked when forgotten meanwhile. */
  private readonly inFlight = new Map<ObjectKey, { forgotten: boolean }>();
  private readonly abort = new AbortController();
  /** Cluster-wide subscriptions of the own kind already answered with a fallback. */
  private readonly fallingBack = new WeakSet<InformerSubscription>();
  private started = false;
  private stopping: Promise<void> | undefined;
  /** Set when stop gave up waiting: a reconcile that ends later changes nothing. */
  private abandoned = false;
  private selectorRefs: SelectorReferences | undefined;
  private lookupRefs: LookupReferences | undefined;
  /** Per referrer, the wake mask of each reference its last successful reconcile declared, in the registry's order. */
  private readonly declaredMasks = new Map<ObjectKey, readonly number[]>();
  /** Each referrer's entity, by key, while the change log defers referrers (see Manager: a log nobody asked about). */
  private readonly unpublished = new Unpublished<ReferrerEntity>();

  constructor(
    private readonly engine: EngineContext,
    private readonly opts: ControllerOptions,
  ) {
    this.name = opts.name;
    this.reconcile = opts.reconcile;
    this.generationOnly = forWakeOnIsGeneration(opts.forWakeOn);
    if (opts.forWakeOn !== undefined && !opts.for) {
      throw new RefwatchError(
        'InvalidWakeOn',
        `controller ${opts.name}: forWakeOn says which updates of the \`for\` kind queue its objects; give \`for\` or drop forWakeOn`,
        { field: 'forWakeOn' },
      );
    }
    this.workerCount = Math.max(1, opts.workers ?? 2);
    this.queue = new RateLimitingQueue({
      name: opts.name,
      rateLimiter: opts.rateLimiter,
      metrics: opts.queueMetrics ?? engine.queueMetrics?.(opts.name),
    });
  }

  /** start begins watching the controller's own kind; workers start when that cache is primed. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const target = this.opts.for;
    if (!target) {
      this.startWorkers();
      return;
    }
    const source = this.engine.source;
    if (this.engine.namespaces && !target.namespace && source.namespaced) {
      // A cluster-scoped kind has one collection: split by namespace it would be watched once per namespace.
      void source.namespaced(target).then(
        (namespaced) => this.watchOwn(namespaced === false ? [target] : targetsIn(target, this.engine.namespaces)),
        () => this.watchOwn(targetsIn(target, this.engine.namespaces)),
      );
      return;
    }
    this.watchOwn(targetsIn(target, this.engine.namespaces));
  }

  private primed(): boolean {
    return this.primaries.every((p) => p.isPrimed());
  }

  /** watchOwn subscribes to the controller's own kind in each target; workers start once all are primed. */
  private watchOwn(targets: WatchTarget[]): void {
    if (this.abort.signal.aborted) return;
    for (const target of targets) this.acquireOwn(target);
    if (this.primed()) this.startWorkers();
  }

  private acquireOwn(target: WatchTarget): void {
    const sub: InformerSubscription = this.engine.source.acquire(target, (event) => {
      switch (event.type) {
        case 'updated':
          if (this.generationOnly && event.object.metadata.generation === event.old.metadata.generation) return;
          this.queue.add(event.key);
          return;
        case 'added':
        case 'deleted':
          this.queue.add(event.key);
          return;
        case 'primed':
          // No reconcile runs before the referrers' own caches are all primed.
          if (this.primed()) this.startWorkers();
          return;
        case 'error':
          if (
            event.error.reason === 'Forbidden' &&
            target.namespace === undefined &&
            event.error.missingRule &&
            event.error.missingRule.namespace === undefined
          )
            void this.fallBack(sub, target);
          return;
        default:
          return;
      }
    });
    this.primaries.push(sub);
    this.primaryNamespaces.push(target.namespace);
  }

  /**
   * fallBack answers a Forbidden cluster-wide list of the controller's own
   * kind as kubectl does: it watches the kind in the Manager's fallback
   * namespaces instead, and says so. A cluster-scoped kind has nowhere to
   * fall back to: it stays forbidden, retried on its backoff.
   */
  private async fallBack(sub: InformerSubscription, target: WatchTarget): Promise<void> {
    const fallback = this.engine.fallbackNamespaces;
    if (!fallback || fallback.length === 0 || this.fallingBack.has(sub)) return;
    this.fallingBack.add(sub);
    const namespaced = this.engine.source.namespaced
      ? await this.engine.source.namespaced(target).catch(() => undefined)
      : undefined;
    const i = this.primaries.indexOf(sub);
    if (namespaced === false || i < 0 || this.abort.signal.aborted) return;
    this.primaries.splice(i, 1);
    this.primaryNamespaces.splice(i, 1);
    void sub.release();
    this.engine.scopeFallback(kindKey(target), fallback);
    this.watchOwn(fallback.map((f) => ({ ...target, namespace: f.namespace })));
  }

  /** namespaceFieldOf is the controller's namespaceFieldOf option: undefined when it has none or does not know. */
  namespaceFieldOf(fieldPath: string): string | null | undefined {
    return this.opts.namespaceFieldOf?.(fieldPath);
  }

  /**
   * ownObjects lists the objects of the controller's own kind in a namespace
   * (every namespace when left out), from its cache: undefined until that
   * cache holds its initial snapshot, so nothing is judged on a half-filled
   * cache (invariant 4). Frozen and shared, as ctx.object.
   */
  ownObjects(namespace?: string): CachedObject[] | undefined {
    if (this.primaries.length === 0 || !this.primed()) return undefined;
    const out: CachedObject[] = [];
    for (const sub of this.primaries)
      for (const o of sub.store.values())
        if (namespace === undefined || o.metadata?.namespace === namespace) out.push(o);
    return out;
  }

  /** describeReference is the controller's describeReference option, applied to the referrer in its cache. */
  describeReference(key: ObjectKey, ref: Reference, state: string): ReferenceNote | undefined {
    const describe = this.opts.describeReference;
    if (!describe) return undefined;
    const object = this.ownObject(key);
    return object ? describe(object, ref, state) : undefined;
  }

  /**
   * enqueue queues a referrer for reconcile, deduplicated and bypassing
   * backoff: how a referent event wakes its referrers, and how callers
   * ask for a reconcile.
   */
  enqueue(key: ObjectKey): void {
    this.queue.add(key);
  }

  /**
   * restate refreshes what the change log says of a waiting referrer that a
   * referent event did not wake (its wakeOn filtered the event out): the state
   * a reconcile would report now, judged from the caches, without a reconcile
   * and without counting one. A 'resolution' referrer sleeps through changes
   * that cannot resolve it, yet the dashboard and `stuck` still say why it
   * waits now: NotFound becomes Waiting once its referent exists.
   */
  restate(key: ObjectKey): void {
    // A referrer with selectors is judged by its selections, which only a reconcile computes.
    if (this.selectorRefs?.has(key) || this.lookupRefs?.has(key) || this.inFlight.has(key)) return;
    const id = `${this.name}|${key}`;
    const prev = this.referrerEntity(key, id);
    if (!prev || prev.state === 'Resolved' || prev.state === 'Error') return;
    const resolutions = this.engine.registry
      .referencesOf(this.name, key)
      .map((ref) => this.engine.referenceControllers.resolve(ref.referent, ref.fieldPath));
    const blocking = blockingResolution(resolutions);
    if (!blocking) return; // every referent Ready: the event that made it so wakes the referrer
    const state: ReferrerState = blocking.state === 'NotFound' ? 'NotFound' : 'Waiting';
    const reason = `${blocking.state}: ${blocking.referent}`;
    if (prev.state === state && prev.reason === reason && prev.message === blocking.message) return;
    const value: ReferrerEntity = {
      ...prev,
      state,
      reason,
      since: prev.state === state ? prev.since : this.engine.clock.now(),
    };
    if (blocking.message !== undefined) value.message = blocking.message;
    else delete value.message;
    this.writeReferrer(key, id, value);
  }

  /** referrerEntity is the referrer's latest entity: the change log's, or the one kept here while the log defers them. */
  private referrerEntity(key: ObjectKey, id: string): ReferrerEntity | undefined {
    return this.engine.changelog.defers('referrer')
      ? this.unpublished.get(key)
      : this.engine.changelog.get('referrer', id);
  }

  private writeReferrer(key: ObjectKey, id: string, value: ReferrerEntity): void {
    if (this.engine.changelog.defers('referrer')) this.unpublished.write(key, value);
    else this.engine.changelog.put('referrer', id, value);
  }

  /** publishUnpublished puts the referrers kept here into the change log, which has stopped deferring them. */
  publishUnpublished(): void {
    this.unpublished.drain((key, entity) => this.engine.changelog.put('referrer', `${this.name}|${key}`, entity));
  }

  /**
   * forget drops a referrer that went away: its references (a kind left with
   * none has its watch cancelled after the grace period), its entry in the
   * change log and its retry history. A reconcile of the key running now ends
   * without declaring anything. It is how a controller without `for` says a
   * referrer was deleted; with `for`, a deleted referrer is dropped by the
   * reconcile its deletion queues. Queued again later, the key starts afresh.
   */
  forget(key: ObjectKey): void {
    const running = this.inFlight.get(key);
    if (running) running.forgotten = true;
    this.drop(key);
  }

  /** selectors holds the controller's selector references, per referrer. */
  private get selectors(): SelectorReferences {
    return (this.selectorRefs ??= new SelectorReferences(this.name, this.engine.referenceControllers));
  }

  /** selectorAt is the selector behind a referrer's references of this field path, when a selector declared them. */
  selectorAt(key: ObjectKey, fieldPath: string): string | undefined {
    return this.selectorRefs?.selectorAt(key, fieldPath);
  }

  /** lookups holds the controller's lookup watches, per referrer. */
  private get lookups(): LookupReferences {
    return (this.lookupRefs ??= new LookupReferences(this.engine.source, (key) => this.queue.add(key)));
  }

  private drop(key: ObjectKey): void {
    this.declaredMasks.delete(key);
    this.selectorRefs?.drop(key);
    this.lookupRefs?.keepOnly(key, NO_IDS);
    this.engine.registry.clear(this.name, key);
    this.engine.changelog.remove('referrer', `${this.name}|${key}`);
    this.unpublished.delete(key);
    this.queue.forget(key);
  }

  /**
   * stop aborts in-flight reconciles, drains the workers and releases the
   * controller's own watch. A reconcile that ignores ctx.signal is waited for
   * at most the manager's gracefulShutdownTimeout; then its key is reported
   * as abandoned, stop goes on, and what that reconcile does when it ends is dropped.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      const drained = (async () => {
        await this.queue.shutdownWithDrain();
        await Promise.all(this.workers);
      })();
      if (!(await this.within(drained, this.engine.gracefulShutdownTimeout))) {
        this.abandoned = true;
        this.engine.abandoned(this.name, [...this.inFlight.keys()]);
        await this.queue.shutdown(); // ends the drain's wait
      }
      await Promise.all([...this.primaries.map((p) => p.release()), this.lookupRefs?.stop()]);
    })();
    return this.stopping;
  }

  /** within says whether work ended within ms on the engine's clock; the timer goes either way. */
  private async within(work: Promise<void>, ms: number): Promise<boolean> {
    let timer: unknown;
    const timedOut = new Promise<false>((resolve) => (timer = this.engine.clock.setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([work.then(() => true as const), timedOut]);
    } finally {
      this.engine.clock.clearTimeout(timer);
    }
  }

  /** cached reads an object of the controller's own kind from its cache (the cache's frozen object), or undefined. */
  cached(key: ObjectKey): CachedObject | undefined {
    return this.primaries.length === 0 ? undefined : this.ownObject(key);
  }

  /** ownObject reads a referrer from the cache of its namespace (or the only one). */
  private ownObject(key: ObjectKey): CachedObject | undefined {
    if (this.primaries.length === 1) return this.primaries[0]!.store.get(key);
    const i = this.primaryNamespaces.indexOf(namespaceOfKey(key));
    return this.primaries[Math.max(0, i)]?.store.get(key);
  }

  private startWorkers(): void {
    if (this.workers.length > 0 || this.abort.signal.aborted) return;
    for (let i = 0; i < this.workerCount; i++) this.workers.push(this.work());
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
      } catch (e) {
        // process handles reconcile failures itself; anything reaching here is a bug, but the worker lives on.
        this.stats.errors++;
        this.engine.hooks.onReconcileError?.(this.name, key, e);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: ObjectKey): Promise<void> {
    const object = this.ownObject(key);
    if (this.opts.for && !object) {
      // The referrer is gone: it references nothing any more.
      this.drop(key);
      return;
    }
    const resolutions: Resolution[] = [];
    const collected: Reference[] = [];
    // What wakes this referrer, per referent: the union of this reconcile's resolve() calls.
    const masks = new Map<ObjectKey, number>();
    // Made by the first select() or lookup(), which most reconciles never call.
    let selections: Selection[] | undefined;
    let keepSelectors: Set<string> | undefined;
    let keepLookups: Set<string> | undefined;
    let open = true;
    const engine = this.engine;
    const name = this.name;
    // Where the previous set is expected to hold the next declared reference: a restatement in the same order
    // finds each one there, so checking a set of n costs O(n), not O(n²).
    let cursor = 0;
    // Whether every reference so far was found where the previous set holds it, in order, or appended at its end:
    // then, with as many references as the registry holds, it holds them in this order and is not asked to
    // compare the set again.
    let inOrder = true;
    // Whether this reconcile appended a reference in order: the registry's arrays then have room to give back.
    let appended = false;
    // The masks the previous reconcile left in the wake filters, by position in its set: a restated reference
    // whose mask is unchanged needs no write. Replaced if this reconcile succeeds, dropped if it fails (left in
    // place meanwhile: a delete and a set per reconcile would rehash the map every few dozen reconciles).
    const previousMasks = this.declaredMasks.get(key);
    const declare = (ref: Reference, mask: number): void => {
      // Subscribe before read: register now, unless the previous set already holds this occurrence.
      // An invalid ref throws here, inside the reconcile, which then fails like any reconcile error.
      let unchanged = false;
      if (masks.has(ref.referent)) {
        // Declared before in this reconcile: count the occurrences (a multiset), as rare as it is.
        inOrder = false;
        if (countOf(collected, ref) + 1 > engine.registry.multiplicityAt(name, key, ref))
          engine.registry.addReference(name, key, ref);
      } else {
        const at = engine.registry.indexOf(name, key, ref, cursor);
        if (at < 0) {
          // Appended: in order still if it lands where the set's next reference is expected, at its end.
          if (engine.registry.referenceCountOf(name, key) === cursor) {
            cursor++;
            appended = true;
          } else inOrder = false;
          engine.registry.addReference(name, key, ref);
        } else {
          if (at !== cursor) inOrder = false;
          cursor = at + 1;
          unchanged = previousMasks !== undefined && previousMasks[at] === mask;
        }
      }
      collected.push(ref);
      masks.set(ref.referent, mask);
      if (!unchanged) engine.wake.set(name, key, ref.referent, mask);
    };
    const ctx: ReconcileContext = {
      controller: name,
      key,
      object,
      signal: this.abort.signal,
      resolve(
        refOrKey: Reference | ObjectKey,
        pathOrOpts?: string | ResolveOptions,
        maybeOpts?: ResolveOptions,
      ): Resolution {
        const byKey = typeof refOrKey === 'string';
        const ref: Reference = byKey
          ? { referent: refOrKey, fieldPath: typeof pathOrOpts === 'string' ? pathOrOpts : '' }
          : refOrKey;
        const opts = byKey ? maybeOpts : (pathOrOpts as ResolveOptions | undefined);
        if (!open) throw new Error(`resolve(${ref.referent}) called after the reconcile of ${key} ended`);
        declare(ref, unionMask(masks.get(ref.referent), wakeMask(opts?.wakeOn)));
        const found = engine.referenceControllers.resolve(ref.referent, ref.fieldPath);
        const r: Resolution = opts?.deny ? { ...found, state: 'NotReady', ...opts.deny } : found;
        if (opts?.blocking !== false) resolutions.push(r);
        return r;
      },
      select: (spec: SelectSpec): Selection => {
        if (!open)
          throw new Error(`select(${spec.fieldPath ?? 'spec.selector'}) called after the reconcile of ${key} ended`);
        const s = select(
          {
            referrer: key,
            rcs: engine.referenceControllers,
            selectors: this.selectors,
            keep: (keepSelectors ??= new Set()),
            reference: (ref, mask) => declare(ref, unionMask(masks.get(ref.referent), mask)),
          },
          spec,
        );
        (selections ??= []).push(s);
        return s;
      },
      lookup: (spec: LookupSpec): Selection => {
        if (!open) throw new Error(`lookup(${spec.fieldPath}) called after the reconcile of ${key} ended`);
        // A matched object is a reference like a named one: its kind's cache says whether it exists yet.
        const matched = (referent: ObjectKey, fieldPath: string): void => {
          declare({ referent, fieldPath }, unionMask(masks.get(referent), wakeMask(undefined)));
          resolutions.push(engine.referenceControllers.resolve(referent, fieldPath));
        };
        const s = lookup(
          { referrer: key, lookups: this.lookups, keep: (keepLookups ??= new Set()), reference: matched },
          spec,
        );
        (selections ??= []).push(s);
        return s;
      },
    };
    this.stats.reconciles++;
    const startedAt = this.engine.clock.now();
    let failure: unknown;
    let result: ReconcileResult | void = undefined;
    const flight = { forgotten: false };
    this.inFlight.set(key, flight);
    try {
      result = await this.reconcile(ctx);
      invalidRequeueAfter(result);
    } catch (e) {
      failure = e;
    } finally {
      this.inFlight.delete(key);
    }
    open = false;
    if (this.abandoned) return; // stop gave up on it: the engine may be gone
    if (flight.forgotten || (failure === undefined && result?.forget === true)) {
      // Gone while or as it was reconciled: what this reconcile resolved goes with it.
      this.drop(key);
      return;
    }
    if (failure !== undefined) {
      this.declaredMasks.delete(key);
      if (this.abort.signal.aborted) return; // our own stop is not a failure
      this.stats.errors++;
      this.engine.hooks.onReconcileError?.(this.name, key, failure);
      this.publish(key, 'Error', startedAt, collected.length, {
        reason: 'ReconcileError',
        message: messageOf(failure),
      });
      this.queue.addRateLimited(key);
      return;
    }
    if (!inOrder || collected.length !== this.engine.registry.referenceCountOf(this.name, key))
      this.engine.registry.setReferences(this.name, key, collected);
    else if (appended) this.engine.registry.trim(this.name, key);
    // The registry now holds collected in this order, and the wake filters each referent's final mask.
    if (collected.length > 0) {
      const next = masksOf(collected, masks, previousMasks);
      if (next !== previousMasks) this.declaredMasks.set(key, next);
    } else if (previousMasks !== undefined) this.declaredMasks.delete(key);
    this.selectorRefs?.keepOnly(key, keepSelectors ?? NO_IDS);
    this.lookupRefs?.keepOnly(key, keepLookups ?? NO_IDS);
    // Waiting is not failing: a referrer waiting on a referent keeps the shortest backoff.
    this.queue.forget(key);
    const { state, reason, message } = verdict(resolutions, selections ?? NO_SELECTIONS);
    const warning = selections?.find((s) => !s.blocking && s.state === 'NoMatch');
    this.publish(key, state, startedAt, collected.length, {
      reason,
      message,
      warning: warning ? `${warning.fieldPath}: ${warning.message}` : undefined,
      selections: selections?.map(summaryOf),
    });
    if (result && result.requeueAfter !== undefined && result.requeueAfter > 0)
      this.queue.addAfter(key, result.requeueAfter);
  }

  private publish(
    key: ObjectKey,
    state: ReferrerState,
    at: number,
    references: number,
    why: { reason?: string; message?: string; warning?: string; selections?: ReferrerEntity['selections'] },
  ): void {
    const id = `${this.name}|${key}`;
    const prev = this.referrerEntity(key, id);
    const before = prev?.state;
    const now = this.engine.clock.now();
    // Measured from the add that queued this reconcile: for a referrer woken by a referent, the referent event.
    const waited = this.queue.sinceAdded(key);
    // Read on every call, not only for a Resolved one: see verdict.
    const resolvedBefore = prev?.state === 'Resolved' ? prev.resolvedAt : undefined;
    // What the previous version holds already is taken from it: a string built again for this reconcile
    // (the id, the key of the event that queued it, a reason) would otherwise live as long as this version.
    const value: ReferrerEntity = {
      id: prev?.id ?? id,
      key: prev?.key ?? key,
      controller: this.name,
      kind: prev?.kind ?? shared(kindOfKey(key)),
      namespace: prev?.namespace ?? shared(namespaceOfKey(key)),
      state,
      since: prev && prev.state === state ? prev.since : now,
      references,
      reconciles: (prev?.reconciles ?? 0) + 1,
      lastReconcileAt: at,
    };
    if (why.reason !== undefined) value.reason = prev?.reason === why.reason ? prev.reason : why.reason;
    if (why.message !== undefined) value.message = prev?.message === why.message ? prev.message : why.message;
    if (why.warning !== undefined) value.warning = prev?.warning === why.warning ? prev.warning : why.warning;
    if (why.selections !== undefined) value.selections = why.selections;
    if (state === 'Resolved') value.resolvedAt = resolvedBefore ?? now;
    this.writeReferrer(key, id, value);
    if (before !== state) {
      const latencyMs = state === 'Resolved' && waited !== undefined ? Math.round(waited * 1000) / 1000 : undefined;
      if (state === 'Resolved') {
        this.stats.resolved++;
        this.engine.hooks.onResolved?.(this.name, key, latencyMs);
      }
      // The message is built only for a change log that keeps events: a reconcile's transition writes one each.
      if (!this.engine.changelog.keepsEvents) return;
      this.engine.event({
        type: state === 'Resolved' ? 'Resolved' : state === 'Error' ? 'ReconcileError' : 'Waiting',
        key,
        kind: value.kind,
        namespace: value.namespace,
        controller: this.name,
        message:
          state === 'Resolved'
            ? `${key} resolved${latencyMs !== undefined ? ` ${latencyMs.toFixed(1)} ms after it was queued` : ''}`
            : `${key}: ${state}: ${why.reason ?? ''}${why.message ? ` (${why.message})` : ''}`,
        latencyMs,
      });
    }
  }
}

/**
 * verdict is a referrer's state from one reconcile: a missing referent first,
 * then a selector matching nothing, then anything else not Ready.
 *
 * The resolutions and the selections are each read in one pass on every call, so that the code a referrer's
 * first Resolved reaches has run before: an optimized reconcile path would otherwise be thrown away and
 * compiled again at that moment.
 */
function verdict(
  resolutions: readonly Resolution[],
  selections: readonly Selection[],
): { state: ReferrerState; reason?: string; message?: string } {
  let missing: Resolution | undefined;
  let notReady: Resolution | undefined;
  for (const r of resolutions) {
    if (r.state === 'NotFound') {
      missing = r;
      break;
    }
    notReady ??= r.state !== 'Ready' ? r : undefined;
  }
  let noMatch: Selection | undefined;
  let firstBlocking: Selection | undefined;
  for (const s of selections) {
    if (!s.blocking) continue;
    firstBlocking ??= s;
    if (s.state === 'NoMatch') {
      noMatch = s;
      break;
    }
  }
  const blocking = missing ?? (noMatch ? undefined : notReady);
  if (blocking)
    return {
      state: blocking.state === 'NotFound' ? 'NotFound' : 'Waiting',
      reason: `${blocking.state}: ${blocking.referent}`,
      message: blocking.message,
    };
  const s = noMatch ?? firstBlocking;
  // All three fields, as the other answers have: the caller reads them from one shape.
  if (!s) return { state: 'Resolved', reason: undefined, message: undefined };
  return {
    state: s.state === 'NoMatch' ? 'NoMatch' : 'Waiting',
    reason: `${s.state}: ${s.kind} ${s.selector === '' ? '(every object)' : s.selector} in ${s.where} (${s.fieldPath})`,
    message: s.message,
  };
}

/** invalidRequeueAfter fails a reconcile whose requeueAfter is not a number of ms, naming the field. */
function invalidRequeueAfter(result: ReconcileResult | void): void {
  const after: unknown = result ? result.requeueAfter : undefined;
  if (after === undefined || (typeof after === 'number' && Number.isFinite(after) && after >= 0)) return;
  throw new RefwatchError(
    'InvalidReconcileResult',
    `requeueAfter must be a finite number of milliseconds >= 0 (0 or left out: no requeue), got ${String(after)}`,
    { field: 'requeueAfter' },
  );
}

/**
 * masksOf is each collected reference's wake mask, by position: the previous reconcile's array when every
 * mask is as it was (a restatement, the usual case), so that no new array outlives each reconcile.
 *
 * A new array is pushed, not mapped: V8's optimized Array.prototype.map makes a holey array where its
 * interpreter made a packed one, and code optimized on one kind of array is thrown away, and compiled
 * again, on meeting the other (a "wrong map" deoptimization of process and declare, which read these).
 */
function masksOf(
  collected: readonly Reference[],
  masks: ReadonlyMap<ObjectKey, number>,
  previous: readonly number[] | undefined,
): readonly number[] {
  if (previous !== undefined && previous.length === collected.length) {
    let i = 0;
    while (i < collected.length && previous[i] === masks.get(collected[i]!.referent)) i++;
    if (i === collected.length) return previous;
  }
  const next: number[] = [];
  for (const r of collected) next.push(masks.get(r.referent)!);
  return next;
}

function countOf(refs: Reference[], ref: Reference): number {
  let n = 0;
  for (const r of refs) if (r.referent === ref.referent && r.fieldPath === ref.fieldPath) n++;
  return n;
}

function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
