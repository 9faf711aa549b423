import { networkInterfaces } from 'node:os';
import { tokenMatches } from '../../lib/model/token';
import { parseConfig, type Config } from '../config';
import { ApiError, isApiError, toResponse } from './errors';
import { HostAllowList, type InterfaceAddresses } from './hosts';
import { clientOf, type MutationLimits } from './limits';
import { TICKET_PROBLEM, processStreamTickets, type StreamTickets } from './tickets';

/** AccessPolicy is who may be answered: the Host allow-list, and whether reads need the token. */
export interface AccessPolicy {
  hosts: HostAllowList;
  token?: string;
  readsNeedToken: boolean;
  /** Checks the stream's tickets (GET /api/v1/stream?ticket=), which stand in for the token there. */
  tickets: StreamTickets;
}

export function accessPolicy(
  config: Config,
  interfaces: InterfaceAddresses = networkInterfaces(),
  tickets: StreamTickets = processStreamTickets(config.token),
): AccessPolicy {
  return {
    hosts: new HostAllowList(config.host, config.allowedHosts, interfaces),
    ...(config.token ? { token: config.token } : {}),
    readsNeedToken: config.readsNeedToken,
    tickets,
  };
}

let processPolicy: AccessPolicy | undefined;

/** processAccessPolicy is this process's policy, from its environment; it throws the config error if that is invalid. */
export function processAccessPolicy(): AccessPolicy {
  return (processPolicy ??= accessPolicy(parseConfig()));
}

/** The one route that takes a ticket (?ticket=) instead of the token, because EventSource cannot send headers. */
export const STREAM_PATH = '/api/v1/stream';
/** Where a holder of the token gets a stream ticket. */
export const TICKETS_PATH = '/api/v1/stream/tickets';

/** Paths that hold data: the API and metrics. Probes, the dashboard page and its assets hold none. */
function holdsData(path: string): boolean {
  return path.startsWith('/api/') || path === '/metrics';
}

export { tokenMatches };

export function bearerOf(req: Request): string {
  const auth = req.headers.get('authorization') ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7) : '';
}

/**
 * guardAccess applies to every request: the Host header must name this
 * server (421 otherwise, so a rebound DNS name reaches nothing), the token
 * never comes in a URL (401), and when reads need the token, requests for
 * data must carry it, or on the stream a valid ticket (401). The stream's
 * handler redeems the ticket, so it opens one connection.
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
  const url = new URL(req.url);
  if (!holdsData(url.pathname)) return;
  if (url.searchParams.has('access_token'))
    throw new ApiError(
      401,
      'TokenInURL',
      `the token is not accepted in a URL, which proxies and access logs record: send \`Authorization: Bearer <token>\`; for the stream from a browser, POST ${TICKETS_PATH} with it and open ${STREAM_PATH}?ticket=<ticket>`,
      'access_token',
      { 'www-authenticate': 'Bearer' },
    );
  if (!policy.readsNeedToken || !policy.token) return;
  if (tokenMatches(bearerOf(req), policy.token)) return;
  const ticket = url.pathname === STREAM_PATH && req.method === 'GET' ? url.searchParams.get('ticket') : null;
  if (ticket !== null) {
    const problem = policy.tickets.check(ticket);
    if (problem === undefined) return;
    throw ticketRefused(problem);
  }
  const how =
    url.pathname === STREAM_PATH
      ? `\`Authorization: Bearer <token>\`, or ?ticket=<ticket> from POST ${TICKETS_PATH}`
      : '`Authorization: Bearer <token>`';
  throw new ApiError(
    401,
    'Unauthorized',
    `this server needs ${how} for reads (the token set by REFWATCH_TOKEN / --token)`,
    'authorization',
    { 'www-authenticate': 'Bearer' },
  );
}

/** ticketRefused is the 401 for a ticket that does not open a stream, saying why and how to get another. */
export function ticketRefused(problem: keyof typeof TICKET_PROBLEM): ApiError {
  return new ApiError(
    401,
    'Unauthorized',
    `${TICKET_PROBLEM[problem]}; POST ${TICKETS_PATH} with \`Authorization: Bearer <token>\` for a new one`,
    'ticket',
    { 'www-authenticate': 'Bearer' },
  );
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
 * a browser sends no Origin), carry the bearer token when one is configured
 * (never a stream ticket), and stay within the client's rate limit and the total.
 */
export function guardMutation(req: Request, opts: { token?: string; limits: MutationLimits }): void {
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
  opts.limits.take(clientOf(req));
}
