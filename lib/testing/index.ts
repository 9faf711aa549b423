import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { startEmbeddedServer } from '../embedded';
import { Discovery, KubeClient, KubeRequestError, resourcePath, type ResourceInfo } from '../kube';
import { parseKey, splitApiVersion, type KubeObject, type ObjectKey } from '../model';
import type { KubeconfigFile } from './kube-http';
import { startRealCluster } from './real-cluster';

export { kubeAssetsDir, RealClusterUnavailable, KUBE_VERSION, ETCD_VERSION } from './real-cluster';
export type { KubeconfigFile } from './kube-http';
export { keyOf, type KubeObject, type ObjectKey } from '../model';

export type TestClusterMode = 'embedded' | 'real';

export interface TestClusterOptions {
  /** CustomResourceDefinitions, installed first; startTestCluster returns once each is Established. */
  crds?: object[];
  /** Namespaces created after the CRDs. */
  namespaces?: string[];
  /** Objects created last, in order (a namespace they name must exist, or be in `namespaces`). */
  objects?: object[];
  /**
   * Emulate kube-controller-manager's garbage collector (docs/testing.md): cascading deletion by
   * ownerReferences, background and foreground, orphaning and blockOwnerDeletion. Embedded only: a
   * bare kube-apiserver has no garbage collector, so `mode: 'real'` refuses it.
   */
  gc?: boolean;
  /** Which cluster to start; default REFWATCH_TEST_CLUSTER, else `embedded`. */
  mode?: TestClusterMode;
  /** Real mode: the directory with `kube-apiserver` and `etcd`; default REFWATCH_KUBE_ASSETS, else refwatch's cache. */
  binDir?: string;
}

