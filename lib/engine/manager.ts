import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ChangeLog, type QueueEntity, type ReferenceEntity, type WatchEntity } from '../changelog';
import { defaultLogger, type Logger } from '../log';
import { RefwatchError, kindKey, kindOfKey, namespaceOfKey, shared, validateNamespace, type ObjectKey } from '../model';
import type { Clock, QueueMetricsProvider } from '../queue';
import { ReferenceRegistry } from '../registry';
import { wallClock } from './clock';
import { Controller, type ControllerOptions } from './controller';
import type { EngineContext, EngineHooks } from './engine-context';
import {
  targetsIn,
  watchTargetKey,
  type InformerSource,
  type InformerSubscription,
  type WatchTarget,
} from './informer-source';
import { LeaderElector, type LeaderElectorOptions, type StoppedLeadingReason } from './leader-election';
import type { ResourceLock } from './resource-lock';
import { defaultReadiness, needsMetadataOnly, type ReadinessPredicate } from './readiness';
import { Observers, type ObserverOptions } from './observer';
import { ReferenceControllers } from './reference-controllers';
import { fallbackMessage, type FallbackNamespace, type ScopeFallback } from './scope-fallback';
import { WakeFilters } from './wake';

export interface ManagerOptions {
  source: InformerSource;
  /**
   * Where the engine's state is published. Default: a ChangeLog that keeps no
   * `event` history (maxEvents 0), as a controller without a dashboard reads
   * none; pass `new ChangeLog()` to keep the last 1,000 events.
   */
  changelog?: ChangeLog;
  /** How long a referent kind keeps its watch after its last reference goes (default 30 s). */
  grace?: number;
  /** Readiness per referent kind (`Kind.group`); defaults to defaultReadiness. */
  readiness?: (kind: string) => ReadinessPredicate | undefined;
  /**
   * Whether a referent kind (`Kind.group`) is cached as metadata only
   * (PartialObjectMetadata: no spec, status or data; a Secret's data never
   * enters memory). undefined keeps the default: metadata only when the
   * kind's readiness needs only existence (existsReadiness, a predicate made
   * with readsMetadataOnly, or Secret, ConfigMap and ServiceAccount under
   * defaultReadiness). Return false for a kind whose referents a reconciler
   * reads whole from the resolution.
   */
  metadataOnly?: (kind: string) => boolean | undefined;
  clock?: Clock;
  hooks?: EngineHooks;
  /** Metrics for each controller's work queue, by controller name. */
  queueMetrics?: (controller: string) => QueueMetricsProvider;
  /** How often queue and watch statistics are published to the change log (default 500 ms; 0 = never). */
  statsIntervalMs?: number;
  /** Reconcile only while this replica holds a Lease; see ManagerLeaderElection. */
  leaderElection?: ManagerLeaderElection;
  /** Where leadership changes are logged. Default: defaultLogger(). Give the SharedInformerPool the same one for watch lines. */
  logger?: Logger;
  /**
   * Watch only these namespaces: each controller's `for` kind and every
   * namespaced referent kind get one watch per namespace, and a reference
   * into any other namespace resolves NotPrimed with reason OutOfScope,
   * naming this option. Undefined: all namespaces. Cluster-scoped referents
   * are watched as before.
   */
  namespaces?: readonly string[];
  /**
   * Where to watch a controller's own kind when listing it in all namespaces
   * is Forbidden, as kubectl falls back to its context's namespace: give the
   * kubeconfig context's namespace (from "the context"), plus `namespaces`
   * when set. Each fallback is logged, recorded as a WatchError event and
   * listed by scopeFallbacks(). Undefined or empty: no fallback; the kind
   * stays Forbidden. A referent kind falls back to the namespaces its
   * referents live in whatever this says.
   */
  fallbackNamespaces?: readonly FallbackNamespace[];
  /**
   * How long stopping a controller (stop, removeController, losing or
   * releasing leadership) waits for reconciles that ignore ctx.signal before
   * it abandons them and logs their keys (ms; default 30 000, as
   * controller-runtime's GracefulShutdownTimeout).
   */
  gracefulShutdownTimeout?: number;
  /**
   * How long a cancelled reference controller stays listed (the dashboard's
   * recent cancellations) before it is removed, in ms (default 600 000: 10 min).
   */
  cancelledRetention?: number;
  /** At most this many cancelled reference controllers stay listed; the oldest goes first (default 100). */
  maxCancelled?: number;
}

