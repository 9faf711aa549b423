import {
  projectFields,
  watchTargetKey,
  type AcquireOptions,
  type InformerEvent,
  type InformerHandler,
  type InformerSource,
  type InformerSubscription,
  type WatchTarget,
} from '../engine/informer-source';
import { RefwatchError, type CachedObject, type GroupKind, type KubeObject } from '../model';
import type { KubeTransport } from './transport';
import { Discovery } from './discovery';
import { defaultLogger, type Logger } from '../log';
import { Reflector, stripManagedFields, type ReflectorOptions, type ReflectorStatus } from './reflector';
import type { Store } from './store';
import { WatchTelemetry } from './watch-telemetry';

export interface SharedInformerPoolOptions {
  client: KubeTransport;
  /** Shared by every reflector of the pool; default: a new Discovery on client. */
  discovery?: Discovery;
  /** Options for every Reflector; transform defaults to stripManagedFields. */
  reflector?: Partial<Omit<ReflectorOptions, 'target' | 'client' | 'discovery' | 'onEvent' | 'metadataOnly' | 'store'>>;
  /** Told of every exception a handler throws; the other handlers and the watch carry on. Default: an error line on logger. */
  onHandlerError?: (error: unknown, info: { target: WatchTarget; event: InformerEvent }) => void;
  /** Where watch ends, relists and recoveries are logged (rate-limited). Default: defaultLogger(). */
  logger?: Logger;
}

interface Subscriber {
  handler: InformerHandler;
  /** The subscriber reads metadata only. */
  metadataOnly: boolean;
  /** Set once the replay of the cached state was delivered; live events wait for it. */
  ready: boolean;
  /** A subscriber that needs whole objects waits, not primed and told of no object, while the store holds metadata only. */
  waiting: boolean;
  /** `primed` reaches each subscriber once, even when the watch restarts in the other mode. */
  primedSent: boolean;
  released: boolean;
}

interface Entry {
  key: string;
  /** Bumped with each new reflector: events of a replaced one are dropped. */
  generation: number;
  reflector: Reflector;
  subs: Set<Subscriber>;
  /** The store may hold metadata-only objects: set by a metadata-only reflector, cleared when a whole-object one primes. */
  partial: boolean;
  /** The store holds a primed snapshot carried over from the entry's previous reflector. */
  carried: boolean;
}

/**
 * SharedInformerPool runs one Reflector per watch target, shared by every
 * subscriber of that target and ref-counted: the first acquire starts it, the
 * last release stops it and closes its HTTP watch. A subscriber that joins a
 * running watch first receives the cached state (`added` for each object,
 * `primed` if primed, `error` if failing), then live events.
 *
 * One watch per target, whatever its subscribers need: it lists and watches
 * metadata only while every subscriber is metadata-only, and whole objects
 * as soon as one subscriber needs them. A change of mode restarts the watch
 * with the store it had: metadata-only subscribers stay primed on the last
 * known state and are told only what changed; a subscriber that needs whole
 * objects is primed when the whole-object snapshot is in.
 */
export class SharedInformerPool implements InformerSource {
  private readonly opts: SharedInformerPoolOptions;
  private readonly discovery: Discovery;
  private readonly entries = new Map<string, Entry>();
  private readonly stopping = new Set<Promise<void>>();
  private generation = 0;
  private stopped = false;
  private handlerErrorCount = 0;
  private readonly logger: Logger;
  /** Counts of watch restarts and relists, for metrics; its log lines go to the pool's logger. */
  readonly telemetry: WatchTelemetry;
  /** The RoleBinding watch of each namespace a forbidden watch made the pool keep an eye on. */
  private readonly rbacWatches = new Map<string, InformerSubscription>();

  constructor(opts: SharedInformerPoolOptions) {
    this.opts = opts;
    this.discovery = opts.discovery ?? new Discovery(opts.client);
    this.logger = opts.logger ?? defaultLogger();
    this.telemetry = new WatchTelemetry({ logger: this.logger });
  }

