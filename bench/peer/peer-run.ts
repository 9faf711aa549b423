import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { build } from 'esbuild';
import { KubeRequestError, type KubeClient } from '../../lib/kube';
import { demoPath, demoResource, ensureDemoKinds, secretPath } from '../../server/demo/kinds';
import { DEMO_API_VERSION } from '../../server/demo/scenario';
import { summarize, type Percentiles } from '../../server/demo/stats';
import type { KubeEndpoint } from '../../tests/setup/kube-http';
import { requestsBetween, scrapeApiServer, type ApiServerCounts } from './apiserver-metrics';
import { ControllerProcess } from './controller-process';
import { sampleProcess } from './process-meter';
import type { LatencySample } from './app-timings';
import { GENERATOR_WATCHES, runWorkload } from './workload';

export const IMPLEMENTATIONS = ['refwatch', 'cr-watch', 'cr-backoff', 'raw-watch', 'node-floor'] as const;
export type Implementation = (typeof IMPLEMENTATIONS)[number];

const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT = path.join(ROOT, 'bench', 'out', 'peer');
/** The implementations that run on node: their sources, compiled to OUT once per run. */
const NODE_SOURCES = {
  refwatch: path.join(import.meta.dirname, 'refwatch-controller.ts'),
  'node-floor': path.join(import.meta.dirname, 'node-floor.ts'),
} as const;
type NodeImplementation = keyof typeof NODE_SOURCES;

/** isNodeImplementation says whether an implementation runs on node: its CPU splits into main thread and V8's. */
export function isNodeImplementation(impl: Implementation): impl is NodeImplementation {
  return Object.hasOwn(NODE_SOURCES, impl);
}

const built = new Map<NodeImplementation, Promise<string>>();
/**
 * buildNodeController compiles a node implementation to plain JavaScript once
 * per run (its dependencies stay imports), so the process measured is `node`
 * running its code, as a controller built from the package runs: no
 * TypeScript loader in its CPU or memory.
 */
function buildNodeController(name: NodeImplementation): Promise<string> {
  let out = built.get(name);
  if (!out) {
    const outfile = path.join(OUT, `${path.basename(NODE_SOURCES[name], '.ts')}.mjs`);
    out = build({
      entryPoints: [NODE_SOURCES[name]],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'warning',
    }).then(() => outfile);
    built.set(name, out);
  }
  return out;
}

/** PeerCluster is the kube-apiserver every implementation runs against, one at a time. */
export interface PeerCluster {
  /** For /metrics: an identity allowed to read it. */
  endpoint: KubeEndpoint;
  /** The kubeconfig file the implementations are started with. */
  kubeconfigPath: string;
  /** The workload generator's client. */
  client: KubeClient;
}

export interface RunOptions {
  implementation: Implementation;
  apps: number;
  readyAfter: { minMs: number; maxMs: number };
  seed: number;
  /** Concurrent reconciles (or status writers) in every implementation. */
  workers: number;
  timeoutAfterReadyMs: number;
  /** The Go binary of bench/peer (bench/peer/build.sh). */
  goBinary: string;
  /** When set, refwatch's process writes a V8 CPU profile into this directory. */
  cpuProfDir?: string;
  /** When set, the controller runs in a memory cgroup of this many bytes (bench/peer/memory-limit.ts). */
  memoryLimitBytes?: number;
}

/** The percentiles of a run in which no App resolved. */
const NO_PERCENTILES: Percentiles = { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };

