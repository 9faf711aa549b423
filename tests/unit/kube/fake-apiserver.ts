import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/**
 * A scripted stand-in for kube-apiserver, for unit tests of lib/kube: just
 * enough discovery, list (pages, continue) and watch (resourceVersion,
 * bookmarks, sendInitialEvents, 410) to drive a Reflector, with hooks to
 * break it on purpose. It is not the embedded server and has no semantics
 * beyond what these tests check.
 */
export interface FakeKind {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
}

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
};
interface LogEntry {
  rv: number;
  resource: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
  old?: Obj;
}
interface Watcher {
  resource: string;
  namespace?: string;
  selector?: string;
  res: http.ServerResponse;
}
interface Scripted {
  match: (method: string, url: URL) => boolean;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization?: string;
  /** When it arrived (epoch ms). */
  at: number;
}

export const DATABASE: FakeKind = {
  group: 'demo.refwatch.dev',
  version: 'v1alpha1',
  kind: 'Database',
  resource: 'databases',
  namespaced: true,
};
export const CONFIGMAP: FakeKind = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  namespaced: true,
};
export const WIDGET: FakeKind = {
  group: 'demo.refwatch.dev',
  version: 'v1alpha1',
  kind: 'Widget',
  resource: 'widgets',
  namespaced: false,
};

