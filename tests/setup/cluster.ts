import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, inject, onTestFinished, TestRunner } from 'vitest';
import { parse } from 'yaml';
import { kubeconfigFor, kubeRequest, type KubeconfigFile, type KubeEndpoint } from './kube-http';
import type { ClusterKind } from './global-setup';

import type { FaultHooks } from '@/lib/embedded';

/**
 * Watch counts keyed by resource, as kube-apiserver names them: `configmaps`
 * for the core group, `databases.demo.refwatch.dev` otherwise.
 */
export type WatchCounts = Record<string, number>;

/** The cluster an integration test runs against; which one is set by REFWATCH_TEST_CLUSTER. */
export interface TestCluster {
  kind: ClusterKind;
  url: string;
  /** Bearer token with full access (empty when the embedded server needs none). */
  token: string;
  /** Standard kubeconfig shape; load it with `toKubeConfig`. */
  kubeconfig: KubeconfigFile;
  /**
   * Creates a namespace named `<prefix>-<random>`. It is deleted when the
   * current test finishes, or when the file finishes if created outside a test.
   * On the real cluster nothing finalizes the deletion (no controller manager),
   * so the namespace stays Terminating: scope assertions to your own namespace.
   */
  newNamespace(prefix: string): Promise<string>;
  /**
   * Open watches per resource. On the real cluster this reads
   * `apiserver_longrunning_requests{verb="WATCH"}`, which also counts
   * kube-apiserver's own watches (configmaps, secrets, namespaces…): assert on
   * the change from a count taken before, not on absolute numbers.
   */
  openWatches(): Promise<WatchCounts>;
  /** Embedded only: fault injection on the in-process server. */
  faults?: FaultHooks;
  /** Real only: stops and starts kube-apiserver (same etcd, port and credentials). */
  restart?: () => Promise<void>;
  /** Real only: a user that RBAC grants nothing beyond discovery, to provoke 403. */
  restrictedKubeconfig?: KubeconfigFile;
}

let current: Promise<TestCluster> | undefined;
let release: (() => Promise<void>) | undefined;
/** Namespaces created outside a test, deleted when the file finishes. */
const fileNamespaces: (() => Promise<void>)[] = [];

// Each integration test file gets a fresh module graph (vitest isolates files),
// so this hook runs once at the end of the file that imported the harness.
afterAll(async () => {
  const pending = current;
  current = undefined;
  if (!pending) return;
  await pending.catch(() => undefined);
  await Promise.all(fileNamespaces.splice(0).map((remove) => remove()));
  await release?.();
  release = undefined;
});

/**
 * getTestCluster connects to the cluster selected for this run, starting the
 * embedded server in this worker if that is the selection. Call it from a test
 * or a beforeAll in a file that imports this module; the file's afterAll stops
 * what it started.
 */
export function getTestCluster(): Promise<TestCluster> {
  current ??= connect();
  return current;
}

async function connect(): Promise<TestCluster> {
  const provided = inject('refwatchCluster');
  if (!provided)
    throw new Error('refwatchCluster not provided: run with --project integration (tests/setup/global-setup.ts)');
  if (provided.kind === 'embedded') return connectEmbedded();

  const endpoint: KubeEndpoint = { url: provided.url, token: provided.token, ca: provided.ca };
  return {
    kind: 'real',
    url: provided.url,
    token: provided.token,
    kubeconfig: kubeconfigFor(endpoint, 'refwatch-real'),
    restrictedKubeconfig: kubeconfigFor(
      { ...endpoint, token: provided.restrictedToken },
      'refwatch-real',
      'restricted',
    ),
    newNamespace: (prefix) => createNamespace(endpoint, prefix),
    openWatches: () => scrapeOpenWatches(endpoint),
    restart: async () => {
      const res = await kubeRequest({ url: provided.restartUrl, token: '' }, 'POST', provided.restartUrl, {
        timeoutMs: 180_000,
      });
      if (res.status !== 204) throw new Error(`restarting kube-apiserver failed (${res.status}): ${res.body}`);
    },
  };
}

async function connectEmbedded(): Promise<TestCluster> {
  const { startEmbeddedServer } = await import('@/lib/embedded');
  // A token makes the embedded tier send credentials the way the real tier must.
  const token = randomBytes(24).toString('hex');
  const server = await startEmbeddedServer({ token });
  release = () => server.stop();
  const kubeconfig = server.kubeconfig() as KubeconfigFile;
  const endpoint: KubeEndpoint = { url: server.url, token };
  return {
    kind: 'embedded',
    url: server.url,
    token,
    kubeconfig,
    faults: server.faults,
    newNamespace: (prefix) => createNamespace(endpoint, prefix),
    openWatches: async () => server.openWatches(),
  };
}

/**
 * toKubeConfig loads a kubeconfig object (or YAML text) into @kubernetes/client-node.
 * client-node refuses an http:// server unless insecure-skip-tls-verify is set,
 * though plain HTTP has no TLS to skip; the flag is added for such servers.
 */
export function toKubeConfig(kubeconfig: KubeconfigFile | string): KubeConfig {
  const file = (typeof kubeconfig === 'string' ? parse(kubeconfig) : kubeconfig) as KubeconfigFile;
  const clusters = file.clusters.map((c) =>
    c.cluster.server.startsWith('http:') ? { ...c, cluster: { ...c.cluster, 'insecure-skip-tls-verify': true } } : c,
  );
  const kc = new KubeConfig();
  kc.loadFromString(JSON.stringify({ ...file, clusters }));
  return kc;
}

async function createNamespace(endpoint: KubeEndpoint, prefix: string): Promise<string> {
  const stem =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'test';
  const name = `${stem}-${randomBytes(4).toString('hex')}`;
  const res = await kubeRequest(endpoint, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'refwatch.dev/test': 'true' } } },
  });
  if (res.status !== 201) throw new Error(`creating namespace ${name} failed (${res.status}): ${res.body}`);
  const remove = () => deleteNamespace(endpoint, name);
  if (TestRunner.getCurrentTest()) onTestFinished(remove);
  else fileNamespaces.push(remove);
  return name;
}

async function deleteNamespace(endpoint: KubeEndpoint, name: string): Promise<void> {
  const res = await kubeRequest(endpoint, 'DELETE', `/api/v1/namespaces/${name}`);
  if (res.status >= 300 && res.status !== 404 && res.status !== 409) {
    throw new Error(`deleting namespace ${name} failed (${res.status}): ${res.body}`);
  }
}

// One sample line: apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",...,verb="WATCH",version="v1"} 1
const LONGRUNNING = /^apiserver_longrunning_requests\{([^}]*)\}\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

async function scrapeOpenWatches(endpoint: KubeEndpoint): Promise<WatchCounts> {
  const res = await kubeRequest(endpoint, 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics failed (${res.status}): ${res.body.slice(0, 200)}`);
  return parseOpenWatches(res.body);
}

/** parseOpenWatches sums WATCH requests per resource over scopes and versions. */
export function parseOpenWatches(metrics: string): WatchCounts {
  const counts: WatchCounts = {};
  for (const line of metrics.split('\n')) {
    const m = LONGRUNNING.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(LABEL)].map((l) => [l[1], l[2]]));
    if (labels.verb !== 'WATCH' || labels.subresource) continue;
    const key = labels.group ? `${labels.resource}.${labels.group}` : (labels.resource ?? '');
    counts[key] = (counts[key] ?? 0) + Number(m[2]);
  }
  return counts;
}