  acquire(target: WatchTarget, handler: InformerHandler, opts: AcquireOptions = {}): InformerSubscription {
    if (this.stopped)
      throw new RefwatchError('PoolStopped', 'the informer pool is stopped: acquire from a new SharedInformerPool');
    const t: WatchTarget = { group: target.group, kind: target.kind };
    if (target.namespace) t.namespace = target.namespace;
    if (target.labelSelector) t.labelSelector = target.labelSelector;
    if (target.fields) t.fields = target.fields;
    const key = watchTargetKey(t);
    const metadataOnly = opts.metadataOnly === true;
    let entry = this.entries.get(key);
    if (!entry) entry = this.start(key, t, metadataOnly);
    else if (!metadataOnly && entry.reflector.metadataOnly) this.restart(entry, false);
    const e = entry;
    const sub: Subscriber = {
      handler,
      metadataOnly,
      ready: false,
      waiting: !metadataOnly && e.partial,
      primedSent: false,
      released: false,
    };
    e.subs.add(sub);
    queueMicrotask(() => this.replay(e, sub));
    return {
      store: e.reflector.store,
      isPrimed: () => this.isPrimedFor(e, sub),
      status: () => this.statusOf(e),
      release: () => this.release(e, sub),
    };
  }

  /**
   * recheckForbidden retries at once every watch that waits after a 401/403,
   * instead of at the end of its backoff (up to 5 minutes): call it when the
   * user's RBAC changed. The pool calls it itself when a RoleBinding changes
   * in a namespace it watches.
   */
  recheckForbidden(): void {
    for (const e of this.entries.values()) e.reflector.recheckForbidden();
  }

  /** namespaced asks discovery whether the kind is served per namespace; undefined when no resource serves it. */
  async namespaced(kind: GroupKind): Promise<boolean | undefined> {
    try {
      return (await this.discovery.resolve(kind)).namespaced;
    } catch {
      return undefined;
    }
  }

  watches(): ReflectorStatus[] {
    return [...this.entries.values()].map((e) => this.statusOf(e));
  }

