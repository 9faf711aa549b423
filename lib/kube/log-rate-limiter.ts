/** A verdict of LogRateLimiter.take. */
export interface LogPermit {
  allowed: boolean;
  /** Lines of this key dropped since the last one allowed; tell the reader when allowed. */
  suppressed: number;
  /** Over how long they were dropped, in ms. */
  sinceMs: number;
}

/**
 * LogRateLimiter lets through, per key (a watch and a reason, say), the first
 * line and then at most one line per window, counting what it drops so that
 * the next line can say so. An outage that fails a watch every second logs
 * one line a minute per watch, not sixty.
 */
export class LogRateLimiter {
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly keys = new Map<string, { lastAt: number; suppressed: number }>();

  constructor(opts: { windowMs?: number; now?: () => number } = {}) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  take(key: string): LogPermit {
    const now = this.now();
    const k = this.keys.get(key);
    if (!k) {
      this.keys.set(key, { lastAt: now, suppressed: 0 });
      return { allowed: true, suppressed: 0, sinceMs: 0 };
    }
    if (now - k.lastAt < this.windowMs) {
      k.suppressed++;
      return { allowed: false, suppressed: k.suppressed, sinceMs: now - k.lastAt };
    }
    const permit = { allowed: true, suppressed: k.suppressed, sinceMs: now - k.lastAt };
    k.lastAt = now;
    k.suppressed = 0;
    return permit;
  }

  /** forget drops a key's history, e.g. when its watch stops for good. */
  forget(prefix: string): void {
    for (const key of this.keys.keys()) if (key.startsWith(prefix)) this.keys.delete(key);
  }
}