/**
 * ManagerLeaderElection makes replicas of one controller take turns: only the
 * holder of the lock (a LeaseLock from refwatch/kube, on a Lease the replicas
 * share) reconciles. The others stand by with their controllers' own caches
 * primed, so a takeover starts reconciling without a relist. Timings and
 * callbacks are LeaderElector's.
 */
export type ManagerLeaderElection = Partial<
  Pick<LeaderElectorOptions, 'leaseDuration' | 'renewDeadline' | 'retryPeriod' | 'releaseOnStop' | 'onError'>
> & {
  /** Where the replicas meet: `new LeaseLock(client, namespace, name)` from refwatch/kube, or any ResourceLock. */
  lock: ResourceLock;
  /** Default: the host name plus a random suffix, unique per process. */
  identity?: string;
  /** Called when this replica starts reconciling. */
  onStartedLeading?(): void;
  /**
   * Called after the controllers stopped. On `lost` this manager will not
   * lead again: exit the process so that a fresh one rejoins as a standby,
   * as client-go's controllers do.
   */
  onStoppedLeading?(reason: StoppedLeadingReason): void;
  onNewLeader?(identity: string): void;
};

/** Leadership is a manager's place in leader election, for probes and metrics. */
export interface Leadership {
  identity: string;
  isLeader: boolean;
  /** The holder last seen in the Lease: empty when released, undefined before the first read. */
  holder: string | undefined;
  /** Why leadership ended, once it has. */
  ended?: StoppedLeadingReason;
}

/**
 * Manager is refwatch's engine: a reference registry, one reference
 * controller per referent kind over a shared InformerSource, the controllers
 * that reconcile referrers, and the change log that makes all of it observable.
 */
export class Manager {
  readonly registry = new ReferenceRegistry();
  readonly changelog: ChangeLog;
  readonly source: InformerSource;
  readonly referenceControllers: ReferenceControllers;
  private readonly observers: Observers;
  private readonly controllers = new Map<string, Controller>();
  private readonly clock: Clock;
  private readonly ctx: EngineContext;
  private statsTimer: unknown;
  private readonly statsIntervalMs: number;
  private started = false;
  /** Controllers run only while reconciling: from start without leader election, while leading with it. */
  private reconciling = false;
  private stopping: Promise<void> | undefined;
  private eventSeq = 0;
  private readonly elector: LeaderElector | undefined;
  private leadershipEnded: StoppedLeadingReason | undefined;
  /** A standby's subscriptions to its controllers' own kinds, which keep their caches primed. */
  private readonly standbyCaches: InformerSubscription[] = [];
  private readonly ownKinds = new Map<string, WatchTarget | undefined>();
  private readonly logger: Logger;
  private readonly fallbacks = new Map<string, ScopeFallback>();