  /** Handler exceptions caught so far. */
  get handlerErrors(): number {
    return this.handlerErrorCount;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.rbacWatches.clear();
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) for (const s of e.subs) s.released = true;
    await Promise.all([...all.map((e) => e.reflector.stop()), ...this.stopping]);
  }

  private start(key: string, target: WatchTarget, metadataOnly: boolean): Entry {
    const entry: Entry = {
      key,
      generation: 0,
      subs: new Set(),
      reflector: undefined as unknown as Reflector,
      partial: metadataOnly,
      carried: false,
    };
    this.entries.set(key, entry);
    this.run(entry, target, metadataOnly, undefined);
    return entry;
  }

  /** restart replaces an entry's reflector by one in the other mode, continuing from its store. */
  private restart(entry: Entry, metadataOnly: boolean): void {
    const old = entry.reflector;
    entry.carried ||= old.isPrimed();
    if (metadataOnly) entry.partial = true;
    // The old watch is aborted at once, before the new one opens: never two watches of one target.
    void this.track(old.stop());
    this.run(entry, old.target, metadataOnly, old.store);
  }

  private run(entry: Entry, target: WatchTarget, metadataOnly: boolean, store: Store | undefined): void {
    const generation = (entry.generation = ++this.generation);
    entry.reflector = new Reflector({
      transform: stripManagedFields,
      ...this.opts.reflector,
      ...(target.fields
        ? { transform: projected(target.fields, this.opts.reflector?.transform ?? stripManagedFields) }
        : {}),
      target,
      client: this.opts.client,
      discovery: this.discovery,
      metadataOnly,
      ...(store ? { store } : {}),
      onEvent: (ev) => this.fanOut(entry.key, generation, ev),
      onLifecycle: (ev) => this.telemetry.record(target, ev),
    });
    entry.reflector.start();
  }

  private isPrimedFor(entry: Entry, sub: Subscriber): boolean {
    return !sub.waiting && (entry.reflector.isPrimed() || entry.carried);
  }

  private fanOut(key: string, generation: number, ev: InformerEvent): void {
    // A reflector being stopped may still deliver; only the current generation of a key reaches subscribers.
    const entry = this.entries.get(key);
    if (!entry || entry.generation !== generation) return;
    if (ev.type === 'primed' && !entry.reflector.metadataOnly) entry.partial = false;
    for (const s of [...entry.subs]) {
      if (!s.ready || s.released) continue;
      if (s.waiting) {
        // Whole objects are in: the waiting subscriber gets them as a late joiner would.
        if (ev.type === 'primed' && !entry.partial) {
          s.waiting = false;
          this.replayStore(entry, s);
        } else if (ev.type === 'error' || ev.type === 'recovered') this.deliver(entry, s, ev);
        continue;
      }
      if (ev.type === 'primed') {
        if (s.primedSent) continue;
        s.primedSent = true;
      }
      this.deliver(entry, s, ev);
    }
    // After delivery: a subscriber may have answered the 403 with watches of its own namespaces.
    if (ev.type === 'error' && ev.error.reason === 'Forbidden') this.watchRoleBindings();
  }

  /**
   * watchRoleBindings watches RoleBindings, metadata only, in each namespace
   * the pool watches, once some watch is Forbidden: a RoleBinding added,
   * changed or removed there may be the grant that watch waits for, so the
   * forbidden watches are retried at once rather than at the end of their
   * backoff. Where the user may not read RoleBindings, that watch backs off
   * like any forbidden one and only the backoff is left.
   */
  private watchRoleBindings(): void {
    const namespaces = new Set<string>();
    for (const e of this.entries.values())
      if (e.reflector.target.namespace) namespaces.add(e.reflector.target.namespace);
    for (const namespace of namespaces) {
      if (this.rbacWatches.has(namespace) || this.stopped) continue;
      let primed = false;
      const sub = this.acquire(
        { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', namespace },
        (ev) => {
          if (ev.type === 'primed') primed = true;
          else if (primed && (ev.type === 'added' || ev.type === 'updated' || ev.type === 'deleted')) {
            this.logger.info(`RoleBinding ${ev.key} changed: retrying the forbidden watches now`, {
              event: 'rbac_changed',
              object: ev.key,
            });
            this.recheckForbidden();
          }
        },
        { metadataOnly: true },
      );
      this.rbacWatches.set(namespace, sub);
    }
  }

  private replay(entry: Entry, sub: Subscriber): void {
    if (sub.released) return;
    if (sub.waiting && !entry.partial) sub.waiting = false;
    if (!sub.waiting) this.replayStore(entry, sub);
    const failing = entry.reflector.failing;
    if (failing && !sub.released) this.deliver(entry, sub, { type: 'error', error: { ...failing } });
    sub.ready = true;
  }

  /** replayStore delivers an `added` for every cached object, then `primed` if the cache is primed for sub. */
  private replayStore(entry: Entry, sub: Subscriber): void {
    for (const [key, object] of entry.reflector.store.entries()) {
      this.deliver(entry, sub, { type: 'added', key, object, old: undefined });
      if (sub.released) return;
    }
    if (this.isPrimedFor(entry, sub)) {
      sub.primedSent = true;
      this.deliver(entry, sub, { type: 'primed' });
    }
  }

  private deliver(entry: Entry, sub: Subscriber, ev: InformerEvent): void {
    try {
      sub.handler(ev);
    } catch (error) {
      this.handlerErrorCount++;
      const report = this.opts.onHandlerError;
      try {
        if (report) report(error, { target: entry.reflector.target, event: ev });
        else
          this.logger.error(
            `a handler of the watch of ${entry.key} threw on a ${ev.type} event: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
            { watch: entry.key, event: ev.type },
          );
      } catch {
        // A failing error reporter must not take the watch down either.
      }
    }
  }

  private async release(entry: Entry, sub: Subscriber): Promise<void> {
    if (sub.released && !entry.subs.has(sub)) return;
    sub.released = true;
    entry.subs.delete(sub);
    if (this.entries.get(entry.key) !== entry) return;
    if (entry.subs.size > 0) {
      // The last subscriber that needed whole objects left: metadata only again, and whole objects leave memory.
      if (!entry.reflector.metadataOnly && [...entry.subs].every((s) => s.metadataOnly)) this.restart(entry, true);
      return;
    }
    this.entries.delete(entry.key);
    this.telemetry.forget(entry.reflector.target);
    await this.track(entry.reflector.stop());
  }

  /** track keeps a reflector's stop awaited by stop(). */
  private async track(p: Promise<void>): Promise<void> {
    this.stopping.add(p);
    try {
      await p;
    } finally {
      this.stopping.delete(p);
    }
  }

  private statusOf(e: Entry): ReflectorStatus {
    return { ...e.reflector.status(), subscribers: e.subs.size };
  }
}

/** projected keeps of each object its metadata and the target's fields, after the pool's own transform. */
function projected(
  fields: readonly string[],
  transform: (obj: KubeObject) => KubeObject,
): (obj: KubeObject) => KubeObject {
  return (obj) => projectFields(transform(obj) as CachedObject, fields) as KubeObject;
}
