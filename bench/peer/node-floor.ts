import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parse } from 'yaml';
import { controllerArgs } from './controller-args';

/*
 * node-floor: the App controller's job in plain node, with nothing of refwatch. It holds what refwatch's
 * caches hold (Apps, Databases and Caches whole, without managedFields; Secrets' metadata only), an index from
 * each referent to the Apps that name it, and a queue served by --workers writers. Each kind is listed,
 * then watched from the list's resourceVersion. An App whose three referents are Ready (Databases and Caches
 * with condition Ready=True, the Secret present) gets status.resolvedAt, as in every other implementation.
 *
 * It is the floor under refwatch's figures in the peer benchmark: what a node process doing this work costs
 * before any library's own structures, as raw-watch is for client-go. Like refwatch's client, it reads the
 * kubeconfig with yaml and talks to the server through node:https with one keep-alive agent. It handles what
 * a run needs (a watch the server ends is opened again from its last resourceVersion; 410 lists again) and
 * nothing more.
 *
 *   node node-floor.mjs --namespace NS --kubeconfig FILE [--workers 8]
 *
 * Prints "ready" once every kind is listed; stops on SIGTERM or SIGINT.
 */

const GROUP = 'demo.refwatch.dev';
/** What to ask for: whole objects, or (for Secrets, as refwatch's cache asks) their metadata only. */
interface Accept {
  list: string;
  watch: string;
}
const WHOLE: Accept = { list: 'application/json', watch: 'application/json' };
const METADATA: Accept = {
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
  watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
};

interface Obj {
  metadata: { name: string; namespace?: string; resourceVersion?: string; managedFields?: unknown };
  spec?: Record<string, { name?: string; namespace?: string } | undefined>;
  status?: { resolvedAt?: string; conditions?: { type?: string; status?: string }[] };
}

interface Cluster {
  server: string;
  token: string;
  agent: https.Agent;
}

function clusterOf(file: string): Cluster {
  const cfg = parse(readFileSync(file, 'utf8')) as {
    'current-context': string;
    contexts: { name: string; context: { cluster: string; user: string } }[];
    clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { name: string; user: { token: string } }[];
  };
  const ctx = cfg.contexts.find((c) => c.name === cfg['current-context'])!.context;
  const cluster = cfg.clusters.find((c) => c.name === ctx.cluster)!.cluster;
  const user = cfg.users.find((u) => u.name === ctx.user)!.user;
  const ca = Buffer.from(cluster['certificate-authority-data'], 'base64');
  return { server: cluster.server, token: user.token, agent: new https.Agent({ keepAlive: true, ca }) };
}

function send(c: Cluster, method: string, path: string, accept: string, body?: string) {
  return https.request(`${c.server}${path}`, {
    method,
    agent: c.agent,
    headers: {
      Authorization: `Bearer ${c.token}`,
      Accept: accept,
      ...(body === undefined
        ? {}
        : { 'Content-Type': 'application/merge-patch+json', 'Content-Length': Buffer.byteLength(body) }),
    },
  });
}

