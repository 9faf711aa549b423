import { RefwatchError } from '../model';
import { realClock, type Clock } from './clock';

/**
 * RateLimiter decides how long a key waits before it is retried.
 * `when(key)` records one more retry of key and returns the wait in ms;
 * `forget(key)` ends tracking of key (call it once key succeeded);
 * `numRequeues(key)` is how many retries of key are on record.
 */
export interface RateLimiter {
  when(key: string): number;
  forget(key: string): void;
  numRequeues(key: string): number;
}

function invalid(field: string, message: string, example: string): RefwatchError {
  return new RefwatchError('InvalidRateLimiter', `${field} ${message}`, { field, example });
}

/**
 * ItemExponentialFailureRateLimiter waits `baseMs · 2^n` for the n-th retry of
 * a key (n from 0), capped at `maxMs`. Keys back off independently.
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  /** The smallest n for which baseMs · 2^n reaches maxMs; from there on the wait is maxMs without computing 2^n. */
  private readonly capExponent: number;

  constructor(
    readonly baseMs: number,
    readonly maxMs: number,
  ) {
    if (!(baseMs > 0) || !Number.isFinite(baseMs))
      throw invalid('baseMs', `must be a positive number of milliseconds, got ${baseMs}`, '5');
    if (!(maxMs >= baseMs) || !Number.isFinite(maxMs))
      throw invalid('maxMs', `must be a finite number of milliseconds >= baseMs (${baseMs}), got ${maxMs}`, '1000000');
    this.capExponent = Math.ceil(Math.log2(maxMs / baseMs));
  }

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    if (n >= this.capExponent) return this.maxMs;
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * BucketRateLimiter is a token bucket shared by all keys: it holds up to
 * `burst` tokens and refills at `qps` tokens per second. `when` reserves a
 * token and returns how long until that token is available (0 while the bucket
 * is not empty), so successive reservations on an empty bucket are spaced
 * 1000/qps ms apart. It keeps no per-key state.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !Number.isFinite(qps))
      throw invalid('qps', `must be a positive number of tokens per second, got ${qps}`, '10');
    if (!(burst >= 1) || !Number.isFinite(burst))
      throw invalid('burst', `must be a finite number >= 1, got ${burst}`, '100');
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: string): number {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/**
 * MaxOfRateLimiter waits as long as the slowest of its limiters. Every limiter
 * sees every call, so each keeps its own record.
 */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0)
      throw invalid('limiters', 'must name at least one rate limiter', 'new MaxOfRateLimiter(exponential, bucket)');
    this.limiters = limiters;
  }

  when(key: string): number {
    let wait = 0;
    for (const l of this.limiters) wait = Math.max(wait, l.when(key));
    return wait;
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let n = 0;
    for (const l of this.limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}

/** client-go's default: per-key 5 ms · 2^n capped at 1000 s, max'ed with a 10 qps / burst 100 bucket. */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(5, 1_000_000),
    new BucketRateLimiter(10, 100, clock),
  );
}

/** Crossplane-like: per-key 1 s · 2^n capped at 60 s, max'ed with a 10 qps / burst 100 bucket. */
export function crossplaneRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(1_000, 60_000),
    new BucketRateLimiter(10, 100, clock),
  );
}