/** RunFigures is what one implementation cost and achieved in one run. */
export interface RunFigures {
  implementation: Implementation;
  apps: number;
  /** Latency percentiles, ms; with unresolved Apps, censored at the end of the run (a lower bound). */
  latencyMs: Percentiles;
  /** The latencies latencyMs is of, ms: with unresolved Apps, censored at the end of the run. */
  latencies: number[];
  /**
   * Each App's reaction, ms: resolvedAt − when its last referent's Ready event reached the generator's own watch
   * (bench/peer/workload.ts); censored at the end of the run for unresolved Apps, as latencies are.
   */
  reactions: number[];
  reactionMs: Percentiles;
  /** Every resolved App's latency beside when its last referent became Ready: REFWATCH_PEER_SAMPLES's rows. */
  latencySamples: LatencySample[];
  unresolved: number;
  /** CPU seconds the controller used from the first create until the last resolution. */
  cpuSeconds: number;
  /** The part of it on the process's main thread (for node, the rest is V8's compiler and GC threads). */
  mainThreadCpuSeconds: number;
  /** The controller process's peak resident memory (VmHWM), bytes. */
  peakRssBytes: number;
  /** Its resident memory once ready, before the first object was created, bytes: what the runtime and libraries cost. */
  readyRssBytes: number;
  /** Its file-backed resident memory (RssFile) once ready and at the end of the run, bytes: the node binary's touched pages. */
  rssFileBytes: { ready: number; end: number };
  /** Requests kube-apiserver served on Apps, Databases, Caches and Secrets, less the generator's. */
  requests: { total: number; perApp: number; byKey: Record<string, number> };
  /** Watches the controller held open on those resources once every object existed, in all and by resource. */
  openWatches: number;
  openWatchesByResource: Record<string, number>;
  createMs: number;
}

/**
 * prepareCluster installs the demo's CRDs and waits until kube-apiserver's
 * watch cache serves each kind. kube-apiserver builds a custom resource's
 * storage on the first request for it, and a watch that arrives while that
 * cache is still initializing gets 429 and a retry a second later: without
 * this, whichever implementation ran first would pay that second and those
 * requests, and refwatch, which starts its referent watches on first
 * reference, would pay it during the measurement.
 */
export async function prepareCluster(client: KubeClient): Promise<void> {
  await ensureDemoKinds(client, { install: true });
  const collections = [
    ...['apps', 'databases', 'caches'].map((r) => `/apis/${DEMO_API_VERSION}/${r}`),
    '/api/v1/secrets',
  ];
  for (const path of collections) {
    for (let attempt = 1; ; attempt++) {
      try {
        const stream = await client.openStream(
          path,
          {
            watch: 'true',
            sendInitialEvents: 'true',
            resourceVersionMatch: 'NotOlderThan',
            allowWatchBookmarks: 'true',
            timeoutSeconds: 1,
          },
          AbortSignal.timeout(30_000),
        );
        for await (const _ of stream.lines());
        break;
      } catch (e) {
        if (!(e instanceof KubeRequestError && e.status === 429) || attempt >= 30) throw e;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }
}

/**
 * runPeer runs one implementation once: a fresh namespace, the controller
 * started and synced, then the workload; it measures latency from the
 * Apps' status.resolvedAt, CPU and peak RSS from /proc, and requests and
 * watches from kube-apiserver's /metrics. Every object of the run is
 * deleted afterwards, so the next run's cluster-wide watches start empty.
 */
export async function runPeer(cluster: PeerCluster, o: RunOptions): Promise<RunFigures> {
  const runId = randomBytes(3).toString('hex');
  const namespace = `peer-${o.implementation}-${runId}`;
  await cluster.client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  });
  try {
    const before = await scrapeApiServer(cluster.endpoint);
    const controller = await startImplementation(cluster, o, namespace);
    let figures: Omit<RunFigures, 'requests'>;
    let generatorRequests: number;
    try {
      const start = sampleProcess(controller.pid);
      let created: ApiServerCounts | undefined;
      const workload = await runWorkload({
        client: cluster.client,
        namespace,
        runId,
        apps: o.apps,
        readyAfter: o.readyAfter,
        seed: o.seed,
        timeoutAfterReadyMs: o.timeoutAfterReadyMs,
        onCreated: async () => {
          created = await scrapeApiServer(cluster.endpoint);
        },
      });
      const end = sampleProcess(controller.pid);
      const early = await controller.exitedEarly();
      if (early || !start || !end) throw new Error(early ?? `${o.implementation} exited during the run`);
      generatorRequests = workload.requests;
      const latencies = workload.unresolved > 0 ? workload.censored : workload.latencies;
      figures = {
        implementation: o.implementation,
        apps: o.apps,
        latencies,
        latencyMs: summarize(latencies) ?? NO_PERCENTILES,
        reactions: workload.reactions,
        reactionMs: summarize(workload.reactions) ?? NO_PERCENTILES,
        latencySamples: workload.samples,
        unresolved: workload.unresolved,
        cpuSeconds: end.cpuSeconds - start.cpuSeconds,
        mainThreadCpuSeconds: end.mainThreadCpuSeconds - start.mainThreadCpuSeconds,
        peakRssBytes: end.peakRssBytes,
        readyRssBytes: start.rssBytes,
        rssFileBytes: { ready: start.rssFileBytes, end: end.rssFileBytes },
        // The generator's own watches are open too.
        openWatches: (created?.openWatches ?? NaN) - before.openWatches - GENERATOR_WATCHED.size,
        openWatchesByResource: watchesOpened(before, created),
        createMs: workload.createMs,
      };
    } finally {
      await controller.stop();
    }
    const after = await scrapeAfterWatchesClosed(cluster.endpoint, before.openWatches);
    const served = requestsBetween(before, after);
    const total = served.total - generatorRequests;
    return { ...figures, requests: { total, perApp: total / o.apps, byKey: served.byKey } };
  } finally {
    await deleteRun(cluster.client, namespace);
  }
}

