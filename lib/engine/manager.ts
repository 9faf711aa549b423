import { ChangeLog, type QueueEntity, type WatchEntity } from '../changelog';
import { kindKey, type ObjectKey } from '../model';
import type { Clock, QueueMetricsProvider } from '../queue';
import { ReferenceRegistry } from '../registry';
import { wallClock } from './clock';
import { Controller, type ControllerOptions } from './controller';
import type { EngineContext, EngineHooks } from './engine-context';
import { watchTargetKey, type InformerSource } from './informer-source';
import { defaultReadiness, needsMetadataOnly, type ReadinessPredicate } from './readiness';
import { ReferenceControllers } from './reference-controllers';

export interface ManagerOptions {
  source: InformerSource;
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
  private readonly controllers = new Map<string, Controller>();
  private readonly clock: Clock;
  private readonly ctx: EngineContext;
  private statsTimer: unknown;
  private readonly statsIntervalMs: number;
  private started = false;
  private stopping: Promise<void> | undefined;
  private eventSeq = 0;

  constructor(opts: ManagerOptions) {
    this.source = opts.source;
    this.changelog = opts.changelog ?? new ChangeLog();
    this.clock = opts.clock ?? wallClock;
    this.statsIntervalMs = opts.statsIntervalMs ?? 500;
    const readiness = opts.readiness ?? (() => undefined);
    const readinessOf = (kind: string) => readiness(kind) ?? defaultReadiness;
    this.referenceControllers = new ReferenceControllers({
      source: this.source,
      registry: this.registry,
      changelog: this.changelog,
      clock: this.clock,
      grace: opts.grace ?? 30_000,
      readiness: readinessOf,
      metadataOnly: (kind) => opts.metadataOnly?.(kind) ?? needsMetadataOnly(kind, readinessOf(kind)),
      enqueue: (controller, referrer) => this.enqueueReferrer(controller, referrer),
    });
    this.registry.subscribe({ onDelta: (d) => this.publishDelta(d) });
    this.ctx = {
      source: this.source,
      registry: this.registry,
      changelog: this.changelog,
      referenceControllers: this.referenceControllers,
      clock: this.clock,
      hooks: opts.hooks ?? {},
      queueMetrics: opts.queueMetrics,
      event: (e) => this.event(e),
    };
  }

  /** addController registers a controller; it starts with the manager (or at once if already started). */
  addController(opts: ControllerOptions): Controller {
    if (this.controllers.has(opts.name)) throw new Error(`a controller named ${opts.name} already exists`);
    const c = new Controller(this.ctx, opts);
    this.controllers.set(opts.name, c);
    if (this.started) c.start();
    return c;
  }

  private lastEnqueued: Controller | undefined;

  /** enqueueReferrer is dispatch's per-referrer step; consecutive referrers usually share a controller. */
  private enqueueReferrer(controller: string, referrer: ObjectKey): void {
    let c = this.lastEnqueued;
    if (c === undefined || c.name !== controller) c = this.lastEnqueued = this.controllers.get(controller);
    c?.enqueueReferrer(referrer);
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
    this.lastEnqueued = undefined;
    await c.stop();
    for (const r of this.registry.referrers(name)) {
      this.registry.clear(name, r.key);
      this.changelog.remove('referrer', `${name}|${r.key}`);
    }
    this.changelog.remove('queue', name);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const c of this.controllers.values()) c.start();
    if (this.statsIntervalMs > 0) this.scheduleStats();
  }

  /** stop stops every controller, reference controller and watch; awaited, idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.statsTimer !== undefined) this.clock.clearTimeout(this.statsTimer);
      this.statsTimer = undefined;
      await Promise.all([...this.controllers.values()].map((c) => c.stop()));
      await this.referenceControllers.stop();
      await this.source.stop();
    })();
    return this.stopping;
  }

  /** publishStats records queue and watch statistics in the change log when they changed. */
  publishStats(): void {
    this.referenceControllers.refreshCounts();
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

  private publishDelta(d: { referrer: { controller: string; key: ObjectKey }; added: readonly { referent: ObjectKey; fieldPath: string }[]; removed: readonly { referent: ObjectKey; fieldPath: string }[] }): void {
    const { controller, key } = d.referrer;
    const touched = new Set<ObjectKey>();
    for (const r of [...d.removed, ...d.added]) {
      const id = `${controller}|${key}|${r.referent}|${r.fieldPath}`;
      const count = this.registry.multiplicityAt(controller, key, r);
      touched.add(r.referent);
      if (count === 0) this.changelog.remove('reference', id);
      else {
        const slash = key.indexOf('/');
        this.changelog.put('reference', id, {
          id,
          controller,
          referrer: key,
          referent: r.referent,
          fieldPath: r.fieldPath,
          count,
          kind: r.referent.slice(0, r.referent.indexOf('/')),
          namespace: key.slice(slash + 1, key.indexOf('/', slash + 1)),
        });
      }
    }
    for (const referent of touched) this.referenceControllers.publishReferent(referent, this.referenceControllers.cached(referent));
  }

  private event(e: Parameters<EngineContext['event']>[0]): void {
    const at = this.clock.now();
    const id = `ev-${at}-${++this.eventSeq}`;
    this.changelog.put('event', id, { ...e, id, at });
  }
}

function shallowEqual(a: object, b: object): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  return true;
}
