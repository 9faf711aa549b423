import { z } from 'zod';
import { LEAN_MEDIA_TYPE as LEAN_TYPE } from '../../lib/changelog/codec';
import { ApiError } from './errors';

export const PLAIN_TYPE = 'application/json';

/** How a snapshot or a stream's payloads are written: plain entity JSON, or the lean wire format. */
export type WireChoice = 'plain' | 'lean';

/** The `format` query parameter, which chooses without Accept: EventSource cannot set headers. */
export const formatParam = z
  .enum(['plain', 'lean'], {
    error: `must be plain (entity JSON, ${PLAIN_TYPE}) or lean (refwatch.lean/1, ${LEAN_TYPE})`,
  })
  .optional();

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function ranges(accept: string): Range[] {
  const out: Range[] = [];
  for (const item of accept.split(',')) {
    const [media, ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    const [type, subtype] = (media ?? '').split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q=([01](?:\.\d{0,3})?)$/.exec(p);
      if (m) q = Number(m[1]);
    }
    out.push({ type, subtype, q });
  }
  return out;
}

/** How much `accept` wants `media`: the quality of its most specific matching range, and that range's specificity (2 exact, 1 type/*, 0 *\/*, -1 none). */
function quality(list: Range[], media: string): { q: number; specificity: number } {
  const [type, subtype] = media.split('/');
  let best = { q: 0, specificity: -1 };
  for (const r of list) {
    const specificity =
      r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (specificity > best.specificity) best = { q: r.q, specificity };
  }
  return best;
}

/**
 * negotiateSnapshot picks the body of GET /api/v1/snapshot: `format=` when
 * given, else by Accept. No Accept, `*\/*` (curl's default) and
 * `application/json` get plain entity JSON; the lean format goes to a client
 * that names its media type and prefers it at least as much. A request
 * that accepts neither is 406, naming both.
 */
export function negotiateSnapshot(req: Request, format: WireChoice | undefined): WireChoice {
  if (format) return format;
  const accept = req.headers.get('accept');
  if (accept === null || accept.trim() === '') return 'plain';
  const list = ranges(accept);
  const lean = quality(list, LEAN_TYPE);
  const plain = quality(list, PLAIN_TYPE);
  if (lean.q > 0 && (lean.q > plain.q || (lean.q === plain.q && lean.specificity === 2))) return 'lean';
  if (plain.q > 0) return 'plain';
  throw new ApiError(
    406,
    'NotAcceptable',
    `Accept "${accept.slice(0, 200)}" allows neither body this serves: ${PLAIN_TYPE} (entity JSON) or ${LEAN_TYPE} (the lean format); accept one of them, or give ?format=plain|lean`,
    'accept',
  );
}

/**
 * negotiateStream picks the payloads of GET /api/v1/stream, whose Accept is
 * text/event-stream: `format=` when given, else lean when Accept also names
 * the lean media type, else plain.
 */
export function negotiateStream(req: Request, format: WireChoice | undefined): WireChoice {
  if (format) return format;
  const lean = quality(ranges(req.headers.get('accept') ?? ''), LEAN_TYPE);
  return lean.specificity === 2 && lean.q > 0 ? 'lean' : 'plain';
}

/** contentType is the Content-Type of a snapshot body in the chosen format. */
export const contentType = (choice: WireChoice): string =>
  `${choice === 'lean' ? LEAN_TYPE : PLAIN_TYPE}; charset=utf-8`;