  constructor(opts: ManagerOptions) {
    this.source = opts.source;
    this.changelog = opts.changelog ?? new ChangeLog({ maxEvents: 0 });
    // A log of its own is read by no one until someone asks (explain, stuck, a snapshot). Until then each
    // referrer's state is one object written over in place (Controller), and referents and edges are stated
    // from the caches and the registry when it is asked. A log that was given is written as it goes: its owner serves it.
    if (!opts.changelog) this.changelog.defer(['referrer', 'referent', 'reference'], () => this.publishDeferred());
    this.clock = opts.clock ?? wallClock;
    this.statsIntervalMs = opts.statsIntervalMs ?? 500;
    this.logger = opts.logger ?? defaultLogger();
    const readiness = opts.readiness ?? (() => undefined);
    const readinessOf = (kind: string) => readiness(kind) ?? defaultReadiness;
    const namespaces = opts.namespaces === undefined ? undefined : validNamespaces(opts.namespaces);
    const fallbackNamespaces =
      opts.fallbackNamespaces === undefined ? undefined : validFallbackNamespaces(opts.fallbackNamespaces);
    const scopeFallback = (kind: string, fallback: readonly FallbackNamespace[] | undefined) =>
      this.scopeFallback(kind, fallback);
    const enqueue = (controller: string, referrer: ObjectKey) => this.enqueueReferrer(controller, referrer);
    // Read lazily: the reference controllers are built below with this filter.
    const wake = new WakeFilters(
      this.registry,
      (referent) => this.referenceControllers.isReady(referent),
      (controller, referrer) => this.restateReferrer(controller, referrer),
    );
    this.observers = new Observers({
      registry: this.registry,
      changelog: this.changelog,
      clock: this.clock,
      grace: opts.grace ?? 30_000,
      enqueue,
      wake,
    });
    this.referenceControllers = new ReferenceControllers({
      source: this.source,
      registry: this.registry,
      changelog: this.changelog,
      clock: this.clock,
      grace: opts.grace ?? 30_000,
      readiness: readinessOf,
      metadataOnly: (kind) => opts.metadataOnly?.(kind) ?? needsMetadataOnly(kind, readinessOf(kind)),
      enqueue,
      namespaces,
      observers: this.observers,
      wake,
      onScopeFallback: (kind) => scopeFallback(kind, undefined),
      cancelledRetention: validCount(opts.cancelledRetention, 600_000, 'cancelledRetention', 'milliseconds'),
      maxCancelled: validCount(opts.maxCancelled, 100, 'maxCancelled', 'controllers'),
    });
    this.registry.subscribe({ onDelta: (d) => this.publishDelta(d) });
    this.ctx = {
      source: this.source,
      registry: this.registry,
      changelog: this.changelog,
      referenceControllers: this.referenceControllers,
      wake,
      clock: this.clock,
      hooks: opts.hooks ?? {},
      queueMetrics: opts.queueMetrics,
      namespaces,
      ...(fallbackNamespaces ? { fallbackNamespaces } : {}),
      scopeFallback,
      event: (e) => this.event(e),
      gracefulShutdownTimeout: validTimeout(opts.gracefulShutdownTimeout),
      abandoned: (controller, keys) =>
        this.logger.warn(
          `controller ${controller} stopped without waiting for ${keys.length} reconcile(s) that ignored ctx.signal past the ${this.ctx.gracefulShutdownTimeout} ms graceful-shutdown timeout: ${keys.join(', ')}`,
          { event: 'shutdown_abandoned', controller, keys: keys.join(',') },
        ),
    };
    if (opts.leaderElection) this.elector = this.leaderElector(opts.leaderElection);
  }

  private leaderElector(le: ManagerLeaderElection): LeaderElector {
    const lock = le.lock;
    if (!lock || typeof lock.get !== 'function') {
      // The engine knows locks only by their interface; the Lease lock lives with the Kubernetes client.
      const given = 'client' in le ? 'client, namespace and name' : 'no lock';
      throw new RefwatchError(
        'InvalidLeaderElection',
        `leader election: lock is missing (given ${given}): pass a LeaseLock from refwatch/kube on the Lease the replicas share`,
        { field: 'leaderElection.lock', example: "lock: new LeaseLock(client, 'kube-system', 'my-controller')" },
      );
    }
    const identity = le.identity ?? `${hostname()}_${randomUUID()}`;
    const fields = { lock: lock.describe(), identity };
    const of = ` of ${lock.describe()}`;
    return new LeaderElector({
      lock,
      identity,
      leaseDuration: le.leaseDuration,
      renewDeadline: le.renewDeadline,
      retryPeriod: le.retryPeriod,
      releaseOnStop: le.releaseOnStop,
      onError: le.onError,
      clock: this.clock,
      callbacks: {
        onStartedLeading: () => {
          this.logger.info(`${identity} started leading${of}: reconciling`, { ...fields, event: 'leading_started' });
          this.reconciling = true;
          for (const c of this.controllers.values()) c.start();
          le.onStartedLeading?.();
        },
        onStoppedLeading: async (reason) => {
          this.reconciling = false;
          this.leadershipEnded = reason;
          const why =
            reason === 'lost'
              ? 'lost the lease (renewal failed): this manager will not lead again; restart the process'
              : 'stopped';
          this.logger[reason === 'lost' ? 'warn' : 'info'](`${identity} stopped leading${of}: ${why}`, {
            ...fields,
            event: 'leading_stopped',
            reason,
          });
          await Promise.all([...this.controllers.values()].map((c) => c.stop()));
          le.onStoppedLeading?.(reason);
        },
        onNewLeader: (holder) => {
          if (holder !== identity)
            this.logger.info(`new leader${of}: ${holder === '' ? '(none: released)' : holder}`, {
              ...fields,
              event: 'new_leader',
              holder,
            });
          le.onNewLeader?.(holder);
        },
      },
    });
  }

