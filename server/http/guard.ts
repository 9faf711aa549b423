import { timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';

/**
 * guardMutation enforces refwatch's defaults for non-GET requests: they must
 * come from the dashboard's own origin (Origin header, or Sec-Fetch-Site when
 * a browser sends no Origin), carry the bearer token when one is configured,
 * and stay within a rate limit.
 */
export function guardMutation(req: Request, opts: { token?: string; limiter: RateLimiter }): void {
  const url = new URL(req.url);
  const host = req.headers.get('host') ?? url.host;
  const origin = req.headers.get('origin');
  const site = req.headers.get('sec-fetch-site');
  if (origin !== null) {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      throw new ApiError(403, 'CrossOrigin', `Origin "${origin}" is not a URL; mutating requests must come from the dashboard's own origin`, 'origin');
    }
    if (originHost !== host) throw new ApiError(403, 'CrossOrigin', `cross-origin request from ${origin} refused; mutating requests must come from http://${host}`, 'origin');
  } else if (site !== null && site !== 'same-origin' && site !== 'none') {
    throw new ApiError(403, 'CrossOrigin', `cross-site request (Sec-Fetch-Site: ${site}) refused; mutating requests must come from the dashboard's own origin`, 'sec-fetch-site');
  }
  if (opts.token) {
    const auth = req.headers.get('authorization') ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const a = Buffer.from(given);
    const b = Buffer.from(opts.token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) {
      throw new ApiError(401, 'Unauthorized', 'this server needs `Authorization: Bearer <token>` for changes (the token set by REFWATCH_TOKEN / --token)', 'authorization', { 'www-authenticate': 'Bearer' });
    }
  }
  const wait = opts.limiter.take();
  if (wait > 0) {
    throw new ApiError(429, 'RateLimited', `too many changes; retry in ${Math.ceil(wait / 1000)} s`, undefined, { 'retry-after': String(Math.ceil(wait / 1000)) });
  }
}

/** RateLimiter is a token bucket for mutating endpoints: take() returns 0, or how long to wait (ms). */
export class RateLimiter {
  private tokens: number;
  private last = Date.now();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): number {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return ((1 - this.tokens) / this.perSecond) * 1000;
  }
}
