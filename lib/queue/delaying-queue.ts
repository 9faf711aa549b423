import { RefwatchError } from '../model';
import type { TimerHandle } from './clock';
import { WaitingHeap } from './waiting-heap';
import { WorkQueue } from './work-queue';

/** Node clamps longer timeouts to 1 ms, so a longer wait is reached in steps of this size. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * DelayingQueue is a WorkQueue that can also add a key later.
 *
 * - `addAfter(key, ms)` adds key once `ms` have passed; `ms <= 0` adds it at
 *   once. For a key already waiting, the earliest ready time wins.
 * - A waiting key is not queued, so it does not count in `len()`; `add(key)`
 *   meanwhile queues it at once and does not cancel the wait.
 * - One timer, for the earliest waiting key, is pending at a time; shutdown
 *   clears it and drops every waiting key, so no timer outlives the queue.
 */
export class DelayingQueue extends WorkQueue {
  private readonly waitingKeys = new WaitingHeap();
  private timer: TimerHandle | undefined;
  private timerDue = Infinity;

  /** Adds key after `ms` milliseconds. Ignored after shutdown. */
  addAfter(key: string, ms: number): void {
    if (Number.isNaN(ms) || ms === Infinity) {
      throw new RefwatchError(
        'InvalidDelay',
        `addAfter("${key}", ms): ms must be a finite number of milliseconds, got ${ms}`,
        {
          field: 'ms',
          example: '250',
        },
      );
    }
    if (this.shuttingDown()) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    this.waitingKeys.insert(key, this.clock.now() + ms);
    this.armTimer();
  }

  /** Number of keys waiting for their ready time. */
  waiting(): number {
    return this.waitingKeys.size;
  }

  protected override beginShutdown(): boolean {
    const first = super.beginShutdown();
    this.clearTimer();
    this.waitingKeys.clear();
    return first;
  }

  /** Keeps exactly one timer pending, due when the earliest waiting key is ready. */
  private armTimer(): void {
    const next = this.waitingKeys.peek();
    if (next === undefined) {
      this.clearTimer();
      return;
    }
    if (this.timer !== undefined && this.timerDue <= next.readyAt) return;
    this.clearTimer();
    const delay = Math.min(Math.max(0, next.readyAt - this.clock.now()), MAX_TIMER_MS);
    this.timerDue = next.readyAt;
    this.timer = this.clock.setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.clock.now();
    for (let e = this.waitingKeys.popReady(now); e !== undefined; e = this.waitingKeys.popReady(now)) this.add(e.key);
    this.armTimer();
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Infinity;
  }
}