export class FakeApiServer {
  url = '';
  rv = 100;
  readonly kinds: FakeKind[];
  readonly requests: RecordedRequest[] = [];
  /** How WatchList requests are answered: served, rejected with 422, or ignored (a plain watch). */
  watchList: 'supported' | 'reject' | 'ignore' = 'supported';
  /** How an expired resourceVersion is reported on watch: HTTP 410, or a 200 with an ERROR event. */
  expiredAs: 'http' | 'event' = 'http';
  /** Require this bearer token; 401 otherwise. */
  token: string | undefined;
  /** Accept every watch (200), then fail it at once with an in-stream ERROR event of this code. */
  failWatchesInStream: number | undefined;
  private compactedBelow = 0;
  private expireNextContinue = false;
  private readonly objects = new Map<string, Map<string, Obj>>();
  private readonly log: LogEntry[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly scripted: Scripted[] = [];
  private readonly server: http.Server;

  private constructor(kinds: FakeKind[]) {
    this.kinds = [...kinds];
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  static async start(kinds: FakeKind[] = [DATABASE, CONFIGMAP, WIDGET]): Promise<FakeApiServer> {
    const s = new FakeApiServer(kinds);
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
    return s;
  }

  kubeconfig(token = 'fake-token-0123456789'): unknown {
    return {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: this.url } }],
      users: [{ name: 'tester', user: { token } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'tester' } }],
      'current-context': 'fake',
    };
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  addKind(k: FakeKind): void {
    this.kinds.push(k);
  }
  removeKind(k: FakeKind): void {
    const i = this.kinds.indexOf(k);
    if (i >= 0) this.kinds.splice(i, 1);
  }

  create(
    k: FakeKind,
    name: string,
    opts: { namespace?: string; labels?: Record<string, string>; spec?: unknown } = {},
  ): Obj {
    const obj: Obj = {
      apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
      kind: k.kind,
      metadata: {
        name,
        ...(opts.namespace ? { namespace: opts.namespace } : {}),
        uid: randomUUID(),
        resourceVersion: String(++this.rv),
        ...(opts.labels ? { labels: opts.labels } : {}),
        managedFields: [{ manager: 'test' }],
      },
      spec: opts.spec ?? {},
    };
    this.bucket(k).set(objKey(opts.namespace, name), obj);
    this.record(k, 'ADDED', obj);
    return obj;
  }

  update(k: FakeKind, name: string, namespace: string | undefined, mutate: (o: Obj) => void): Obj {
    const old = this.bucket(k).get(objKey(namespace, name));
    if (!old) throw new Error(`no ${k.kind} ${namespace}/${name}`);
    const next = structuredClone(old);
    mutate(next);
    next.metadata.resourceVersion = String(++this.rv);
    this.bucket(k).set(objKey(namespace, name), next);
    this.record(k, 'MODIFIED', next, old);
    return next;
  }

  delete(k: FakeKind, name: string, namespace?: string): void {
    const old = this.bucket(k).get(objKey(namespace, name));
    if (!old) throw new Error(`no ${k.kind} ${namespace}/${name}`);
    this.bucket(k).delete(objKey(namespace, name));
    const gone = structuredClone(old);
    gone.metadata.resourceVersion = String(++this.rv);
    this.record(k, 'DELETED', gone);
  }

  /** Changes made while no watch could see them and that no history keeps: the next watch from an older RV gets 410. */
  compact(): void {
    this.compactedBelow = this.rv + 1;
  }

  expireContinueToken(): void {
    this.expireNextContinue = true;
  }

  /** bookmark sends a BOOKMARK at the current resourceVersion on every open watch. */
  bookmark(): void {
    for (const w of this.watchers)
      writeEvent(w.res, {
        type: 'BOOKMARK',
        object: { kind: 'Bookmark', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } },
      });
  }

  /** sendRaw writes a line to every open watch. */
  sendRaw(line: string): void {
    for (const w of this.watchers) w.res.write(line + '\n');
  }

  /** closeWatches ends every open watch cleanly, as a server does at timeoutSeconds. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** dropWatches resets every watch's connection. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  openWatches(resource?: string): number {
    let n = 0;
    for (const w of this.watchers) if (!resource || w.resource === resource) n++;
    return n;
  }

  /** failNext answers the next n requests matching match with status. */
  failNext(
    n: number,
    status: number,
    opts: { match?: (method: string, url: URL) => boolean; headers?: Record<string, string>; message?: string } = {},
  ): void {
    for (let i = 0; i < n; i++) {
      this.scripted.push({
        match: opts.match ?? ((_m, u) => !isDiscovery(u.pathname)),
        status,
        headers: opts.headers,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: status,
          reason: reasonOf(status),
          message: opts.message ?? `scripted ${status}`,
        },
      });
    }
  }

  private bucket(k: FakeKind): Map<string, Obj> {
    const key = `${k.group}/${k.resource}`;
    let b = this.objects.get(key);
    if (!b) this.objects.set(key, (b = new Map()));
    return b;
  }

  private record(k: FakeKind, type: LogEntry['type'], object: Obj, old?: Obj): void {
    const e: LogEntry = { rv: this.rv, resource: `${k.group}/${k.resource}`, type, object, old };
    this.log.push(e);
    for (const w of this.watchers) if (w.resource === e.resource) deliver(w, e);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      at: Date.now(),
    });
    const i = this.scripted.findIndex((s) => s.match(req.method ?? 'GET', url));
    if (i >= 0) {
      const s = this.scripted.splice(i, 1)[0]!;
      return json(res, s.status, s.body, s.headers);
    }
    if (this.token !== undefined && req.headers.authorization !== `Bearer ${this.token}`) {
      return json(res, 401, { kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    }
    const p = url.pathname;
    if (p === '/api') return json(res, 200, { kind: 'APIVersions', versions: ['v1'] });
    if (p === '/apis') {
      const groups = [...new Set(this.kinds.filter((k) => k.group).map((k) => k.group))].map((g) => {
        const versions = [...new Set(this.kinds.filter((k) => k.group === g).map((k) => k.version))].map((v) => ({
          groupVersion: `${g}/${v}`,
          version: v,
        }));
        return { name: g, versions, preferredVersion: versions[0] };
      });
      return json(res, 200, { kind: 'APIGroupList', groups });
    }
    const disc = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(p);
    if (disc) {
      const group = disc[2] ?? '';
      const version = disc[1] ?? disc[3]!;
      const kinds = this.kinds.filter((k) => k.group === group && k.version === version);
      if (kinds.length === 0)
        return json(res, 404, {
          kind: 'Status',
          code: 404,
          reason: 'NotFound',
          message: 'the server could not find the requested resource',
        });
      const resources = kinds.flatMap((k) => [
        { name: k.resource, kind: k.kind, namespaced: k.namespaced, verbs: ['list', 'watch', 'get'] },
        { name: `${k.resource}/status`, kind: k.kind, namespaced: k.namespaced, verbs: ['get'] },
      ]);
      return json(res, 200, {
        kind: 'APIResourceList',
        groupVersion: group ? `${group}/${version}` : version,
        resources,
      });
    }
    const m = /^\/(?:api\/v1|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)$/.exec(p);
    const kind = m && this.kinds.find((k) => k.group === (m[1] ?? '') && k.resource === m[4]);
    if (!m || !kind)
      return json(res, 404, {
        kind: 'Status',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      });
    const namespace = m[3];
    const selector = url.searchParams.get('labelSelector') ?? undefined;
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1')
      return this.watch(kind, namespace, selector, url, res);
    return this.list(kind, namespace, selector, url, res);
  }

  private list(
    k: FakeKind,
    namespace: string | undefined,
    selector: string | undefined,
    url: URL,
    res: http.ServerResponse,
  ): void {
    const limit = Number(url.searchParams.get('limit') ?? 0);
    const cont = url.searchParams.get('continue');
    if (cont && this.expireNextContinue) {
      this.expireNextContinue = false;
      return json(res, 410, {
        kind: 'Status',
        code: 410,
        reason: 'Expired',
        message: 'The provided continue parameter is too old',
      });
    }
    const all = [...this.bucket(k).values()]
      .filter((o) => (!namespace || o.metadata.namespace === namespace) && matches(o, selector))
      .sort((a, b) =>
        objKey(a.metadata.namespace, a.metadata.name).localeCompare(objKey(b.metadata.namespace, b.metadata.name)),
      );
    const start = cont ? Number(cont) : 0;
    const end = limit > 0 ? start + limit : all.length;
    // List items carry no apiVersion and kind, as on kube-apiserver.
    const items = all.slice(start, end).map((o) => {
      const { apiVersion: _a, kind: _k, ...rest } = structuredClone(o);
      return rest;
    });
    const metadata: Record<string, string> = { resourceVersion: String(this.rv) };
    if (end < all.length) metadata.continue = String(end);
    json(res, 200, {
      kind: `${k.kind}List`,
      apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
      metadata,
      items,
    });
  }

  private watch(
    k: FakeKind,
    namespace: string | undefined,
    selector: string | undefined,
    url: URL,
    res: http.ServerResponse,
  ): void {
    const resource = `${k.group}/${k.resource}`;
    if (this.failWatchesInStream !== undefined) {
      const code = this.failWatchesInStream;
      res.writeHead(200, { 'content-type': 'application/json' });
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason: reasonOf(code) };
      res.end(`${JSON.stringify({ type: 'ERROR', object: { ...status, message: `scripted in-stream ${code}` } })}\n`);
      return;
    }
    const initial = url.searchParams.get('sendInitialEvents') === 'true';
    if (initial && this.watchList === 'reject') {
      return json(res, 422, {
        kind: 'Status',
        code: 422,
        reason: 'Invalid',
        message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      });
    }
    const rvParam = url.searchParams.get('resourceVersion');
    const from = rvParam ? Number(rvParam) : undefined;
    if (!initial && from !== undefined && from < this.compactedBelow - 1) {
      if (this.expiredAs === 'http')
        return json(res, 410, {
          kind: 'Status',
          code: 410,
          reason: 'Expired',
          message: `too old resource version: ${from} (${this.compactedBelow - 1})`,
        });
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = { resource, namespace, selector, res };
    if (!initial && from !== undefined && from < this.compactedBelow - 1) {
      writeEvent(res, {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 410,
          reason: 'Expired',
          message: `too old resource version: ${from}`,
        },
      });
      res.end();
      return;
    }
    if (initial || from === undefined) {
      for (const o of this.bucket(k).values())
        if ((!namespace || o.metadata.namespace === namespace) && matches(o, selector))
          writeEvent(res, { type: 'ADDED', object: o });
      if (initial && this.watchList === 'supported') {
        writeEvent(res, {
          type: 'BOOKMARK',
          object: {
            kind: k.kind,
            apiVersion: 'v1',
            metadata: { resourceVersion: String(this.rv), annotations: { 'k8s.io/initial-events-end': 'true' } },
          },
        });
      }
    } else {
      for (const e of this.log) if (e.resource === resource && e.rv > from) deliver(w, e);
    }
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
  }
}

