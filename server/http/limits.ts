import { ApiError } from './errors';

/**
 * clientOf names the client a request comes from, for per-client limits: the
 * last address in X-Forwarded-For. Next's server sets that header to the
 * socket's remote address when the request has none, and a proxy in front
 * appends the address it was reached from, so the last entry is the nearest
 * hop refwatch can tell apart. A client that talks to refwatch directly can
 * write the header itself; the totals bound what it gains by that.
 */
export function clientOf(req: Request): string {
  const forwarded = req.headers.get('x-forwarded-for');
  const last = forwarded?.split(',').at(-1)?.trim();
  if (!last) return 'unknown';
  // One client, however it is written: ::ffff:127.0.0.1 is 127.0.0.1.
  return last.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '').slice(0, 100);
}

/** RateLimiter is a token bucket: take() returns 0, or how long to wait (ms) before a token is there. */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): number {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return ((1 - this.tokens) / this.perSecond) * 1000;
  }

  /** full says the bucket has refilled, so it is no different from a new one. */
  full(): boolean {
    this.refill();
    return this.tokens >= this.burst;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
  }
}

export interface MutationLimitOptions {
  /** Mutations per second, per client; the burst is four times that. */
  perClient: number;
  /** Mutations per second of all clients together; the burst is four times that. */
  total: number;
  /** Clients remembered at once; idle ones are forgotten first. */
  maxClients?: number;
  now?: () => number;
}

/**
 * MutationLimits rate-limits mutating requests per client, so one busy
 * client does not use up the others' budget, and in total, which bounds
 * clients that pose as many. A client's bucket is forgotten once it has
 * refilled: it is then the same as a new one.
 */
export class MutationLimits {
  private readonly clients = new Map<string, RateLimiter>();
  private readonly all: RateLimiter;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(private readonly opts: MutationLimitOptions) {
    this.now = opts.now ?? Date.now;
    this.all = new RateLimiter(opts.total, opts.total * 4, this.now);
    this.maxClients = opts.maxClients ?? 10_000;
  }

  /** take admits one mutation of `client`, or throws the 429 that says which limit and when to retry. */
  take(client: string): void {
    let bucket = this.clients.get(client);
    if (!bucket) {
      if (this.clients.size >= this.maxClients) this.forgetIdle();
      bucket = new RateLimiter(this.opts.perClient, this.opts.perClient * 4, this.now);
      if (this.clients.size < this.maxClients) this.clients.set(client, bucket);
    }
    const wait = bucket.take();
    if (wait > 0)
      throw rateLimited(
        wait,
        `too many changes from ${client}: at most ${this.opts.perClient} per second per client (REFWATCH_MUTATION_RATE / --mutation-rate)`,
      );
    const waitAll = this.all.take();
    if (waitAll > 0)
      throw rateLimited(
        waitAll,
        `too many changes from all clients together: at most ${this.opts.total} per second (ten times REFWATCH_MUTATION_RATE / --mutation-rate)`,
      );
  }

  /** The clients whose buckets are remembered. */
  get size(): number {
    return this.clients.size;
  }

  private forgetIdle(): void {
    for (const [client, bucket] of this.clients) if (bucket.full()) this.clients.delete(client);
  }
}

function rateLimited(waitMs: number, why: string): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(429, 'RateLimited', `${why}; retry in ${seconds} s`, undefined, {
    'retry-after': String(seconds),
  });
}

export interface StreamLimitOptions {
  perClient: number;
  total: number;
}

/**
 * StreamSlots caps open streams (GET /api/v1/stream) per client and in
 * total: each stream holds a slot from open to close, and one past a cap is
 * a 429 naming the cap, its setting, and what to close.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();
  private count = 0;

  constructor(private readonly opts: StreamLimitOptions) {}

  /** acquire takes a slot for `client` and returns its release (which may be called more than once), or throws 429. */
  acquire(client: string): () => void {
    const mine = this.open.get(client) ?? 0;
    if (mine >= this.opts.perClient)
      throw new ApiError(
        429,
        'TooManyStreams',
        `${client} has ${mine} streams open, the most one client may (REFWATCH_STREAMS_PER_CLIENT / --streams-per-client); close a dashboard tab or a \`refwatch watch\`, or raise the limit`,
        undefined,
        { 'retry-after': '5' },
      );
    if (this.count >= this.opts.total)
      throw new ApiError(
        429,
        'TooManyStreams',
        `this server has ${this.count} streams open, the most it serves (REFWATCH_STREAMS_TOTAL / --streams-total); retry later, or raise the limit`,
        undefined,
        { 'retry-after': '5' },
      );
    this.open.set(client, mine + 1);
    this.count++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count--;
      const left = (this.open.get(client) ?? 1) - 1;
      if (left > 0) this.open.set(client, left);
      else this.open.delete(client);
    };
  }

  /** Open streams: of one client, or in total. */
  opened(client?: string): number {
    return client === undefined ? this.count : (this.open.get(client) ?? 0);
  }
}
