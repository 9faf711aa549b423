import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { tokenMatches } from '../model/token';
import type { FaultState } from './faults';
import {
  listOptionsInvalid,
  parseResourceVersion,
  type ApplyOptions,
  type ListResult,
  type PropagationPolicy,
  type Registry,
} from './registry';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, grKey, type ResourceType } from './resources';
import { matches, parseSelector, type Selector } from './selectors';
import {
  ApiError,
  asApiError,
  badRequest,
  expired,
  fieldForbidden,
  fieldNotSupported,
  fieldRequired,
  forbidden,
  internalError,
  invalid,
  methodNotAllowed,
  resourceNotFound,
  tooLarge,
  tooLargeResourceVersion,
  tooManyRequests,
  unauthorized,
  unsupportedMediaType,
  type FieldError,
  type Status,
} from './status';
import type { StoredObject } from './store';
import type { RequestTarget, Subresource } from './strategy';
import { WatchStream, type WatchHub } from './watch';
import { asPartialList, asPartialObject, negotiate, type Representation } from './negotiation';
import { openApiFor, openApiIndex } from './openapi';
import { decodeProtobuf, PROTOBUF } from './protobuf';
import { AUTHORIZATION_GROUP, authorization } from './reviews';
import { columnsFor, toTable } from './table';
import { versionInfo } from './version';

/** kube-apiserver's default request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Verb is the Kubernetes verb a resource request maps to. */
type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** ResourceRequest is a parsed request for a resource path. */
interface ResourceRequest {
  verb: Verb;
  rt: ResourceType;
  version: string;
  namespace: string;
  name?: string;
  sub: Subresource;
}

/** HandlerContext is what the request handler needs from the server. */
export interface HandlerContext {
  registry: Registry;
  hub: WatchHub;
  faults: FaultState;
  token?: string;
  bookmarkIntervalMs: number;
  serverAddress(): string;
  countRequest(key: string): void;
  /** sleep waits ms on a timer the server can cancel at stop; it resolves false when cancelled. */
  sleep(ms: number): Promise<boolean>;
  isStopping(): boolean;
}

const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/livez', '/version']);
const PROBES = new Set(['/healthz', '/readyz', '/livez']);

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** warningHeaders sends the admission check's warnings as kube-apiserver relays a webhook's: `299 - "text"`. */
function warningHeaders(warnings: readonly string[]): Record<string, string[]> {
  if (warnings.length === 0) return {};
  return { Warning: warnings.map((w) => `299 - "${w.replace(/["\\]/g, (c) => `\\${c}`)}"`) };
}

function sendError(res: ServerResponse, e: ApiError): void {
  send(res, e.code, e.status, e.headers);
}

/** bearerMatches compares the bearer token by digest (tokenMatches), so a wrong length answers as any wrong token. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return tokenMatches(m ? m[1]!.trim() : '', token) && m !== null;
}

/** readBody reads at most MAX_BODY_BYTES; a longer body is a 413. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        done = true;
        reject(tooLarge(MAX_BODY_BYTES));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
      done = true;
    });
    req.on('error', (e) => {
      if (!done) reject(e);
      done = true;
    });
  });
}

const BODY_TYPES = ['application/json', 'application/yaml', PROTOBUF];

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** checkBodyType answers 415 for a body the server cannot decode (protobuf, CBOR); clients then fall back to JSON. */
function checkBodyType(req: IncomingMessage): void {
  const type = mediaType(req);
  if (type !== '' && !BODY_TYPES.includes(type)) throw unsupportedMediaType(type, BODY_TYPES);
}

function parseJsonBody(buf: Buffer, kind: string, yaml = false): unknown {
  try {
    return yaml ? parseYaml(buf.toString('utf8')) : JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${(e as Error).message}`,
    );
  }
}

/** objectBody decodes a create or update body: JSON, YAML, or kubectl's protobuf for the kinds protobuf.ts knows. */
function objectBody(req: IncomingMessage, buf: Buffer, kind: string): Record<string, unknown> {
  const type = mediaType(req);
  if (type === PROTOBUF) return decodeProtobuf(buf);
  return parseObjectBody(buf, kind, type === 'application/yaml');
}

function parseObjectBody(buf: Buffer, kind: string, yaml = false): Record<string, unknown> {
  const v = parseJsonBody(buf, kind, yaml);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: body is not a JSON object`,
    );
  }
  return v as Record<string, unknown>;
}