/** Discovery paths: /api, /apis, /api/v1, /apis/group/version. */
function isDiscovery(p: string): boolean {
  return /^\/(api|apis|api\/v1|apis\/[^/]+\/[^/]+)$/.test(p);
}

function objKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

function matches(o: Obj, selector: string | undefined): boolean {
  if (!selector) return true;
  const labels = o.metadata.labels ?? {};
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return v === undefined ? k! in labels : labels[k!] === v;
  });
}

function deliver(w: Watcher, e: LogEntry): void {
  if (w.namespace && e.object.metadata.namespace !== w.namespace) return;
  const now = matches(e.object, w.selector);
  const before = e.old ? matches(e.old, w.selector) : false;
  let type: string = e.type;
  if (e.type === 'MODIFIED' && now && !before) type = 'ADDED';
  else if (e.type === 'MODIFIED' && !now && before) type = 'DELETED';
  else if (!now) return;
  writeEvent(w.res, { type, object: e.object });
}

function writeEvent(res: http.ServerResponse, ev: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify(ev) + '\n');
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function reasonOf(status: number): string {
  return (
    {
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'NotFound',
      410: 'Expired',
      422: 'Invalid',
      429: 'TooManyRequests',
      500: 'InternalError',
      503: 'ServiceUnavailable',
    }[status] ?? 'Unknown'
  );
}