/** The resources the generator watches itself, one watch each (bench/peer/workload.ts). */
const GENERATOR_WATCHED = new Set(GENERATOR_WATCHES.map(demoResource));

/** watchesOpened is the change in open watches per resource, less the generator's own watches. */
function watchesOpened(before: ApiServerCounts, during: ApiServerCounts | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [r, n] of Object.entries(during?.openWatchesByResource ?? {})) {
    const d = n - (before.openWatchesByResource[r] ?? 0) - (GENERATOR_WATCHED.has(r) ? 1 : 0);
    if (d !== 0) out[r] = d;
  }
  return out;
}

async function startImplementation(cluster: PeerCluster, o: RunOptions, namespace: string): Promise<ControllerProcess> {
  const args = ['--namespace', namespace, '--kubeconfig', cluster.kubeconfigPath, '--workers', String(o.workers)];
  const opts = { cwd: ROOT, timeoutMs: 120_000, memoryLimitBytes: o.memoryLimitBytes };
  if (!isNodeImplementation(o.implementation))
    return ControllerProcess.start(o.implementation, o.goBinary, ['--mode', o.implementation, ...args], opts);
  const script = await buildNodeController(o.implementation);
  // Profiles are for refwatch's process only.
  const prof = o.cpuProfDir && o.implementation === 'refwatch' ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [];
  // Measurement only (--trace-gc-nvp and the like), for both node implementations, so that the two can be held
  // side by side (bench/peer/gc-survivors.ts): the figures of such a run are not the bench's.
  const extra = process.env.REFWATCH_PEER_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [];
  return ControllerProcess.start(o.implementation, process.execPath, [...prof, ...extra, script, ...args], {
    ...opts,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}

/**
 * scrapeAfterWatchesClosed scrapes once the watches opened during the run are
 * closed on the server: kube-apiserver counts a WATCH request when it ends.
 */
async function scrapeAfterWatchesClosed(endpoint: KubeEndpoint, openBefore: number): Promise<ApiServerCounts> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const counts = await scrapeApiServer(endpoint);
    if (counts.openWatches <= openBefore) return counts;
    if (Date.now() > deadline)
      throw new Error(
        `kube-apiserver still counts ${counts.openWatches - openBefore} watches of the run open 15 s after it ended`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function deleteRun(client: KubeClient, namespace: string): Promise<void> {
  const ignoreMissing = (e: unknown) => {
    if (!(e instanceof KubeRequestError && e.status === 404)) throw e;
  };
  const collections = [
    demoPath('App', namespace),
    demoPath('Database', namespace),
    demoPath('Cache', namespace),
    secretPath(namespace),
  ];
  await Promise.all(collections.map((p) => client.request('DELETE', p).catch(ignoreMissing)));
  // Without a controller manager the namespace stays Terminating, but it is empty.
  await client.request('DELETE', `/api/v1/namespaces/${namespace}`).catch(ignoreMissing);
}