const TRUE_VALUES = new Set(['true', '1', 'True', 'TRUE', 't', 'T']);
const FALSE_VALUES = new Set(['false', '0', 'False', 'FALSE', 'f', 'F']);

function boolParam(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (TRUE_VALUES.has(v) || v === '') return true;
  if (FALSE_VALUES.has(v)) return false;
  throw badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be true or false`);
}

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}

/**
 * route parses a resource path (/api/v1/…, /apis/G/V/…) the way the
 * apiserver's RequestInfoFactory does; undefined means "not a resource path".
 */
function route(
  registry: Registry,
  method: string,
  segments: string[],
  q: URLSearchParams,
): ResourceRequest | ApiError | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else return undefined;

  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
  }
  const [resource, name, sub, ...extra] = rest as [string, string | undefined, string | undefined, ...string[]];
  const rt = registry.table.lookup(group, version, resource);
  if (!rt || extra.length > 0) return resourceNotFound();
  if (sub !== undefined && !(sub === 'status' && rt.statusSubresource)) return resourceNotFound();
  // The namespace object itself: /api/v1/namespaces/NAME is cluster-scoped.
  if (rt.resource === 'namespaces' && rt.group === '') namespace = '';
  if (!rt.namespaced && namespace !== '') return resourceNotFound();

  const watch = watchPrefix || boolParam(q, 'watch') === true;
  let verb: Verb;
  switch (method) {
    case 'GET':
      verb = name === undefined ? (watch ? 'watch' : 'list') : watch ? 'watch' : 'get';
      break;
    case 'POST':
      if (name !== undefined) return methodNotAllowed();
      verb = 'create';
      break;
    case 'PUT':
      if (name === undefined) return methodNotAllowed();
      verb = 'update';
      break;
    case 'PATCH':
      if (name === undefined) return methodNotAllowed();
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      return methodNotAllowed();
  }
  if (sub === 'status' && verb !== 'get' && verb !== 'update' && verb !== 'patch') return methodNotAllowed();
  // All-namespace paths of a namespaced resource serve list and watch only.
  if (rt.namespaced && namespace === '' && verb !== 'list' && verb !== 'watch') {
    return name === undefined ? methodNotAllowed() : resourceNotFound();
  }
  return { verb, rt, version, namespace, name: name === '' ? undefined : name, sub: sub === 'status' ? 'status' : '' };
}

function userName(ctx: HandlerContext): string {
  return ctx.token ? 'embedded' : 'system:anonymous';
}

function forbiddenFor(ctx: HandlerContext, r: ResourceRequest): ApiError {
  const resource = r.sub ? `${r.rt.resource}/${r.sub}` : r.rt.resource;
  const where = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return forbidden(
    r.rt,
    r.name ?? '',
    `User "${userName(ctx)}" cannot ${r.verb} resource "${resource}" in API group "${r.rt.group}" ${where}`,
  );
}

function listBody(r: ResourceRequest, result: ListResult): object {
  const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  // Typed lists of built-in kinds carry kind/apiVersion on the list only; custom resource lists on every item.
  const items = r.rt.builtin ? result.items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest) : result.items;
  return {
    kind: r.rt.listKind,
    apiVersion: r.rt.group === '' ? r.version : `${r.rt.group}/${r.version}`,
    metadata,
    items,
  };
}

function nonResource(
  ctx: HandlerContext,
  path: string,
  segments: string[],
): { code: number; body: unknown } | undefined {
  const table = ctx.registry.table;
  if (path === '/api') return { code: 200, body: apiVersions(ctx.serverAddress()) };
  if (path === '/api/v1') return { code: 200, body: apiResourceList(table, '', 'v1') };
  if (path === '/apis') return { code: 200, body: apiGroupList(table) };
  if (segments[0] === 'apis' && segments.length === 2) {
    const g = table.groups().find((x) => x.name === segments[1]);
    return g ? { code: 200, body: apiGroup(g) } : { code: 404, body: resourceNotFound().status };
  }
  if (segments[0] === 'apis' && segments.length === 3) {
    const [, group, version] = segments as [string, string, string];
    if (!table.servesGroupVersion(group, version)) return { code: 404, body: resourceNotFound().status };
    return { code: 200, body: apiResourceList(table, group, version) };
  }
  if (path === '/openapi/v3') return { code: 200, body: openApiIndex(ctx.registry) };
  if (segments[0] === 'openapi' && segments[1] === 'v3') {
    const doc = openApiFor(ctx.registry, segments.slice(2));
    return doc ? { code: 200, body: doc } : { code: 404, body: resourceNotFound().status };
  }
  if (path === '/version') return { code: 200, body: versionInfo() };
  if (PROBES.has(`/${segments[0] ?? ''}`)) return { code: 200, body: 'ok' };
  return undefined;
}

/**
 * handleRequest serves one HTTP request. It never throws: every failure,
 * including a bug, becomes a Status response.
 */
export async function handleRequest(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await serve(ctx, req, res);
  } catch (e) {
    if (!res.headersSent) sendError(res, asApiError(e));
    else res.destroy();
  }
}

async function serve(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://embedded.invalid');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  let segments: string[];
  try {
    segments = path
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  } catch {
    return sendError(res, badRequest(`malformed path ${JSON.stringify(path)}: invalid percent-encoding`));
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const q = url.searchParams;

  const probe = PROBES.has(`/${segments[0] ?? ''}`);
  if (ctx.token && !PUBLIC_PATHS.has(path) && !probe && !bearerMatches(req.headers.authorization, ctx.token)) {
    ctx.countRequest(`${method.toLowerCase()} ${path}`);
    return sendError(res, unauthorized());
  }

  if (segments[0] === 'apis' && segments[1] === AUTHORIZATION_GROUP) {
    ctx.countRequest(`${method.toLowerCase()} ${path}`);
    const answer = await authorization(method, segments, async () =>
      objectBody(req, await readBody(req), 'SelfSubjectAccessReview'),
    );
    return send(res, answer.code, answer.body);
  }

  let routed: ResourceRequest | ApiError | undefined;
  try {
    routed = route(ctx.registry, method, segments, q);
  } catch (e) {
    routed = asApiError(e);
  }
  const resourceRequest = routed !== undefined && !(routed instanceof ApiError) ? routed : undefined;
  ctx.countRequest(
    resourceRequest
      ? `${resourceRequest.verb} ${grKey(resourceRequest.rt)}${resourceRequest.sub ? '/' + resourceRequest.sub : ''}`
      : `${method.toLowerCase()} ${path}`,
  );

  if (ctx.faults.delayMs > 0 && !probe) {
    const waited = await ctx.sleep(ctx.faults.delayMs);
    if (!waited) return void res.destroy();
  }
  if (ctx.isStopping()) return void res.destroy();

  if (routed === undefined) {
    if (method !== 'GET') return sendError(res, methodNotAllowedOrNotFound(ctx, path, segments));
    const answer = nonResource(ctx, path, segments);
    if (!answer) return sendError(res, resourceNotFound());
    return send(res, answer.code, answer.body);
  }
  if (routed instanceof ApiError) return sendError(res, routed);
  const r = routed;

  if (ctx.faults.isForbidden(r.rt.group, r.rt.resource, r.namespace)) return sendError(res, forbiddenFor(ctx, r));
  const failure = ctx.faults.takeFailure();
  if (failure) {
    const retry = failure.retryAfterSeconds;
    return sendError(
      res,
      failure.status === 429 ? tooManyRequests(retry ?? 1) : internalError('injected fault', retry),
    );
  }
  if (q.get('dryRun'))
    return sendError(
      res,
      badRequest('dryRun is not supported by the embedded API server; use a real cluster for server-side dry runs'),
    );

  const target: RequestTarget = { rt: r.rt, version: r.version, namespace: r.namespace, name: r.name };
  const registry = ctx.registry;
  const rep = negotiate(req.headers.accept, r.verb === 'list' || r.verb === 'watch');
  const one = (obj: StoredObject | Status) => renderObject(registry, r, rep, obj);
  const many = (result: ListResult) => renderList(registry, r, rep, result);
  switch (r.verb) {
    case 'get':
      return send(res, 200, one(registry.get({ ...target, name: r.name! })));
    case 'list': {
      const result = registry.list(target, {
        selector: parseSelector(q.get('labelSelector'), q.get('fieldSelector'), r.rt),
        limit: intParam(q, 'limit'),
        continue: q.get('continue') ?? undefined,
        resourceVersion: q.get('resourceVersion') ?? undefined,
        resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
      });
      if (boolParam(q, 'sendInitialEvents') !== undefined) {
        throw listOptionsInvalid([fieldForbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')]);
      }
      return send(res, 200, many(result));
    }
    case 'watch':
      return startWatch(ctx, req, res, r, q, rep);
    case 'create': {
      checkBodyType(req);
      const manager = fieldManagerOf(req, q, 'CreateOptions');
      const body = objectBody(req, await readBody(req), r.rt.kind);
      const warnings: string[] = [];
      const created = registry.create(target, body, { warnings, manager });
      return send(res, 201, one(created), warningHeaders(warnings));
    }
    case 'update': {
      checkBodyType(req);
      const manager = fieldManagerOf(req, q, 'UpdateOptions');
      const body = objectBody(req, await readBody(req), r.rt.kind);
      const warnings: string[] = [];
      const updated = registry.update({ ...target, name: r.name! }, body, r.sub, { warnings, manager });
      return send(res, 200, one(updated), warningHeaders(warnings));
    }
    case 'patch': {
      const contentType = mediaType(req);
      if (contentType === APPLY_PATCH) {
        const opts = applyOptionsOf(q);
        const config = parseObjectBody(await readBody(req), r.rt.kind, true);
        const warnings: string[] = [];
        const { object, created } = registry.apply({ ...target, name: r.name! }, config, r.sub, { ...opts, warnings });
        return send(res, created ? 201 : 200, one(object), warningHeaders(warnings));
      }
      const manager = fieldManagerOf(req, q, 'PatchOptions');
      if (q.get('force') !== null)
        throw invalid('meta.k8s.io', 'PatchOptions', '', [
          fieldForbidden('force', 'may not be specified for non-apply patch'),
        ]);
      const patch = parseJsonBody(await readBody(req), r.rt.kind);
      const warnings: string[] = [];
      const patched = registry.patch({ ...target, name: r.name! }, contentType, patch, r.sub, { warnings, manager });
      return send(res, 200, one(patched), warningHeaders(warnings));
    }
    case 'delete': {
      const raw = await readBody(req);
      const opts = raw.length > 0 ? parseObjectBody(raw, 'DeleteOptions') : {};
      const pre = (opts.preconditions ?? {}) as { uid?: string; resourceVersion?: string };
      const policy = propagationPolicyOf(q.get('propagationPolicy') ?? opts.propagationPolicy);
      return send(res, 200, one(registry.delete({ ...target, name: r.name! }, pre, policy)));
    }
    case 'deletecollection': {
      const selector = parseSelector(q.get('labelSelector'), q.get('fieldSelector'), r.rt);
      return send(res, 200, many(registry.deleteCollection(target, selector)));
    }
  }
}

/** renderObject answers one object in the negotiated representation; a Status passes unchanged, as on kube-apiserver. */
function renderObject(
  registry: Registry,
  r: Pick<ResourceRequest, 'rt' | 'version'>,
  rep: Representation,
  obj: StoredObject | Status,
): object {
  if (rep.as === 'object' || obj.kind === 'Status') return obj;
  const o = obj as StoredObject;
  return rep.as === 'Table'
    ? toTable(columnsFor(registry, r.rt, r.version), [o], String(o.metadata.resourceVersion ?? ''))
    : asPartialObject(r.rt, o, rep);
}

function renderList(registry: Registry, r: ResourceRequest, rep: Representation, result: ListResult): object {
  if (rep.as === 'object') return listBody(r, result);
  return rep.as === 'Table'
    ? toTable(columnsFor(registry, r.rt, r.version), result.items, result.resourceVersion, result.continue)
    : asPartialList(r.rt, result, rep);
}

function methodNotAllowedOrNotFound(ctx: HandlerContext, path: string, segments: string[]): ApiError {
  return nonResource(ctx, path, segments) ? methodNotAllowed() : resourceNotFound();
}

function startWatch(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  r: ResourceRequest,
  q: URLSearchParams,
  rep: Representation,
): void {
  const store = ctx.registry.store;
  const fieldSelector = [q.get('fieldSelector'), r.name !== undefined ? `metadata.name=${r.name}` : null]
    .filter(Boolean)
    .join(',');
  const selector: Selector = parseSelector(q.get('labelSelector'), fieldSelector || null, r.rt);
  const rvParam = q.get('resourceVersion') ?? '';
  let match = q.get('resourceVersionMatch') ?? '';
  let sendInitial = boolParam(q, 'sendInitialEvents');
  const bookmarks = boolParam(q, 'allowWatchBookmarks') === true;
  const timeoutSeconds = intParam(q, 'timeoutSeconds');

  // SetListOptionsDefaults (WatchList on): a watch from "" or "0" is a watch-list.
  if (sendInitial === undefined && match === '' && (rvParam === '' || rvParam === '0')) {
    sendInitial = true;
    match = 'NotOlderThan';
  }
  const errs: FieldError[] = [];
  if (sendInitial !== undefined && match !== 'NotOlderThan') {
    errs.push(
      fieldForbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'),
    );
  }
  if (match !== '') {
    if (sendInitial === undefined)
      errs.push(
        fieldForbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    if (match !== 'NotOlderThan') errs.push(fieldNotSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (q.get('continue'))
      errs.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  if (errs.length > 0) throw listOptionsInvalid(errs);

  const current = store.currentRv();
  const requested = rvParam === '' ? 0 : parseResourceVersion(rvParam);
  if (requested > current) throw tooLargeResourceVersion(requested, current);
  const resource = grKey(r.rt);
  const scoped = r.rt.namespaced && r.namespace !== '';
  const inScope = (obj: StoredObject) => !scoped || obj.metadata.namespace === r.namespace;

  let initial: StoredObject[] = [];
  let fromRv: number;
  if (sendInitial === true) {
    initial = store
      .entries(resource)
      .map(([, o]) => o)
      .filter((o) => inScope(o) && matches(selector, o));
    fromRv = current;
  } else {
    fromRv = requested === 0 ? current : requested;
  }
  const backlog = store.eventsAfter(resource, fromRv);

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const timeoutMs =
    timeoutSeconds !== undefined && timeoutSeconds > 0 ? timeoutSeconds * 1000 : 1_800_000 * (1 + Math.random());
  const stream = new WatchStream(
    res,
    {
      rt: r.rt,
      version: r.version,
      namespace: scoped ? r.namespace : undefined,
      selector,
      initial,
      fromRv,
      bookmarks,
      initialEventsEnd: sendInitial === true && bookmarks,
      timeoutMs,
      render: rep.as === 'object' ? undefined : (obj) => renderObject(ctx.registry, r, rep, obj),
      ...(rep.as === 'PartialObjectMetadata' ? { bookmarkApiVersion: rep.apiVersion } : {}),
    },
    store,
    ctx.bookmarkIntervalMs,
    (w) => ctx.hub.remove(w),
  );
  ctx.hub.add(stream);
  req.on('error', () => stream.close());
  if (!backlog) {
    const e = expired(`too old resource version: ${requested} (${store.oldestRv()})`);
    stream.fail(e.status as Status);
    return;
  }
  stream.start(backlog);
}

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'] as const;

/** propagationPolicyOf reads DeleteOptions.propagationPolicy (query or body), refusing values kube-apiserver refuses. */
function propagationPolicyOf(value: unknown): PropagationPolicy | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && (PROPAGATION_POLICIES as readonly string[]).includes(value))
    return value as PropagationPolicy;
  throw invalid('meta.k8s.io', 'DeleteOptions', '', [
    fieldNotSupported('propagationPolicy', value, [...PROPAGATION_POLICIES]),
  ]);
}

const APPLY_PATCH = 'application/apply-patch+yaml';
const MAX_FIELD_MANAGER = 128;

function checkFieldManager(name: string, options: string): void {
  if (name.length > MAX_FIELD_MANAGER)
    throw invalid('meta.k8s.io', options, '', [
      {
        type: 'FieldValueTooLong',
        field: 'fieldManager',
        body: `Too long: may not be more than ${MAX_FIELD_MANAGER} bytes`,
      },
    ]);
}

/**
 * fieldManagerOf names the manager of a create, update or non-apply patch: the fieldManager parameter, or the
 * program name of the User-Agent (`kubectl/v1.35.4 (linux/amd64)` is `kubectl`), as kube-apiserver defaults it.
 */
function fieldManagerOf(req: IncomingMessage, q: URLSearchParams, options: string): string {
  const given = q.get('fieldManager');
  if (given !== null && given !== '') {
    checkFieldManager(given, options);
    return given;
  }
  return (req.headers['user-agent'] ?? '').split('/')[0]!.slice(0, MAX_FIELD_MANAGER);
}

/** applyOptionsOf reads server-side apply's parameters: fieldManager is required, as on kube-apiserver. */
function applyOptionsOf(q: URLSearchParams): ApplyOptions {
  const manager = q.get('fieldManager') ?? '';
  if (manager === '')
    throw invalid('meta.k8s.io', 'PatchOptions', '', [
      fieldRequired(
        'fieldManager',
        'is required for apply patch; name the applier, e.g. ?fieldManager=my-controller (kubectl sends fieldManager=kubectl)',
      ),
    ]);
  checkFieldManager(manager, 'PatchOptions');
  return { manager, force: boolParam(q, 'force') === true };
}