  /** scopeFallbacks lists the kinds watched per namespace because listing them in all namespaces is Forbidden. */
  scopeFallbacks(): ScopeFallback[] {
    return [...this.fallbacks.values()];
  }

  /** scopeFallback records, logs and reports one kind's fallback, once per kind and wording. */
  private scopeFallback(kind: string, namespaces: readonly FallbackNamespace[] | undefined): void {
    const message = fallbackMessage(kind, namespaces);
    if (this.fallbacks.get(kind)?.message === message) return;
    const fallback: ScopeFallback = { kind, message, at: this.clock.now() };
    if (namespaces) fallback.namespaces = namespaces;
    this.fallbacks.set(kind, fallback);
    this.logger.warn(message, { event: 'scope_fallback', kind });
    this.event({ type: 'WatchError', kind, message });
    this.ctx.hooks.onScopeFallback?.(fallback);
  }

  /** leadership says whether this manager leads; undefined without leader election. */
  leadership(): Leadership | undefined {
    if (!this.elector) return undefined;
    const l: Leadership = {
      identity: this.elector.identity,
      isLeader: this.elector.isLeader(),
      holder: this.elector.leader(),
    };
    if (this.leadershipEnded) l.ended = this.leadershipEnded;
    return l;
  }

  /** addController registers a controller; it starts with the manager (or at once if already started). */
  addController(opts: ControllerOptions): Controller {
    if (this.controllers.has(opts.name)) throw new Error(`a controller named ${opts.name} already exists`);
    const c = new Controller(this.ctx, opts);
    this.controllers.set(opts.name, c);
    this.ownKinds.set(opts.name, opts.for);
    if (this.reconciling) c.start();
    else if (this.started && !this.leadershipEnded) this.warm(opts.for);
    return c;
  }

  /**
   * addObserver serves a referent kind by polling instead of a watch, for
   * things outside Kubernetes: each referenced referent is polled every
   * `interval` ms, once whatever the number of its referrers, and a change of
   * what `observe` reports wakes its referrers through their queues. Add it
   * before any reference to the kind is declared.
   */
  addObserver(opts: ObserverOptions): void {
    this.observers.add(opts);
  }

  private lastEnqueued: Controller | undefined;

  /** enqueueReferrer is dispatch's per-referrer step; consecutive referrers usually share a controller. */
  private enqueueReferrer(controller: string, referrer: ObjectKey): void {
    let c = this.lastEnqueued;
    if (c === undefined || c.name !== controller) c = this.lastEnqueued = this.controllers.get(controller);
    c?.enqueue(referrer);
  }

  /** restateReferrer refreshes the published state of a referrer an event did not wake (see Controller.restate). */
  private restateReferrer(controller: string, referrer: ObjectKey): void {
    this.controllers.get(controller)?.restate(referrer);
  }

  /** controllerNames lists the registered controllers in the order they were added. */
  controllerNames(): string[] {
    return [...this.controllers.keys()];
  }

  controller(name: string): Controller | undefined {
    return this.controllers.get(name);
  }

  /** removeController stops one controller and drops its references. */
  async removeController(name: string): Promise<void> {
    const c = this.controllers.get(name);
    if (!c) return;
    this.controllers.delete(name);
    this.ownKinds.delete(name);
    this.lastEnqueued = undefined;
    await c.stop();
    for (const r of this.registry.referrers(name)) {
      this.registry.clear(name, r.key);
      this.changelog.remove('referrer', `${name}|${r.key}`);
    }
    this.changelog.remove('queue', name);
  }

  /**
   * start starts the controllers, or with leader election starts campaigning:
   * until it leads, the manager keeps its controllers' own caches primed and
   * reconciles nothing.
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.elector) {
      for (const target of this.ownKinds.values()) this.warm(target);
      this.elector.start();
    } else {
      this.reconciling = true;
      for (const c of this.controllers.values()) c.start();
    }
    if (this.statsIntervalMs > 0) this.scheduleStats();
  }

  /** warm subscribes to a controller's own kind, so its cache is primed before this replica leads. */
  private warm(target: WatchTarget | undefined): void {
    if (!target) return;
    const namespaces = this.ctx.namespaces;
    const acquire = (targets: WatchTarget[]) => {
      if (this.stopping) return;
      for (const t of targets) this.standbyCaches.push(this.source.acquire(t, () => {}));
    };
    if (!namespaces || target.namespace || !this.source.namespaced) return acquire(targetsIn(target, namespaces));
    // A cluster-scoped kind is warmed once, cluster-wide, as its controller will watch it.
    void this.source.namespaced(target).then(
      (namespaced) => acquire(namespaced === false ? [target] : targetsIn(target, namespaces)),
      () => acquire(targetsIn(target, namespaces)),
    );
  }

