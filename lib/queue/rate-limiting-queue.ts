import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters';
import { DelayingQueue } from './delaying-queue';
import type { WorkQueueOptions } from './work-queue';

export interface RateLimitingQueueOptions extends WorkQueueOptions {
  /** Defaults to defaultControllerRateLimiter() on the queue's clock. */
  rateLimiter?: RateLimiter;
}

/**
 * RateLimitingQueue is a DelayingQueue whose retries wait as long as its rate
 * limiter says. `addRateLimited(key)` is `addAfter(key, limiter.when(key))`;
 * call `forget(key)` when key succeeds so its next failure starts from the
 * shortest wait. A plain `add(key)` bypasses the limiter and its record.
 */
export class RateLimitingQueue extends DelayingQueue {
  readonly rateLimiter: RateLimiter;

  constructor(opts: RateLimitingQueueOptions = {}) {
    super(opts);
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.clock);
  }

  /** Adds key after the wait its rate limiter gives, and counts a retry. Ignored after shutdown. */
  addRateLimited(key: string): void {
    if (this.shuttingDown()) return;
    this.retryCount++;
    this.addAfter(key, this.rateLimiter.when(key));
    this.metrics.onRetry?.();
  }

  /** Clears key's retry record in the rate limiter; it does not remove key from the queue. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }
}
