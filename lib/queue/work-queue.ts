import { realClock, type Clock } from './clock';
import { Deque } from './deque';
import type { QueueMetricsProvider, QueueStats } from './metrics';

export interface WorkQueueOptions {
  /** Names the queue in stats and logs, e.g. the controller it feeds. */
  name?: string;
  clock?: Clock;
  metrics?: QueueMetricsProvider;
}

type Waiter = (key: string | undefined) => void;

/**
 * WorkQueue hands out keys that need processing, first in first out, with the
 * guarantees a controller relies on:
 *
 * - `add(key)` marks key as needing processing. A key already queued is not
 *   queued twice (the dirty set deduplicates).
 * - A key is never handed out while it is processing. Adding a key that is
 *   processing marks it dirty, and `done(key)` queues it again, once, however
 *   many adds happened meanwhile.
 * - Every key handed out by `get` or `tryGet` must be passed to `done` when its
 *   processing ends, whatever the outcome.
 * - `shutdown()` stops handing out keys: adds are ignored, queued keys are
 *   dropped, and `get` resolves undefined from then on, including every `get`
 *   already waiting. Unlike client-go, keys still queued at shutdown are not
 *   handed out, so a stop takes no longer than the work already in progress.
 *   `shutdownWithDrain()` also waits until every key being processed is done.
 */
/**
 * Item is a key's bookkeeping. Items outlive their work so that the hot path
 * (add) is one hash lookup and a few field writes, with no map churn; idle
 * items are swept when they outnumber the active ones.
 */
interface Item {
  readonly key: string;
  /** Needs processing; addedAt says since when. */
  dirty: boolean;
  addedAt: number;
  /** Handed out and not done; startedAt says since when, processingAddedAt when it had been added. */
  processing: boolean;
  startedAt: number;
  processingAddedAt: number;
}

const SWEEP_AT = 65_536;
/** A promise settled once, whose reactions end a burst of adds (see startBurst). */
const SETTLED = Promise.resolve();

export class WorkQueue {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly metrics: QueueMetricsProvider;

  private readonly queue = new Deque<Item>(64);
  private readonly items = new Map<string, Item>();
  private processingCount = 0;
  private dirtyCount = 0;
  /** The clock read once per synchronous burst of adds (a dispatch to thousands of referrers). */
  private burstNow: number | undefined;
  private readonly waiters = new Deque<Waiter>();
  private drainWaiters: (() => void)[] = [];
  private stopping = false;
  private addCount = 0;
  protected retryCount = 0;

  constructor(opts: WorkQueueOptions = {}) {
    this.name = opts.name ?? '';
    this.clock = opts.clock ?? realClock;
    this.metrics = opts.metrics ?? {};
  }

  /** Marks key as needing processing. Ignored after shutdown. */
  add(key: string): void {
    if (this.stopping) return;
    let item = this.items.get(key);
    if (item === undefined) {
      item = { key, dirty: false, addedAt: 0, processing: false, startedAt: 0, processingAddedAt: 0 };
      this.items.set(key, item);
    } else if (item.dirty) return;
    item.dirty = true;
    item.addedAt = this.burstNow ?? this.startBurst();
    this.dirtyCount++;
    this.addCount++;
    this.metrics.onAdd?.();
    if (!item.processing) this.enqueue(item);
  }

  /**
   * Resolves with the next key to process, waiting for one if none is queued;
   * resolves undefined once the queue is shut down. The key is already marked
   * processing when the promise resolves.
   */
  get(): Promise<string | undefined> {
    const key = this.tryGet();
    if (key !== undefined || this.stopping) return Promise.resolve(key);
    return new Promise<string | undefined>((resolve) => this.waiters.push(resolve));
  }

  /** Hands out the next queued key at once, or returns undefined when none is queued or the queue is shut down. */
  tryGet(): string | undefined {
    const item = this.queue.shift();
    if (item === undefined) return undefined;
    this.handOut(item);
    return item.key;
  }

