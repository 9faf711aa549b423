import 'server-only';
import { z } from 'zod';
import { explain, parseDuration, rootCauseGroups, stuck } from '../lib/diagnose';
import type { ChangeFilter, SnapshotRows } from '../lib/changelog';
import { RefwatchError, isRefwatchError, keyHasKind, keyHasNamespace, parseKey } from '../lib/model';
import type { DemoRunner } from './demo';
import { objectDetails } from './details/object-details';
import { ApiError, json } from './http/errors';
import { TICKETS_PATH, bearerOf, guardMutation, ticketRefused, tokenMatches } from './http/guard';
import { MutationLimits, StreamSlots, clientOf } from './http/limits';
import { contentType, formatParam, negotiateSnapshot, negotiateStream } from './http/negotiate';
import { processStreamTickets } from './http/tickets';
import { SSE_HEADERS, sseStream } from './http/sse';
import { parseQuery, readJsonBody } from './http/validate';
import type { Runtime } from './runtime';
import { ScopeView, scopeShape, toScope, type Scope } from './scope';
import { captureSnapshot, snapshotBody } from './snapshot';

/** The route handlers' logic: validate, call the runtime, serialize. Route files under app/ only delegate here. */

const filterShape = { namespace: scopeShape.namespace, kind: scopeShape.kind };

/**
 * scopedSnapshot captures the snapshot of one scope in slices (captureSnapshot):
 * the stuck entries judged are the scope's own referrers, and a ScopeView adds
 * the other ends of its references.
 */
async function scopedSnapshot(rt: Runtime, scope: Scope, view: ScopeView | undefined): Promise<SnapshotRows> {
  const snapshot = await captureSnapshot(rt.manager, {
    cluster: () => rt.cluster(),
    filter: scope.filter,
    stuckThresholdMs: rt.config.stuckThresholdMs,
  });
  return view ? view.snapshot(snapshot) : snapshot;
}

/**
 * GET snapshot of a scope: plain entity JSON for scripts (Accept application/json or *\/*), or the lean wire
 * format for refwatch's own clients (Accept application/vnd.refwatch.lean+json, or ?format=). Captured and encoded in
 * slices, so the event loop is never held long. The server gzips it when the client accepts it (next.config.js
 * `compress`), on zlib's threads.
 */
export async function getSnapshot(rt: Runtime, req: Request): Promise<Response> {
  const q = parseQuery(new URL(req.url), { ...scopeShape, format: formatParam });
  const choice = negotiateSnapshot(req, q.format);
  const scope = toScope(q, rt.summary);
  const snapshot = await scopedSnapshot(rt, scope, scope.expands ? new ScopeView(rt.changelog) : undefined);
  return new Response(snapshotBody(snapshot, undefined, choice === 'plain'), {
    headers: { 'content-type': contentType(choice), 'cache-control': 'no-store', vary: 'Accept' },
  });
}

/** getSummary answers the overview: counts per namespace and kind, stuck first, and the oldest stuck referrers. */
export function getSummary(rt: Runtime, req: Request): Response {
  parseQuery(new URL(req.url), {});
  return json(rt.summary.summary());
}

/**
 * The limits of one runtime. They live on globalThis with it, keyed by it,
 * because Next loads each route in a bundle of its own and the limits are the
 * server's, not a route's.
 */
interface Limits {
  mutations: MutationLimits;
  streams: StreamSlots;
}
const LIMITS = Symbol.for('refwatch.limits');
type GlobalWithLimits = typeof globalThis & { [LIMITS]?: WeakMap<Runtime, Limits> };

export function limitsOf(rt: Runtime): Limits {
  const g = globalThis as GlobalWithLimits;
  const all = (g[LIMITS] ??= new WeakMap());
  let limits = all.get(rt);
  if (!limits) {
    const c = rt.config;
    limits = {
      mutations: new MutationLimits({ perClient: c.mutationRate, total: c.mutationRate * 10 }),
      streams: new StreamSlots({ perClient: c.streamsPerClient, total: c.streamsTotal }),
    };
    all.set(rt, limits);
  }
  return limits;
}

/**
 * postStreamTicket gives a holder of the token a ticket for one stream
 * connection within 60 s (docs/api.md, "Access"): a browser's EventSource
 * cannot send the token as a header, and the token does not go in a URL.
 */
export function postStreamTicket(rt: Runtime, req: Request): Response {
  parseQuery(new URL(req.url), {});
  if (rt.config.token && !tokenMatches(bearerOf(req), rt.config.token))
    throw new ApiError(
      401,
      'Unauthorized',
      `POST ${TICKETS_PATH} needs \`Authorization: Bearer <token>\` (the token set by REFWATCH_TOKEN / --token)`,
      'authorization',
      { 'www-authenticate': 'Bearer' },
    );
  return json(processStreamTickets(rt.config.token).issue(), 201);
}

