import 'server-only';
import { z } from 'zod';
import type { ChangeFilter } from '../lib/changelog';
import { explain, parseDuration, stuck } from '../lib/diagnose';
import { parseKey, parseKindKey, validateNamespace } from '../lib/model';
import { ApiError, json } from './http/errors';
import { RateLimiter, guardMutation } from './http/guard';
import { SSE_HEADERS, sseStream } from './http/sse';
import { parseQuery } from './http/validate';
import type { Runtime } from './runtime';
import { buildSnapshot } from './snapshot';

/** The route handlers' logic: validate, call the runtime, serialize. Route files under app/ only delegate here. */

const filterShape = {
  namespace: z
    .string()
    .optional()
    .refine((v) => v === undefined || validateNamespace(v).ok, 'must be a namespace name such as shop'),
  kind: z
    .string()
    .optional()
    .refine((v) => v === undefined || parseKindKey(v).ok, 'must be a kind such as Database.demo.refwatch.dev or Secret'),
};

function toFilter(q: { namespace?: string; kind?: string }): ChangeFilter {
  const f: ChangeFilter = {};
  if (q.namespace) f.namespace = q.namespace;
  if (q.kind) f.kind = q.kind;
  return f;
}

function stuckNow(rt: Runtime, olderThan = rt.config.stuckThresholdMs) {
  return stuck(rt.manager, { olderThan, now: Date.now() });
}

export function getSnapshot(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), filterShape);
  return json(buildSnapshot(rt.manager, rt.cluster(), stuckNow(rt), toFilter(q)));
}

export function getStream(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), { ...filterShape, lastEventId: z.string().regex(/^\d+$/, 'must be a revision number').optional() });
  const filter = toFilter(q);
  const body = sseStream({
    changelog: rt.changelog,
    snapshot: () => buildSnapshot(rt.manager, rt.cluster(), stuckNow(rt), filter),
    filter,
    lastEventId: req.headers.get('last-event-id') ?? q.lastEventId ?? null,
    cluster: { current: () => rt.cluster(), subscribe: (l) => rt.onCluster(l) },
    signal: req.signal,
    onOpen: () => rt.metrics.sseClients.inc(),
    onClose: () => rt.metrics.sseClients.dec(),
  });
  return new Response(body, { headers: SSE_HEADERS });
}

export function getExplain(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), {
    object: z.string({ error: 'is required: give an object key such as App.demo.refwatch.dev/shop/web' }),
    controller: z.string().min(1).optional(),
  });
  const key = parseKey(q.object, 'object');
  if (!key.ok) throw key.error;
  const r = explain(rt.manager, q.object, { controller: q.controller, now: Date.now() });
  if (!r.ok) throw new ApiError(r.error.code === 'NotFound' ? 404 : 400, r.error.code, r.error.message, r.error.field ?? 'object');
  return json(r.value);
}

export function getStuck(rt: Runtime, req: Request): Response {
  const q = parseQuery(new URL(req.url), { olderThan: z.string().optional(), ...filterShape });
  let olderThan = rt.config.stuckThresholdMs;
  if (q.olderThan !== undefined) {
    const d = parseDuration(q.olderThan, 'olderThan');
    if (!d.ok) throw new ApiError(400, 'InvalidParameter', d.error.message, 'olderThan');
    olderThan = d.value;
  }
  const all = stuckNow(rt, olderThan);
  const items = all.filter((s) => (!q.namespace || s.key.split('/')[1] === q.namespace) && (!q.kind || s.key.startsWith(q.kind + '/')));
  return json({ olderThanMs: olderThan, items });
}

export async function getMetrics(rt: Runtime): Promise<Response> {
  rt.manager.publishStats();
  return new Response(await rt.metrics.registry.metrics(), { headers: { 'content-type': rt.metrics.registry.contentType, 'cache-control': 'no-store' } });
}

export function getHealthz(): Response {
  return json({ status: 'ok' });
}

export function getReadyz(rt: Runtime): Response {
  const r = rt.readiness();
  return json({ status: r.ready ? 'ready' : 'not ready', reasons: r.reasons }, r.ready ? 200 : 503);
}

const limiter = new RateLimiter(5, 20);

/** guard applies the mutating-endpoint defaults (same origin, token, rate limit). */
export function guard(rt: Runtime, req: Request): void {
  guardMutation(req, { token: rt.config.token, limiter });
}