  /**
   * Marks the end of processing key. If key was added while processing, it is
   * queued again now. A key that is not processing is ignored.
   */
  done(key: string): void {
    const item = this.items.get(key);
    if (item === undefined || !item.processing) return;
    item.processing = false;
    this.processingCount--;
    if (this.stopping) {
      if (this.processingCount === 0) this.releaseDrainWaiters();
    } else if (item.dirty) {
      this.enqueue(item);
    }
    this.metrics.onWorkDuration?.(this.clock.now() - item.startedAt);
    this.sweep();
  }

  /** sinceAdded is how long ago a key now processing was added (ms), or undefined if it is not processing. */
  sinceAdded(key: string): number | undefined {
    const item = this.items.get(key);
    return item?.processing ? this.clock.now() - item.processingAddedAt : undefined;
  }

  /** Number of keys queued and ready to be handed out. */
  len(): number {
    return this.queue.length;
  }

  shuttingDown(): boolean {
    return this.stopping;
  }

  /**
   * Stops handing out keys and wakes every waiting `get` with undefined.
   * Idempotent. Also ends the wait of any pending `shutdownWithDrain`, which
   * makes it the way to give up on a drain that takes too long.
   */
  async shutdown(): Promise<void> {
    this.beginShutdown();
    this.releaseDrainWaiters();
  }

  /** Like `shutdown`, then waits until every key being processed is done. Idempotent. */
  shutdownWithDrain(): Promise<void> {
    this.beginShutdown();
    if (this.processingCount === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  stats(): QueueStats {
    const now = this.clock.now();
    let longestRunningMs = 0;
    let unfinishedWorkMs = 0;
    // Stats are read rarely (a metrics scrape); the hot paths keep no ordered set for them.
    for (const item of this.items.values()) {
      if (!item.processing) continue;
      const ran = now - item.startedAt;
      if (ran > longestRunningMs) longestRunningMs = ran;
      unfinishedWorkMs += ran;
    }
    return {
      depth: this.queue.length,
      adds: this.addCount,
      retries: this.retryCount,
      processing: this.processingCount,
      longestRunningMs,
      unfinishedWorkMs,
    };
  }

  /** Subclasses extend this to release what they hold (timers); it runs once. */
  protected beginShutdown(): boolean {
    if (this.stopping) return false;
    this.stopping = true;
    this.queue.clear();
    for (const item of this.items.values()) item.dirty = false;
    this.dirtyCount = 0;
    for (let w = this.waiters.shift(); w !== undefined; w = this.waiters.shift()) w(undefined);
    return true;
  }

  private startBurst(): number {
    const now = this.clock.now();
    this.burstNow = now;
    // A reaction to a settled promise runs at the same point as queueMicrotask's callback, without the async
    // resource and the bound function node makes for each queueMicrotask: most bursts are a single add.
    void SETTLED.then(this.endBurst);
    return now;
  }

  private readonly endBurst = (): void => {
    this.burstNow = undefined;
  };

  private enqueue(item: Item): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.queue.push(item);
      return;
    }
    this.handOut(item);
    waiter(item.key);
  }

  private handOut(item: Item): void {
    const now = this.clock.now();
    const addedAt = item.dirty ? item.addedAt : now;
    if (item.dirty) this.dirtyCount--;
    item.dirty = false;
    item.processing = true;
    item.startedAt = now;
    item.processingAddedAt = addedAt;
    this.processingCount++;
    this.metrics.onQueueLatency?.(now - addedAt);
  }

  /**
   * Drops idle items once there are many and they are most of the map, so
   * memory follows the live key set without re-creating items on every burst.
   */
  private sweep(): void {
    const active = this.dirtyCount + this.processingCount;
    if (this.items.size < SWEEP_AT || this.items.size < 4 * active) return;
    for (const [key, item] of this.items) if (!item.dirty && !item.processing) this.items.delete(key);
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