function call(c: Cluster, method: string, path: string, accept: string, body?: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const req = send(c, method, path, accept, body);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () => resolve([res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')]));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** follow lists path, hands every object to onEvent, then watches from there until the process ends. */
async function follow(
  c: Cluster,
  path: string,
  accept: Accept,
  onEvent: (type: string, o: Obj) => void,
): Promise<() => Promise<void>> {
  const list = async (): Promise<string> => {
    const [status, text] = await call(c, 'GET', path, accept.list);
    if (status !== 200) throw new Error(`GET ${path}: ${status} ${text.slice(0, 200)}`);
    // An empty metadata-only list has items null.
    const l = JSON.parse(text) as { metadata: { resourceVersion: string }; items: Obj[] | null };
    for (const o of l.items ?? []) onEvent('ADDED', o);
    return l.metadata.resourceVersion;
  };
  let rv = await list();
  const watchOnce = () =>
    new Promise<number>((resolve, reject) => {
      const q = `watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`;
      const req = send(c, 'GET', `${path}?${q}`, accept.watch);
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          resolve(res.statusCode ?? 0);
          return;
        }
        res.setEncoding('utf8');
        let rest = '';
        res.on('data', (chunk: string) => {
          const text = rest + chunk;
          let start = 0;
          for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
            const ev = JSON.parse(text.slice(start, nl)) as { type: string; object: Obj & { code?: number } };
            start = nl + 1;
            if (ev.type === 'ERROR') {
              req.destroy();
              resolve(ev.object.code ?? 500);
              return;
            }
            rv = ev.object.metadata.resourceVersion ?? rv;
            if (ev.type !== 'BOOKMARK') onEvent(ev.type, ev.object);
          }
          rest = text.slice(start);
        });
        res.on('end', () => resolve(200));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  return async () => {
    for (;;) {
      const status = await watchOnce();
      if (status === 410) rv = await list();
      else if (status !== 200) await new Promise((r) => setTimeout(r, 1_000));
    }
  };
}

function readyCondition(o: Obj): boolean {
  return o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function main(): Promise<void> {
  const { namespace, kubeconfig, workers } = controllerArgs();
  const c = clusterOf(kubeconfig);

  const cache = new Map<string, Obj>(); // "Kind/namespace/name" → object
  const referrers = new Map<string, Set<string>>(); // referent key → App keys
  const queued = new Set<string>();
  const idle: (() => void)[] = [];
  const enqueue = (appKey: string) => {
    queued.add(appKey);
    idle.pop()?.();
  };
  const keep = (kind: string) => (type: string, o: Obj) => {
    const key = `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    o.metadata.managedFields = undefined;
    if (type === 'DELETED') cache.delete(key);
    else cache.set(key, o);
    if (kind === 'App') {
      if (type !== 'DELETED')
        for (const [field, k] of [
          ['databaseRef', 'Database'],
          ['cacheRef', 'Cache'],
          ['secretRef', 'Secret'],
        ] as const) {
          const ref = o.spec?.[field];
          if (!ref?.name) continue;
          const rk = `${k}/${ref.namespace || o.metadata.namespace}/${ref.name}`;
          let apps = referrers.get(rk);
          if (!apps) referrers.set(rk, (apps = new Set()));
          apps.add(key);
        }
      enqueue(key);
    } else {
      for (const app of referrers.get(key) ?? []) enqueue(app);
    }
  };
  const ready = (kind: string, ns: string, name: string | undefined) => {
    const o = cache.get(`${kind}/${ns}/${name}`);
    return o !== undefined && (kind === 'Secret' || readyCondition(o));
  };
  const reconcile = async (key: string) => {
    const app = cache.get(key);
    if (!app || app.status?.resolvedAt) return;
    const ns = app.metadata.namespace!;
    const spec = app.spec ?? {};
    if (
      !ready('Database', spec.databaseRef?.namespace || ns, spec.databaseRef?.name) ||
      !ready('Cache', spec.cacheRef?.namespace || ns, spec.cacheRef?.name) ||
      !ready('Secret', spec.secretRef?.namespace || ns, spec.secretRef?.name)
    )
      return;
    const body = JSON.stringify({
      metadata: { resourceVersion: app.metadata.resourceVersion },
      status: { resolvedAt: new Date().toISOString() },
    });
    const [status, text] = await call(
      c,
      'PATCH',
      `/apis/${GROUP}/v1alpha1/namespaces/${ns}/apps/${app.metadata.name}/status`,
      'application/json',
      body,
    );
    if (status !== 200 && status !== 409) console.error(`PATCH ${key}: ${status} ${text.slice(0, 200)}`);
  };
  const worker = async () => {
    for (;;) {
      const next = queued.values().next();
      if (next.done) {
        await new Promise<void>((r) => idle.push(r));
        continue;
      }
      queued.delete(next.value);
      await reconcile(next.value).catch((e: unknown) => console.error(String(e)));
    }
  };

  const watches = await Promise.all([
    follow(c, `/apis/${GROUP}/v1alpha1/namespaces/${namespace}/apps`, WHOLE, keep('App')),
    follow(c, `/apis/${GROUP}/v1alpha1/databases`, WHOLE, keep('Database')),
    follow(c, `/apis/${GROUP}/v1alpha1/caches`, WHOLE, keep('Cache')),
    follow(c, '/api/v1/secrets', METADATA, keep('Secret')),
  ]);
  for (const w of watches) void w().catch((e: unknown) => console.error(String(e)));
  for (let i = 0; i < workers; i++) void worker();
  console.log('ready');
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
main().catch((e: unknown) => {
  console.error(`node-floor: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
