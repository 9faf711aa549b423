import { notAcceptable } from './status';
import type { ResourceType } from './resources';
import type { StoredObject } from './store';

/*
 * Output content negotiation, as kube-apiserver does it in two steps:
 * go-restful first refuses an Accept header that names no media type the
 * route produces ("406: Not Acceptable … Available representations"), then
 * the apiserver's negotiator picks the first clause, by preference, whose
 * parameters it can honour: `as`/`g`/`v` convert the answer to a meta.k8s.io
 * Table or PartialObjectMetadata(List). This server only writes JSON, so it
 * produces application/json alone, and says so.
 */

/** The converted forms a client may ask for with `as=…;g=meta.k8s.io;v=…`. */
export type Conversion = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** PartialRepresentation asks for metadata only: of one object, or of each object of a list. */
export type PartialRepresentation = { as: 'PartialObjectMetadata' | 'PartialObjectMetadataList'; apiVersion: string };

/** Representation is what the answer is: the object itself, or a meta.k8s.io conversion of it. */
export type Representation = { as: 'object' } | { as: 'Table'; apiVersion: string } | PartialRepresentation;

const PRODUCES = 'application/json';
const CONVERSIONS = new Set<string>(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
const META_VERSIONS = new Set(['v1', 'v1beta1']);

interface Clause {
  type: string;
  subtype: string;
  q: number;
  params: Map<string, string>;
}

/** parseAccept splits an Accept header into clauses, most preferred first (goautoneg's order). */
export function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...rest] = part.split(';');
    const [type = '', subtype = ''] = range.trim().toLowerCase().split('/');
    if (type === '') continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params.set(k, v);
    }
    clauses.push({ type, subtype, q, params });
  }
  const rank = (c: Clause) => [c.q, c.type !== '*' ? 1 : 0, c.subtype !== '*' ? 1 : 0, c.params.size];
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => {
      const ra = rank(a.c);
      const rb = rank(b.c);
      for (let k = 0; k < ra.length; k++) if (ra[k] !== rb[k]) return rb[k]! - ra[k]!;
      return a.i - b.i;
    })
    .map((x) => x.c);
}

function producesJson(c: Clause): boolean {
  return (
    (c.type === '*' && c.subtype === '*') || (c.type === 'application' && (c.subtype === '*' || c.subtype === 'json'))
  );
}

/** honour returns what clause c asks for, if this server can give it. */
function honour(c: Clause): Representation | undefined {
  if (!producesJson(c)) return undefined;
  const stream = c.params.get('stream');
  if ((stream !== undefined && stream !== '' && stream !== 'watch') || (c.params.get('sv') ?? '') !== '')
    return undefined;
  const as = c.params.get('as');
  const g = c.params.get('g');
  const v = c.params.get('v');
  if (as === undefined && g === undefined && v === undefined) return { as: 'object' };
  if (g !== 'meta.k8s.io' || !META_VERSIONS.has(v ?? '') || !CONVERSIONS.has(as ?? '')) return undefined;
  return { as, apiVersion: `meta.k8s.io/${v}` } as Representation;
}

/**
 * negotiate picks the representation of an answer from the request's Accept
 * header, or throws the 406 kube-apiserver answers. `collection` says the
 * route also produces watch streams (a list or watch of a resource).
 */
export function negotiate(accept: string | undefined, collection: boolean): Representation {
  if (accept === undefined || accept.trim() === '') return { as: 'object' };
  const clauses = parseAccept(accept).filter((c) => c.q > 0);
  if (!clauses.some(producesJson)) {
    const available = collection ? `${PRODUCES}, ${PRODUCES};stream=watch` : PRODUCES;
    throw notAcceptable(`406: Not Acceptable\n\nAvailable representations: ${available}`, true);
  }
  for (const c of clauses) {
    const r = honour(c);
    if (r) return r;
  }
  throw notAcceptable(`only the following media types are accepted: ${PRODUCES}`);
}

/** goTypeName names an object's Go type the way kube-apiserver's 406 messages do (`*core.Secret`, `*unstructured.Unstructured`). */
function goTypeName(rt: ResourceType, list: boolean): string {
  if (!rt.builtin) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const pkg = rt.group === '' ? 'core' : rt.group.split('.')[0]!;
  return `*${pkg}.${list ? rt.listKind : rt.kind}`;
}

function partial(obj: StoredObject, apiVersion: string): object {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata };
}

/**
 * asPartialObject renders one object as a PartialObjectMetadata; a Table
 * request is the caller's, and a PartialObjectMetadataList of one object is
 * a 406, as on kube-apiserver.
 */
export function asPartialObject(rt: ResourceType, obj: StoredObject, r: PartialRepresentation): object {
  if (r.as === 'PartialObjectMetadataList')
    throw notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeName(rt, false)})`,
    );
  return partial(obj, r.apiVersion);
}

export interface ListAnswer {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** asPartialList renders a list as a PartialObjectMetadataList, or answers 406 to a request for a single PartialObjectMetadata. */
export function asPartialList(rt: ResourceType, list: ListAnswer, r: PartialRepresentation): object {
  if (r.as === 'PartialObjectMetadata')
    throw notAcceptable(
      `you requested PartialObjectMetadata, but the requested object is a list (${goTypeName(rt, true)})`,
    );
  const metadata: Record<string, unknown> = { resourceVersion: list.resourceVersion };
  if (list.continue) metadata.continue = list.continue;
  if (list.remainingItemCount !== undefined) metadata.remainingItemCount = list.remainingItemCount;
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: r.apiVersion,
    metadata,
    items: list.items.map((o) => partial(o, r.apiVersion)),
  };
}
