import 'server-only';
import { z } from 'zod';
import { parseDuration } from '../../lib/diagnose';
import { isRefwatchError, parseKey, validateNamespace } from '../../lib/model';
import { ApiError, json } from '../http/errors';
import { parseQuery } from '../http/validate';
import type { Runtime } from '../runtime';

/**
 * parseInstant reads a `since`/`until`: an RFC 3339 time, epoch milliseconds,
 * or a duration before now (24h, 30m).
 */
export function parseInstant(text: string, field: string, now: number): number {
  if (/^\d{10,}$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const at = Date.parse(text);
    if (Number.isFinite(at)) return at;
  }
  const d = parseDuration(text, field);
  if (d.ok) return now - d.value;
  throw new ApiError(
    400,
    'InvalidParameter',
    `query parameter "${field}" "${text}" is neither a time (2026-05-01T14:02:11Z, or epoch ms) nor a duration before now (24h)`,
    field,
  );
}

/**
 * getHistory answers GET /api/v1/history: one object's timeline (object=KEY,
 * with its references and its referents' transitions interleaved) or a
 * namespace's (namespace=NS), oldest first, a page at a time.
 */
export async function getHistory(rt: Runtime, req: Request): Promise<Response> {
  const q = parseQuery(new URL(req.url), {
    object: z.string().min(1).optional(),
    namespace: z.string().min(1).optional(),
    since: z.string().min(1).optional(),
    until: z.string().min(1).optional(),
    limit: z.coerce
      .number({ error: 'must be a whole number from 1 to 1000' })
      .int('must be a whole number from 1 to 1000')
      .min(1, 'must be a whole number from 1 to 1000')
      .max(1000, 'must be a whole number from 1 to 1000')
      .default(200),
    cursor: z.string().regex(/^\d+$/, 'must be the `next` of the previous page').optional(),
  });
  if ((q.object === undefined) === (q.namespace === undefined))
    throw new ApiError(
      400,
      'InvalidParameter',
      'give one of object (a key such as Pod/shop/web) or namespace (such as shop)',
      q.object === undefined ? 'object' : 'namespace',
    );
  if (q.object !== undefined) {
    const key = parseKey(q.object, 'object');
    if (!key.ok) throw key.error;
  }
  if (q.namespace !== undefined) {
    const v = validateNamespace(q.namespace, 'namespace');
    if (!v.ok) throw new ApiError(400, 'InvalidParameter', v.error.message, 'namespace');
  }
  const store = historyOf(rt);
  const now = Date.now();
  const since = q.since !== undefined ? parseInstant(q.since, 'since', now) : undefined;
  const until = q.until !== undefined ? parseInstant(q.until, 'until', now) : undefined;
  try {
    const page = await store.recorder.timeline({
      ...(q.object !== undefined ? { object: q.object } : {}),
      ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
      ...(q.cursor !== undefined ? { cursor: Number(q.cursor) } : {}),
      limit: q.limit,
    });
    return json({
      cluster: store.cluster,
      ...(q.object !== undefined ? { object: q.object } : { namespace: q.namespace }),
      transitions: page.transitions,
      ...(page.next !== undefined ? { next: String(page.next) } : {}),
    });
  } catch (e) {
    throw unavailable(e);
  }
}

/**
 * getHistoryState answers GET /api/v1/history/state?at=…: the last recorded
 * state, at that instant, of every referrer (per controller), referent,
 * reference and reference controller (namespace=NS: of that namespace), for
 * the dashboard's read-only view of a past moment.
 */
export async function getHistoryState(rt: Runtime, req: Request): Promise<Response> {
  const q = parseQuery(new URL(req.url), {
    at: z.string().min(1, 'give the moment to show, such as 2026-05-01T14:02:11Z, epoch ms or 1h (before now)'),
    namespace: z.string().min(1).optional(),
  });
  if (q.namespace !== undefined) {
    const v = validateNamespace(q.namespace, 'namespace');
    if (!v.ok) throw new ApiError(400, 'InvalidParameter', v.error.message, 'namespace');
  }
  const store = historyOf(rt);
  const at = parseInstant(q.at, 'at', Date.now());
  try {
    const states = await store.recorder.statesAt(at, q.namespace);
    return json({
      cluster: store.cluster,
      at,
      ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
      states,
    });
  } catch (e) {
    throw unavailable(e);
  }
}

function historyOf(rt: Runtime): NonNullable<Runtime['store']> {
  if (!rt.store)
    throw new ApiError(
      404,
      'HistoryOff',
      'history is off on this server (--history off); start it with --history on, a SQLite path or a postgres:// URL',
      'history',
    );
  return rt.store;
}

function unavailable(e: unknown): unknown {
  if (isRefwatchError(e) && e.code === 'HistoryUnavailable')
    return new ApiError(503, 'HistoryUnavailable', e.message, 'history', { 'retry-after': '5' });
  return e;
}
