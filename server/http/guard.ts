import { createHash, timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { parseConfig, type Config } from '../config';
import { ApiError, isApiError, toResponse } from './errors';
import { HostAllowList, type InterfaceAddresses } from './hosts';

/** AccessPolicy is who may be answered: the Host allow-list, and whether reads need the token. */
export interface AccessPolicy {
  hosts: HostAllowList;
  token?: string;
  readsNeedToken: boolean;
}

export function accessPolicy(config: Config, interfaces: InterfaceAddresses = networkInterfaces()): AccessPolicy {
  return {
    hosts: new HostAllowList(config.host, config.allowedHosts, interfaces),
    ...(config.token ? { token: config.token } : {}),
    readsNeedToken: config.readsNeedToken,
  };
}

let processPolicy: AccessPolicy | undefined;

/** processAccessPolicy is this process's policy, from its environment; it throws the config error if that is invalid. */
export function processAccessPolicy(): AccessPolicy {
  return (processPolicy ??= accessPolicy(parseConfig()));
}

/** The one route where the token may come as ?access_token=, because EventSource cannot send headers. */
export const STREAM_PATH = '/api/v1/stream';

/** Paths that hold data: the API and metrics. Probes, the dashboard page and its assets hold none. */
function holdsData(path: string): boolean {
  return path.startsWith('/api/') || path === '/metrics';
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * tokenMatches compares the SHA-256 digests of both in constant time: digests
 * are always 32 bytes, so neither the time nor an early length check tells a
 * caller how long the token is. The token never appears in an error or a log.
 */
export function tokenMatches(given: string | null | undefined, token: string): boolean {
  return timingSafeEqual(sha256(given ?? ''), sha256(token));
}

function bearerOf(req: Request): string {
  const auth = req.headers.get('authorization') ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7) : '';
}

/**
 * guardAccess applies to every request: the Host header must name this
 * server (421 otherwise, so a rebound DNS name reaches nothing), and when
 * reads need the token, requests for data must carry it (401).
 */
export function guardAccess(req: Request, policy: AccessPolicy): void {
  const host = req.headers.get('host');
  if (!policy.hosts.allows(host)) {
    const shown = host === null ? '' : JSON.stringify(host.slice(0, 100));
    throw new ApiError(
      421,
      'HostNotAllowed',
      host === null
        ? 'the request has no Host header; refwatch answers only requests that name it'
        : `Host ${shown} is not allowed; add it with --allowed-hosts / REFWATCH_ALLOWED_HOSTS`,
      'host',
    );
  }
  if (!policy.readsNeedToken || !policy.token) return;
  const url = new URL(req.url);
  if (!holdsData(url.pathname)) return;
  const given = bearerOf(req) || (url.pathname === STREAM_PATH ? url.searchParams.get('access_token') : '');
  if (!tokenMatches(given, policy.token)) {
    const how =
      url.pathname === STREAM_PATH
        ? '`Authorization: Bearer <token>` or ?access_token=<token>'
        : '`Authorization: Bearer <token>`';
    throw new ApiError(
      401,
      'Unauthorized',
      `this server needs ${how} for reads (the token set by REFWATCH_TOKEN / --token)`,
      'authorization',
      { 'www-authenticate': 'Bearer' },
    );
  }
}

/**
 * accessRefusal is guardAccess as a response, for the proxy in front of every
 * route: JSON for the API, plain text for pages and assets; undefined means go
 * on. A policy that cannot be built (invalid configuration) refuses everything.
 */
export function accessRefusal(req: Request, policy: () => AccessPolicy): Response | undefined {
  let refusal: ApiError;
  try {
    guardAccess(req, policy());
    return undefined;
  } catch (e) {
    if (!isApiError(e)) console.error('refwatch: cannot check requests:', e instanceof Error ? e.message : String(e));
    refusal = isApiError(e)
      ? e
      : new ApiError(
          500,
          'Misconfigured',
          'refwatch cannot check this request: its configuration is invalid; the server log says why',
        );
  }
  if (new URL(req.url).pathname.startsWith('/api/')) return toResponse(refusal);
  return new Response(`${refusal.message}\n`, {
    status: refusal.status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...refusal.headers },
  });
}

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
      throw new ApiError(
        403,
        'CrossOrigin',
        `Origin "${origin}" is not a URL; mutating requests must come from the dashboard's own origin`,
        'origin',
      );
    }
    if (originHost !== host)
      throw new ApiError(
        403,
        'CrossOrigin',
        `cross-origin request from ${origin} refused; mutating requests must come from http://${host}`,
        'origin',
      );
  } else if (site !== null && site !== 'same-origin' && site !== 'none') {
    throw new ApiError(
      403,
      'CrossOrigin',
      `cross-site request (Sec-Fetch-Site: ${site}) refused; mutating requests must come from the dashboard's own origin`,
      'sec-fetch-site',
    );
  }
  if (opts.token) {
    if (!tokenMatches(bearerOf(req), opts.token)) {
      throw new ApiError(
        401,
        'Unauthorized',
        'this server needs `Authorization: Bearer <token>` for changes (the token set by REFWATCH_TOKEN / --token)',
        'authorization',
        { 'www-authenticate': 'Bearer' },
      );
    }
  }
  const wait = opts.limiter.take();
  if (wait > 0) {
    throw new ApiError(429, 'RateLimited', `too many changes; retry in ${Math.ceil(wait / 1000)} s`, undefined, {
      'retry-after': String(Math.ceil(wait / 1000)),
    });
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