  /**
   * stop stops every controller, reference controller and watch; awaited,
   * idempotent. A leader releases its Lease once its controllers stopped.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.statsTimer !== undefined) this.clock.clearTimeout(this.statsTimer);
      this.statsTimer = undefined;
      await this.elector?.stop();
      await Promise.all(this.standbyCaches.splice(0).map((s) => s.release()));
      await Promise.all([...this.controllers.values()].map((c) => c.stop()));
      await this.referenceControllers.stop();
      await this.observers.stop();
      await this.source.stop();
    })();
    return this.stopping;
  }

  /** publishStats records queue and watch statistics in the change log when they changed. */
  publishStats(): void {
    this.referenceControllers.refreshCounts();
    this.observers.refreshCounts();
    for (const c of this.controllers.values()) {
      const s = c.queue.stats();
      const q: QueueEntity = {
        id: c.name,
        controller: c.name,
        depth: s.depth,
        processing: s.processing,
        adds: s.adds,
        retries: s.retries,
        reconciles: c.stats.reconciles,
        errors: c.stats.errors,
        workers: c.workerCount,
        longestRunningMs: Math.round(s.longestRunningMs),
      };
      const prev = this.changelog.get('queue', c.name);
      if (!prev || !shallowEqual(prev, q)) this.changelog.put('queue', c.name, q);
    }
    const live = new Set<string>();
    for (const w of this.source.watches()) {
      const id = watchTargetKey(w.target);
      live.add(id);
      const value: WatchEntity = {
        id,
        kind: kindKey(w.target),
        phase: w.phase,
        primed: w.primed,
        objects: w.objects,
        subscribers: w.subscribers,
        watchesOpened: w.watchesOpened,
        lists: w.lists,
      };
      if (w.target.namespace !== undefined) value.namespace = w.target.namespace;
      if (w.target.labelSelector !== undefined) value.labelSelector = w.target.labelSelector;
      if (w.resourceVersion !== undefined) value.resourceVersion = w.resourceVersion;
      if (w.lastError !== undefined) value.lastError = w.lastError;
      const prev = this.changelog.get('watch', id);
      if (!prev || !shallowEqual(prev, value)) this.changelog.put('watch', id, value);
    }
    for (const id of this.changelog.snapshot({ entities: ['watch'] }).entities.watch ?? []) {
      if (!live.has(id.id)) this.changelog.remove('watch', id.id);
    }
  }

  private scheduleStats(): void {
    this.statsTimer = this.clock.setTimeout(() => {
      this.publishStats();
      if (!this.stopping) this.scheduleStats();
    }, this.statsIntervalMs);
  }

  private publishDelta(d: {
    referrer: { controller: string; key: ObjectKey };
    added: readonly { referent: ObjectKey; fieldPath: string }[];
    removed: readonly { referent: ObjectKey; fieldPath: string }[];
  }): void {
    // Deferred (a Manager's own log, not asked yet): the edges and the referents' states are stated when asked.
    if (this.changelog.defers('reference') && this.changelog.defers('referent')) return;
    const { controller, key } = d.referrer;
    for (const r of d.removed) this.publishEdge(controller, key, r);
    for (const r of d.added) this.publishEdge(controller, key, r);
    const rcs = this.referenceControllers;
    // A reconcile's subscribe-before-read adds one reference at a time: no set for a single edge.
    if (d.removed.length + d.added.length === 1) {
      rcs.publishCached((d.removed[0] ?? d.added[0])!.referent);
      return;
    }
    const touched = new Set<ObjectKey>();
    for (const r of d.removed) touched.add(r.referent);
    for (const r of d.added) touched.add(r.referent);
    for (const referent of touched) rcs.publishCached(referent);
  }