export function getStream(rt: Runtime, req: Request): Response {
  // ticket: stands in for the token, for EventSource, which cannot send headers; checked by guardAccess, redeemed here.
  const q = parseQuery(new URL(req.url), {
    ...scopeShape,
    overview: z
      .enum(['1', 'true'], {
        error: 'must be 1 for the summary alone (no snapshot, no deltas); leave it out otherwise',
      })
      .optional(),
    lastEventId: z.string().regex(/^\d+$/, 'must be a revision number').optional(),
    ticket: z.string().max(200, 'is not a ticket: POST /api/v1/stream/tickets gives one').optional(),
    format: formatParam,
  });
  const format = negotiateStream(req, q.format);
  const scope = toScope(q, rt.summary);
  // A stream past a cap is refused before its ticket is used up, so the ticket can open it once a slot is free.
  const release = limitsOf(rt).streams.acquire(clientOf(req));
  if (q.ticket !== undefined) {
    const problem = processStreamTickets(rt.config.token).redeem(q.ticket);
    if (problem) {
      release();
      throw ticketRefused(problem);
    }
  }
  const view = scope.expands ? new ScopeView(rt.changelog) : undefined;
  const filter: ChangeFilter = scope.filter;
  const body = sseStream({
    changelog: rt.changelog,
    snapshot: () => scopedSnapshot(rt, scope, view),
    filter,
    ...(view ? { admit: (changes) => view.admit(changes) } : {}),
    summary: { current: () => rt.summary.summary(), subscribe: (l) => rt.summaryFeed.subscribe(l) },
    overview: q.overview !== undefined,
    lastEventId: req.headers.get('last-event-id') ?? q.lastEventId ?? null,
    cluster: { current: () => rt.cluster(), subscribe: (l) => rt.onCluster(l) },
    format,
    signal: req.signal,
    onOpen: () => rt.metrics.sseClients.inc(),
    onClose: () => {
      release();
      rt.metrics.sseClients.dec();
    },
  });
  return new Response(body, { headers: { ...SSE_HEADERS, vary: 'Accept' } });
}

export function getExplain(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), {
    object: z.string({ error: 'is required: give an object key such as App.demo.refwatch.dev/shop/web' }),
    controller: z.string().min(1).optional(),
  });
  const key = parseKey(q.object, 'object');
  if (!key.ok) throw key.error;
  const r = explain(rt.manager, q.object, { controller: q.controller, now: Date.now() });
  if (!r.ok)
    throw new ApiError(
      r.error.code === 'NotFound' ? 404 : 400,
      r.error.code,
      r.error.message,
      r.error.field ?? 'object',
    );
  return json(r.value);
}

/** getObjectDetails answers one object's YAML (no Secret value), owners, Events, state history and fixes. */
export async function getObjectDetails(rt: Runtime, req: Request): Promise<Response> {
  const q = parseQuery(new URL(req.url), {
    key: z.string({
      error:
        'is required: give an object key such as Database.demo.refwatch.dev/shop/orders or Secret/shop/db-password',
    }),
  });
  return json(await objectDetails(rt, q.key, req.signal));
}

export function getStuck(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), {
    olderThan: z.string().optional(),
    groupBy: z
      .enum(['rootCause'], { error: 'must be rootCause (group the stuck referrers by what blocks them in the end)' })
      .optional(),
    ...filterShape,
  });
  let olderThan = rt.config.stuckThresholdMs;
  if (q.olderThan !== undefined) {
    const d = parseDuration(q.olderThan, 'olderThan');
    if (!d.ok) throw new ApiError(400, 'InvalidParameter', d.error.message, 'olderThan');
    olderThan = d.value;
  }
  const all = stuck(rt.manager, { olderThan, now: Date.now() });
  const items = all.filter(
    (s) => (!q.namespace || keyHasNamespace(s.key, q.namespace)) && (!q.kind || keyHasKind(s.key, q.kind)),
  );
  if (q.groupBy === 'rootCause') return json({ olderThanMs: olderThan, items, groups: rootCauseGroups(items) });
  return json({ olderThanMs: olderThan, items });
}

/** getMetrics reads the registry's gauges; a scrape changes no state (the engine publishes its stats on its own tick). */
export async function getMetrics(rt: Runtime): Promise<Response> {
  return new Response(await rt.metrics.registry.metrics(), {
    headers: { 'content-type': rt.metrics.registry.contentType, 'cache-control': 'no-store' },
  });
}