export interface DeleteOptions {
  /** As kube-apiserver's DeleteOptions: Background (the server's default for most kinds), Foreground or Orphan. */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

/** A cluster of its own for one test file or test: the same shape in both modes. */
export interface TestCluster {
  mode: TestClusterMode;
  /** The API server's URL. */
  url: string;
  /** A kubeconfig with full access to this cluster (one cluster, user and context). */
  kubeconfig: KubeconfigFile;
  /** The same kubeconfig as a file (mode 0600), for a controller or kubectl run as a child process; removed by stop(). */
  kubeconfigPath: string;
  /** A client of this cluster; stop() closes it. */
  client: KubeClient;
  /** apply creates each object, or replaces the one that exists (its spec, labels, data…; not its status). */
  apply(objects: object | object[]): Promise<KubeObject[]>;
  /** get reads an object by key (`Kind.group/namespace/name`), undefined when there is none. */
  get(key: ObjectKey): Promise<KubeObject | undefined>;
  /** delete deletes an object by key; one that does not exist is not an error. */
  delete(key: ObjectKey, opts?: DeleteOptions): Promise<void>;
  /**
   * waitFor resolves with the object once predicate holds for it (undefined: it does not exist), and
   * rejects after timeoutMs (default 10 s) saying what it saw last, or when the cluster stops.
   */
  waitFor(
    key: ObjectKey,
    predicate: (obj: KubeObject | undefined) => boolean,
    timeoutMs?: number,
  ): Promise<KubeObject | undefined>;
  /** stop stops the cluster and every wait, and removes its files; it leaves no port, timer or file behind. */
  stop(): Promise<void>;
}

/** How often waitFor reads the object again. */
const WAIT_POLL_MS = 20;

/**
 * startTestCluster starts an independent Kubernetes API server for a test: the embedded one in this
 * process (default), or kube-apiserver + etcd with `mode: 'real'` or REFWATCH_TEST_CLUSTER=real.
 * Each call has its own port and state, so several can run at once. docs/testing.md shows it in Vitest.
 */
export async function startTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const mode = modeOf(opts.mode);
  for (const field of ['crds', 'objects', 'namespaces'] as const) {
    const v = opts[field];
    if (v !== undefined && !Array.isArray(v))
      throw new TypeError(`startTestCluster: ${field} must be an array (got ${typeof v}); pass [] or leave it out`);
  }
  for (const [i, ns] of (opts.namespaces ?? []).entries()) {
    if (typeof ns !== 'string' || ns === '')
      throw new TypeError(`startTestCluster: namespaces[${i}] must be a namespace name, got ${JSON.stringify(ns)}`);
  }
  if (opts.gc && mode === 'real')
    throw new Error(
      'startTestCluster: gc: true needs a garbage collector, which runs in kube-controller-manager, not in kube-apiserver: ' +
        'with REFWATCH_TEST_CLUSTER=real, deleting an owner leaves its dependents (as envtest). Run tests that rely on ' +
        'cascading deletion on the embedded cluster (mode: "embedded"), or assert only what kube-apiserver does itself.',
    );
  const namespaces = (opts.namespaces ?? []).map((name) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  }));

  const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-test-cluster-'));
  let stopServer: () => Promise<void>;
  let url: string;
  let kubeconfig: KubeconfigFile;
  try {
    if (mode === 'embedded') {
      const server = await startEmbeddedServer({
        objects: [...(opts.crds ?? []), ...namespaces, ...(opts.objects ?? [])],
        gc: opts.gc ?? false,
      });
      stopServer = () => server.stop();
      url = server.url;
      kubeconfig = server.kubeconfig() as KubeconfigFile;
    } else {
      const real = await startRealCluster({ binDir: opts.binDir });
      stopServer = () => real.stop();
      url = real.url;
      kubeconfig = real.kubeconfig;
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const kubeconfigPath = path.join(dir, 'kubeconfig.yaml');
  writeFileSync(kubeconfigPath, stringify(kubeconfig), { mode: 0o600 });
  const client = KubeClient.fromKubeconfig(kubeconfig, { source: `refwatch/testing (${mode})` });
  const discovery = new Discovery(client);
  const waits = new Set<{ timer: NodeJS.Timeout; fail: (e: Error) => void }>();
  let stopped: Promise<void> | undefined;

  const pathOf = async (apiVersion: string | undefined, kind: string, namespace: string): Promise<string> => {
    const { group, version } = splitApiVersion(apiVersion ?? '');
    let info: ResourceInfo;
    try {
      info = await discovery.resolve({ group, kind });
    } catch {
      // A CRD installed since the last lookup.
      discovery.invalidate({ group, kind });
      info = await discovery.resolve({ group, kind });
    }
    return resourcePath(apiVersion ? { ...info, version } : info, namespace);
  };

  const get = async (key: ObjectKey): Promise<KubeObject | undefined> => {
    const ref = parseKey(key, 'key');
    if (!ref.ok) throw ref.error;
    const { group, kind, namespace, name } = ref.value;
    const info = await discovery.resolve({ group, kind });
    try {
      return (await client.getJSON(`${resourcePath(info, namespace)}/${encodeURIComponent(name)}`)) as KubeObject;
    } catch (e) {
      if (e instanceof KubeRequestError && e.status === 404) return undefined;
      throw e;
    }
  };

  const applyOne = async (raw: object): Promise<KubeObject> => {
    const obj = raw as KubeObject & { apiVersion?: string; kind?: string };
    if (typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string' || typeof obj.metadata?.name !== 'string')
      throw new TypeError(
        'apply: each object needs apiVersion, kind and metadata.name (a manifest, as kubectl apply takes)',
      );
    const namespace = obj.metadata.namespace ?? '';
    const collection = await pathOf(obj.apiVersion, obj.kind, namespace);
    try {
      return (await client.request('POST', collection, { body: obj })) as KubeObject;
    } catch (e) {
      if (!(e instanceof KubeRequestError && e.status === 409)) throw e;
    }
    // It exists: replace it at the version read, once more if someone wrote in between.
    for (let attempt = 0; ; attempt++) {
      const current = (await client.getJSON(`${collection}/${encodeURIComponent(obj.metadata.name)}`)) as KubeObject;
      try {
        return (await client.request('PUT', `${collection}/${encodeURIComponent(obj.metadata.name)}`, {
          body: { ...obj, metadata: { ...obj.metadata, resourceVersion: current.metadata.resourceVersion } },
        })) as KubeObject;
      } catch (e) {
        if (!(e instanceof KubeRequestError && e.status === 409) || attempt >= 3) throw e;
      }
    }
  };

  const cluster: TestCluster = {
    mode,
    url,
    kubeconfig,
    kubeconfigPath,
    client,
    apply: async (objects) => {
      const out: KubeObject[] = [];
      for (const o of Array.isArray(objects) ? objects : [objects]) out.push(await applyOne(o));
      return out;
    },
    get,
    delete: async (key, deleteOpts = {}) => {
      const ref = parseKey(key, 'key');
      if (!ref.ok) throw ref.error;
      const { group, kind, namespace, name } = ref.value;
      const info = await discovery.resolve({ group, kind });
      try {
        await client.request('DELETE', `${resourcePath(info, namespace)}/${encodeURIComponent(name)}`, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', ...deleteOpts },
        });
      } catch (e) {
        if (!(e instanceof KubeRequestError && e.status === 404)) throw e;
      }
    },
    waitFor: (key, predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (stopped) return reject(new Error(`waitFor ${key}: the test cluster is stopped`));
        const deadline = Date.now() + timeoutMs;
        let last: string = 'nothing read yet';
        const wait = { timer: undefined as unknown as NodeJS.Timeout, fail: (e: Error) => reject(e) };
        const check = async (): Promise<void> => {
          waits.delete(wait);
          try {
            const obj = await get(key);
            if (predicate(obj)) return resolve(obj);
            last = obj ? `resourceVersion ${obj.metadata.resourceVersion}` : 'no such object';
          } catch (e) {
            last = e instanceof Error ? e.message : String(e);
          }
          if (stopped) return reject(new Error(`waitFor ${key}: the test cluster stopped (last seen: ${last})`));
          if (Date.now() >= deadline)
            return reject(
              new Error(`waitFor ${key}: predicate still false after ${timeoutMs} ms (last seen: ${last})`),
            );
          wait.timer = setTimeout(() => void check(), WAIT_POLL_MS);
          waits.add(wait);
        };
        void check();
      }),
    stop: () =>
      (stopped ??= (async () => {
        for (const w of waits) {
          clearTimeout(w.timer);
          w.fail(new Error('waitFor: the test cluster stopped'));
        }
        waits.clear();
        client.close();
        await stopServer();
        rmSync(dir, { recursive: true, force: true });
      })()),
  };

  try {
    if (mode === 'real') {
      await cluster.apply(opts.crds ?? []);
      for (const crd of opts.crds ?? []) {
        const name = (crd as { metadata?: { name?: string } }).metadata?.name ?? '';
        await cluster.waitFor(
          `CustomResourceDefinition.apiextensions.k8s.io//${name}`,
          (o) => conditionTrue(o, 'Established'),
          60_000,
        );
      }
      await cluster.apply([...namespaces, ...(opts.objects ?? [])]);
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

function modeOf(mode: TestClusterMode | undefined): TestClusterMode {
  const chosen = mode ?? process.env.REFWATCH_TEST_CLUSTER ?? 'embedded';
  if (chosen === 'embedded' || chosen === 'real') return chosen;
  throw new Error(
    `REFWATCH_TEST_CLUSTER=${chosen} is not a cluster mode: set it to embedded (the default) or real (kube-apiserver + etcd)`,
  );
}

function conditionTrue(obj: KubeObject | undefined, type: string): boolean {
  const conditions = (obj?.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

/** readManifests reads a YAML file of one or more manifests (`---`-separated, as kubectl apply -f takes) for crds or objects. */
export function readManifests(file: string | URL): object[] {
  const text = readFileSync(file, 'utf8');
  const out: object[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0)
      throw new Error(`readManifests: ${String(file)}, document ${i + 1}: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value))
      throw new Error(
        `readManifests: ${String(file)}, document ${i + 1} is not a manifest (an object with apiVersion and kind)`,
      );
    out.push(value);
  }
  return out;
}