  /** publishEdge records one (referrer, referent, field path) edge of a delta as the registry holds it now. */
  private publishEdge(controller: string, key: ObjectKey, r: { referent: ObjectKey; fieldPath: string }): void {
    if (this.changelog.defers('reference')) return;
    // Joined, the id is one flat string; a template literal would keep a chain of its parts for as long as the edge.
    const id = [controller, key, r.referent, r.fieldPath].join('|');
    const count = this.registry.multiplicityAt(controller, key, r);
    if (count === 0) {
      this.changelog.remove('reference', id);
      return;
    }
    const value: ReferenceEntity = {
      id,
      controller,
      referrer: key,
      // The registry's copy of the key, not the one this reconcile built.
      referent: this.registry.referentKey(r.referent),
      fieldPath: r.fieldPath,
      count,
      kind: shared(kindOfKey(r.referent)),
      namespace: shared(namespaceOfKey(key)),
    };
    const selector = this.controllers.get(controller)?.selectorAt(key, r.fieldPath);
    if (selector !== undefined) value.selector = selector;
    this.changelog.put('reference', id, value);
  }

  /** publishDeferred puts every referrer, referent and edge into the change log, the first time it is asked about them. */
  private publishDeferred(): void {
    this.changelog.transaction(() => {
      for (const c of this.controllers.values()) c.publishUnpublished();
      for (const r of this.registry.referrers()) {
        const seen = new Set<string>();
        for (const ref of this.registry.referencesOf(r.controller, r.key)) {
          const edge = `${ref.referent}\u0000${ref.fieldPath}`;
          if (seen.has(edge)) continue;
          seen.add(edge);
          this.publishEdge(r.controller, r.key, ref);
        }
      }
      this.referenceControllers.publishReferents();
    });
  }

  private event(e: Parameters<EngineContext['event']>[0]): void {
    if (!this.changelog.keepsEvents) return;
    const at = this.clock.now();
    const id = `ev-${at}-${++this.eventSeq}`;
    this.changelog.put('event', id, { ...e, id, at });
  }
}

/** validCount checks a retention option: a finite number >= 0, or the default when left out. */
function validCount(value: number | undefined, fallback: number, field: string, unit: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RefwatchError(
      'InvalidRetention',
      `${field} must be a finite number of ${unit} >= 0, got ${String(value)}; leave it out for ${fallback}`,
      { field },
    );
  }
  return value;
}

/** validTimeout checks the gracefulShutdownTimeout option: milliseconds, finite and not negative. */
function validTimeout(ms: number | undefined): number {
  if (ms === undefined) return 30_000;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new RefwatchError(
      'InvalidGracefulShutdownTimeout',
      `gracefulShutdownTimeout must be a finite number of milliseconds >= 0, got ${String(ms)}; leave it out for 30 000`,
      { field: 'gracefulShutdownTimeout' },
    );
  }
  return ms;
}

/** validNamespaces checks the `namespaces` option: a non-empty list of namespace names, each once. */
function validNamespaces(namespaces: readonly string[]): readonly string[] {
  if (!Array.isArray(namespaces) || namespaces.length === 0) {
    throw new RefwatchError(
      'InvalidNamespaces',
      'namespaces must list at least one namespace; leave it out to watch all namespaces',
      { field: 'namespaces' },
    );
  }
  namespaces.forEach((ns, i) => {
    const v = validateNamespace(typeof ns === 'string' ? ns : String(ns), `namespaces[${i}]`);
    if (!v.ok) throw v.error;
  });
  return [...new Set(namespaces)];
}

/** validFallbackNamespaces checks the `fallbackNamespaces` option: valid names, each once, the first source kept. */
function validFallbackNamespaces(fallback: readonly FallbackNamespace[]): readonly FallbackNamespace[] {
  if (!Array.isArray(fallback)) {
    throw new RefwatchError('InvalidNamespaces', 'fallbackNamespaces must be a list of {namespace, from}', {
      field: 'fallbackNamespaces',
    });
  }
  const seen = new Map<string, FallbackNamespace>();
  fallback.forEach((f, i) => {
    const v = validateNamespace(String(f?.namespace), `fallbackNamespaces[${i}].namespace`);
    if (!v.ok) throw v.error;
    if (typeof f.from !== 'string' || f.from === '') {
      throw new RefwatchError(
        'InvalidNamespaces',
        `fallbackNamespaces[${i}].from must say where ${f.namespace} came from, e.g. "the context"`,
        { field: `fallbackNamespaces[${i}].from` },
      );
    }
    if (!seen.has(f.namespace)) seen.set(f.namespace, { namespace: f.namespace, from: f.from });
  });
  return [...seen.values()];
}

function shallowEqual(a: object, b: object): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  return true;
}