export function getHealthz(): Response {
  return json({ status: 'ok' });
}

export function getReadyz(rt: Runtime): Response {
  const r = rt.readiness();
  return json({ status: r.status, reasons: r.reasons, warnings: r.warnings }, r.ready ? 200 : 503);
}

/** guard applies the mutating-endpoint defaults (same origin, token, the client's rate limit). */
export function guard(rt: Runtime, req: Request): void {
  guardMutation(req, { token: rt.config.token, limits: limitsOf(rt).mutations });
}

/** demoOf is the runtime's demo runner, or a 404 saying how to turn the demo on. */
function demoOf(rt: Runtime): DemoRunner {
  if (!rt.demo)
    throw new ApiError(
      404,
      'NotFound',
      'the demo is off on this server: start it with --demo on (REFWATCH_DEMO=on)',
      'demo',
    );
  return rt.demo;
}

const DEMO_STATUS: Record<string, [number, string]> = {
  InvalidDemoConfig: [400, 'InvalidBody'],
  DemoRunActive: [409, 'Conflict'],
  DemoRunNotFound: [404, 'NotFound'],
};

/** demoCall maps the runner's errors to API errors. */
async function demoCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const mapped = isRefwatchError(e) ? DEMO_STATUS[e.code] : undefined;
    if (mapped && isRefwatchError(e)) throw new ApiError(mapped[0], mapped[1], e.message, e.field);
    throw e;
  }
}

/** runIdOf reads ID from /api/v1/demo/runs/ID[/stop]. */
function runIdOf(req: Request): string {
  const segments = new URL(req.url).pathname.split('/').filter(Boolean);
  const id = decodeURIComponent(segments[segments.lastIndexOf('runs') + 1] ?? '');
  if (!/^[0-9a-f]{6}$/.test(id))
    throw new ApiError(
      404,
      'NotFound',
      `"${id}" is not a demo run id (six hex digits, as POST /api/v1/demo/runs returns)`,
      'id',
    );
  return id;
}

/** postDemoRun starts a run: 201 with the run, 409 while another run is active. */
export async function postDemoRun(rt: Runtime, req: Request): Promise<Response> {
  guard(rt, req);
  const runner = demoOf(rt);
  const body = await readJsonBody(
    req,
    z.record(z.string(), z.unknown(), { error: 'must be a JSON object of run settings' }),
  );
  const run = await demoCall(() => runner.start(body));
  return json(run.view(), 201, { location: `/api/v1/demo/runs/${run.id}` });
}

export function getDemoRuns(rt: Runtime, req: Request): Response {
  parseQuery(new URL(req.url), {});
  return json({ items: demoOf(rt).list() });
}

/** getDemoRun returns one run with its latencies, or exports it (?format=json|csv) as a download. */
export async function getDemoRun(rt: Runtime, req: Request): Promise<Response> {
  const q = parseQuery(new URL(req.url), {
    format: z.enum(['json', 'csv'], { error: 'must be json or csv' }).optional(),
  });
  const id = runIdOf(req);
  const run = await demoCall(() => {
    const r = demoOf(rt).get(id);
    if (!r)
      throw new RefwatchError('DemoRunNotFound', `no demo run ${id}; GET /api/v1/demo/runs lists them`, {
        field: 'id',
      });
    return r;
  });
  if (q.format === undefined) return json(run.view({ latencies: true }));
  const csv = q.format === 'csv';
  return new Response(csv ? run.exportCsv() : run.exportJson(), {
    headers: {
      'content-type': csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="refwatch-demo-${id}.${q.format}"`,
      'cache-control': 'no-store',
    },
  });
}

/**
 * stopDemoRun stops a run and keeps its objects, results, exports and watch
 * controller until DELETE; 200 with the run (phase Stopped, or the phase it
 * had already ended in).
 */
export async function stopDemoRun(rt: Runtime, req: Request): Promise<Response> {
  guard(rt, req);
  const id = runIdOf(req);
  const runner = demoOf(rt);
  const run = await demoCall(() => runner.stop(id));
  return json(run.view({ latencies: true }));
}

/** deleteDemoRun stops a run and deletes every object it made; 200 with the run's final state. */
export async function deleteDemoRun(rt: Runtime, req: Request): Promise<Response> {
  guard(rt, req);
  const id = runIdOf(req);
  const runner = demoOf(rt);
  const run = await demoCall(() => runner.stop(id));
  await demoCall(() => runner.delete(id));
  return json(run.view({ latencies: true }));
}
