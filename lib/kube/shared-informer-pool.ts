import {
  watchTargetKey,
  type InformerEvent,
  type InformerHandler,
  type InformerSource,
  type InformerSubscription,
  type WatchTarget,
} from '../engine/informer-source';
import { RefwatchError } from '../model';
import type { KubeTransport } from './client';
import { Discovery } from './discovery';
import { Reflector, stripManagedFields, type ReflectorOptions, type ReflectorStatus } from './reflector';

export interface SharedInformerPoolOptions {
  client: KubeTransport;
  /** Shared by every reflector of the pool; default: a new Discovery on client. */
  discovery?: Discovery;
  /** Options for every Reflector; transform defaults to stripManagedFields. */
  reflector?: Partial<Omit<ReflectorOptions, 'target' | 'client' | 'discovery' | 'onEvent'>>;
  /** Told of every exception a handler throws; the other handlers and the watch carry on. Default: console.error. */
  onHandlerError?: (error: unknown, info: { target: WatchTarget; event: InformerEvent }) => void;
}

interface Subscriber {
  handler: InformerHandler;
  /** Set once the replay of the cached state was delivered; live events wait for it. */
  ready: boolean;
  released: boolean;
}

interface Entry {
  key: string;
  generation: number;
  reflector: Reflector;
  subs: Set<Subscriber>;
}

/**
 * SharedInformerPool runs one Reflector per watch target, shared by every
 * subscriber of that target and ref-counted: the first acquire starts it, the
 * last release stops it and closes its HTTP watch. A subscriber that joins a
 * running watch first receives the cached state (`added` for each object,
 * `primed` if primed, `error` if failing), then live events.
 */
export class SharedInformerPool implements InformerSource {
  private readonly opts: SharedInformerPoolOptions;
  private readonly discovery: Discovery;
  private readonly entries = new Map<string, Entry>();
  private readonly stopping = new Set<Promise<void>>();
  private generation = 0;
  private stopped = false;
  private handlerErrorCount = 0;

  constructor(opts: SharedInformerPoolOptions) {
    this.opts = opts;
    this.discovery = opts.discovery ?? new Discovery(opts.client);
  }

  acquire(target: WatchTarget, handler: InformerHandler): InformerSubscription {
    if (this.stopped) throw new RefwatchError('PoolStopped', 'the informer pool is stopped: acquire from a new SharedInformerPool');
    const t: WatchTarget = { group: target.group, kind: target.kind };
    if (target.namespace) t.namespace = target.namespace;
    if (target.labelSelector) t.labelSelector = target.labelSelector;
    const key = watchTargetKey(t);
    let entry = this.entries.get(key);
    if (!entry) entry = this.start(key, t);
    const e = entry;
    const sub: Subscriber = { handler, ready: false, released: false };
    e.subs.add(sub);
    queueMicrotask(() => this.replay(e, sub));
    return {
      store: e.reflector.store,
      isPrimed: () => e.reflector.isPrimed(),
      status: () => this.statusOf(e),
      release: () => this.release(e, sub),
    };
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
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) for (const s of e.subs) s.released = true;
    await Promise.all([...all.map((e) => e.reflector.stop()), ...this.stopping]);
  }

  private start(key: string, target: WatchTarget): Entry {
    const generation = ++this.generation;
    const entry: Entry = { key, generation, subs: new Set(), reflector: undefined as unknown as Reflector };
    entry.reflector = new Reflector({
      transform: stripManagedFields,
      ...this.opts.reflector,
      target,
      client: this.opts.client,
      discovery: this.discovery,
      onEvent: (ev) => this.fanOut(key, generation, ev),
    });
    this.entries.set(key, entry);
    entry.reflector.start();
    return entry;
  }

  private fanOut(key: string, generation: number, ev: InformerEvent): void {
    // A reflector being stopped may still deliver; only the current generation of a key reaches subscribers.
    const entry = this.entries.get(key);
    if (!entry || entry.generation !== generation) return;
    for (const s of entry.subs) if (s.ready && !s.released) this.deliver(entry, s, ev);
  }

  private replay(entry: Entry, sub: Subscriber): void {
    if (sub.released) return;
    const r = entry.reflector;
    for (const [key, object] of r.store.entries()) {
      this.deliver(entry, sub, { type: 'added', key, object });
      if (sub.released) return;
    }
    if (r.isPrimed()) this.deliver(entry, sub, { type: 'primed' });
    const failing = r.failing;
    if (failing && !sub.released) this.deliver(entry, sub, { type: 'error', error: { ...failing } });
    sub.ready = true;
  }

  private deliver(entry: Entry, sub: Subscriber, ev: InformerEvent): void {
    try {
      sub.handler(ev);
    } catch (error) {
      this.handlerErrorCount++;
      const report = this.opts.onHandlerError;
      try {
        if (report) report(error, { target: entry.reflector.target, event: ev });
        else console.error(`refwatch: a handler of the watch ${entry.key} threw on a ${ev.type} event:`, error);
      } catch {
        // A failing error reporter must not take the watch down either.
      }
    }
  }

  private async release(entry: Entry, sub: Subscriber): Promise<void> {
    if (sub.released && !entry.subs.has(sub)) return;
    sub.released = true;
    entry.subs.delete(sub);
    if (entry.subs.size > 0 || this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    const p = entry.reflector.stop();
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
