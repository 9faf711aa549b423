/**
 * Backoff hands out retry delays that grow from `initialMs` by `factor` up to
 * `maxMs`, each stretched by up to `jitter` of itself so that many watches
 * failing together do not retry together. The defaults are client-go's
 * reflector backoff: 0.8 s doubling to 30 s.
 */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** Fraction of the delay added at random: 0.5 gives delays in [d, 1.5 d]. */
  jitter?: number;
  /** Cap for a server's Retry-After, so a bad header cannot park a watch for hours. */
  maxRetryAfterMs?: number;
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly maxRetryAfterMs: number;
  private readonly random: () => number;
  private failures = 0;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 800;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 0.5;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 300_000;
    this.random = opts.random ?? Math.random;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs)) {
      throw new RangeError(`backoff needs 0 < initialMs <= maxMs, got initialMs=${this.initialMs} maxMs=${this.maxMs}`);
    }
  }

  /**
   * next returns the delay before the next retry and counts one more failure.
   * A server's Retry-After is a floor: the delay is never shorter than it.
   */
  next(retryAfterMs?: number): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.failures);
    this.failures++;
    const jittered = Math.min(this.maxMs, base + base * this.jitter * this.random());
    if (retryAfterMs === undefined || !(retryAfterMs > 0)) return Math.round(jittered);
    return Math.round(Math.max(jittered, Math.min(retryAfterMs, this.maxRetryAfterMs)));
  }

  /** reset forgets past failures: the next delay starts from initialMs again. */
  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/**
 * sleep resolves after ms, or rejects with the signal's AbortError as soon as
 * the signal aborts; its timer never outlives the abort.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The operation was aborted', 'AbortError');
}
