import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { FaultState, type FaultHooks } from './faults';
import { GarbageCollector } from './gc';
import { handleRequest, type HandlerContext } from './handlers';
import { Registry, type AdmissionCheck } from './registry';
import { ResourceTable } from './resources';
import { ObjectStore } from './store';
import { WatchHub } from './watch';
import { selfSignedCertificate } from '../tls/self-signed';

export type { FaultHooks } from './faults';
export type { AdmissionCheck } from './registry';

export interface EmbeddedServerOptions {
  /** Loopback address to bind (default 127.0.0.1); anything else is refused. */
  host?: string;
  /** 0 picks a free port (default). */
  port?: number;
  /** When set, every request but the probes and /version needs `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /** Events kept for watches and continued lists; older resourceVersions get 410 (default 10 000). */
  retainedEvents?: number;
  /** Bookmark cadence for watches with allowWatchBookmarks (default 60 000 ms). */
  bookmarkIntervalMs?: number;
  /** Manifests applied at start, in order: CRDs first, then namespaces, then objects. */
  objects?: object[];
  /**
   * Serve HTTPS with a certificate made at start (its own CA, in the
   * kubeconfig). kubectl and every client-go program send credentials over
   * TLS only, so a server with a token needs this to be usable from kubectl.
   */
  tls?: boolean;
  /**
   * Run a garbage collector as kube-controller-manager's would (docs/testing.md): cascading deletion by
   * ownerReferences, background and foreground, orphaning and blockOwnerDeletion. Off by default, as
   * kube-apiserver alone (and envtest) has none.
   */
  gc?: boolean;
}

export interface EmbeddedServer {
  url: string;
  port: number;
  /** stop ends every watch, closes every connection and the listener, and cancels every timer. */
  stop(): Promise<void>;
  faults: FaultHooks;
  /** Open HTTP watches right now per resource, keyed as kube-apiserver names resources: `configmaps`, `databases.demo.refwatch.dev`. */
  openWatches(): Record<string, number>;
  /** Requests received per `<verb> <resource>` (`list configmaps`, `update databases.demo.refwatch.dev/status`), or `<method> <path>` for the rest. */
  requestCount(): Record<string, number>;
  /** A kubeconfig (cluster, user and context named "embedded") pointing at this server. */
  kubeconfig(): object;
  /**
   * setAdmission makes every write of a client (create, update, and each
   * kind of patch) answer with the warnings `check` returns for the object
   * it stores, as HTTP Warning headers (kube-apiserver's way of passing on
   * a webhook's warnings), so kubectl prints them; undefined turns it off.
   */
  setAdmission(check: AdmissionCheck | undefined): void;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The namespaces kube-apiserver creates at start. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * startEmbeddedServer starts an in-process Kubernetes API server on loopback
 * serving discovery, CRDs, CRUD with the status subresource, list and watch.
 * docs/embedded.md lists what it serves and where it differs from kube-apiserver.
 */
export async function startEmbeddedServer(opts: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new Error(`host "${host}" is not a loopback address: the embedded API server binds 127.0.0.1 or ::1 only`);
  }
  const retained = opts.retainedEvents ?? 10_000;
  if (!Number.isInteger(retained) || retained < 0)
    throw new Error(`retainedEvents ${retained} must be a non-negative integer`);
  const bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60_000;
  if (!(bookmarkIntervalMs > 0)) throw new Error(`bookmarkIntervalMs ${bookmarkIntervalMs} must be positive`);

  const table = new ResourceTable();
  const store = new ObjectStore(retained);
  const hub = new WatchHub(store);
  const registry = new Registry(table, store, hub);
  const faults = new FaultState();
  const gc = opts.gc ? new GarbageCollector(table, store, registry) : undefined;
  const counts = new Map<string, number>();
  const sleeps = new Map<NodeJS.Timeout, (ok: boolean) => void>();
  let stopping = false;

  for (const name of SYSTEM_NAMESPACES)
    registry.applyManifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const manifest of opts.objects ?? []) {
    try {
      registry.applyManifest(manifest as Record<string, unknown>);
    } catch (e) {
      const what = describe(manifest);
      throw new Error(`objects: applying ${what} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  let address = '';
  const ctx: HandlerContext = {
    registry,
    hub,
    faults,
    token: opts.token,
    bookmarkIntervalMs,
    serverAddress: () => address,
    countRequest: (key) => counts.set(key, (counts.get(key) ?? 0) + 1),
    sleep: (ms) =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => {
          sleeps.delete(t);
          resolve(true);
        }, ms);
        sleeps.set(t, resolve);
      }),
    isStopping: () => stopping,
  };

  const certificate = opts.tls
    ? await selfSignedCertificate('refwatch-embedded', ['127.0.0.1', '::1', 'localhost'])
    : undefined;
  const handler = (req: IncomingMessage, res: ServerResponse) => void handleRequest(ctx, req, res);
  const server: Server = certificate
    ? createTlsServer({ key: certificate.key, cert: certificate.cert }, handler)
    : createServer(handler);
  // A watch is long-lived; Node's default request timeout would cut it.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  address = `${hostPart}:${port}`;
  const url = `${certificate ? 'https' : 'http'}://${address}`;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      gc?.stop();
      for (const [t, resolve] of sleeps) {
        clearTimeout(t);
        resolve(false);
      }
      sleeps.clear();
      hub.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    })();
    return stopped;
  };

  const hooks: FaultHooks = {
    dropWatches: () => hub.closeAll(),
    compactNow: () => store.compact(),
    failNext: (n, status, retryAfterSeconds) => faults.armFailures(n, status, retryAfterSeconds),
    forbid: (group, resource, scope) => faults.forbid(group, resource, scope),
    unforbid: (group, resource, scope) => faults.unforbid(group, resource, scope),
    slowDown: (ms) => {
      faults.delayMs = Number.isFinite(ms) && ms > 0 ? ms : 0;
    },
    reset: () => faults.reset(),
  };

  return {
    url,
    port,
    stop,
    faults: hooks,
    setAdmission: (check) => {
      registry.admission = check;
    },
    openWatches: () => hub.counts(),
    requestCount: () => Object.fromEntries(counts),
    kubeconfig: () => ({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'embedded',
          // Plain HTTP on loopback: client-node refuses http:// servers unless TLS verification is marked off.
          cluster: certificate
            ? { server: url, 'certificate-authority-data': Buffer.from(certificate.cert).toString('base64') }
            : { server: url, 'insecure-skip-tls-verify': true },
        },
      ],
      users: [{ name: 'embedded', user: opts.token ? { token: opts.token } : {} }],
      contexts: [{ name: 'embedded', context: { cluster: 'embedded', user: 'embedded' } }],
      'current-context': 'embedded',
    }),
  };
}

function describe(manifest: unknown): string {
  const m = (manifest ?? {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const ns = typeof m.metadata?.namespace === 'string' ? `${m.metadata.namespace}/` : '';
  return `${String(m.kind ?? '(no kind)')} ${ns}${String(m.metadata?.name ?? '(no name)')}`;
}
