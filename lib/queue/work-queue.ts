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
export class WorkQueue {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly metrics: QueueMetricsProvider;

  private readonly queue = new Deque<string>(64);
  /** Keys that need processing, each with when it became dirty. */
  private readonly dirty = new Map<string, number>();
  /** Keys handed out and not done, each with when it was handed out; insertion order is age order. */
  private readonly processing = new Map<string, number>();
  /** For keys processing: when they were added, so a consumer can measure add → done. */
  private readonly processingAddedAt = new Map<string, number>();
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
    if (this.stopping || this.dirty.has(key)) return;
    this.dirty.set(key, this.clock.now());
    this.addCount++;
    this.metrics.onAdd?.();
    if (!this.processing.has(key)) this.enqueue(key);
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
    const key = this.queue.shift();
    if (key !== undefined) this.handOut(key);
    return key;
  }

  /**
   * Marks the end of processing key. If key was added while processing, it is
   * queued again now. A key that is not processing is ignored.
   */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.processingAddedAt.delete(key);
    if (this.stopping) {
      if (this.processing.size === 0) this.releaseDrainWaiters();
    } else if (this.dirty.has(key)) {
      this.enqueue(key);
    }
    this.metrics.onWorkDuration?.(this.clock.now() - startedAt);
  }

  /** sinceAdded is how long ago a key now processing was added (ms), or undefined if it is not processing. */
  sinceAdded(key: string): number | undefined {
    const at = this.processingAddedAt.get(key);
    return at === undefined ? undefined : this.clock.now() - at;
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
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  stats(): QueueStats {
    const now = this.clock.now();
    let longestRunningMs = 0;
    let unfinishedWorkMs = 0;
    for (const startedAt of this.processing.values()) {
      const ran = now - startedAt;
      if (ran > longestRunningMs) longestRunningMs = ran;
      unfinishedWorkMs += ran;
    }
    return {
      depth: this.queue.length,
      adds: this.addCount,
      retries: this.retryCount,
      processing: this.processing.size,
      longestRunningMs,
      unfinishedWorkMs,
    };
  }

  /** Subclasses extend this to release what they hold (timers); it runs once. */
  protected beginShutdown(): boolean {
    if (this.stopping) return false;
    this.stopping = true;
    this.queue.clear();
    this.dirty.clear();
    for (let w = this.waiters.shift(); w !== undefined; w = this.waiters.shift()) w(undefined);
    return true;
  }

  private enqueue(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.queue.push(key);
      return;
    }
    this.handOut(key);
    waiter(key);
  }

  private handOut(key: string): void {
    const now = this.clock.now();
    const addedAt = this.dirty.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.processingAddedAt.set(key, addedAt);
    this.metrics.onQueueLatency?.(now - addedAt);
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
