import { isAbortError, type KubeClient } from '../../lib/kube';
import type { KubeObject } from '../../lib/model';
import { parseDemoConfig } from '../../server/demo/config';
import { CountedClient } from '../../server/demo/counted-client';
import { demoPath, secretPath } from '../../server/demo/kinds';
import { ReadinessSimulator } from '../../server/demo/readiness-simulator';
import {
  appManifest,
  planScenario,
  referentManifest,
  type PlannedApp,
  type PlannedReferent,
} from '../../server/demo/scenario';
import { resolutionLatency } from '../../server/demo/stats';

export interface WorkloadOptions {
  /** The generator's own client: its requests are counted, so they can be taken off the API server's count. */
  client: KubeClient;
  /** An existing, empty namespace. */
  namespace: string;
  runId: string;
  apps: number;
  /** Databases and Caches become Ready uniformly between these delays, counted once every object exists. */
  readyAfter: { minMs: number; maxMs: number };
  seed: number;
  /** How long to wait for the last resolutions once every referent is Ready; later ones count censored. */
  timeoutAfterReadyMs: number;
  /** Called once every object exists, before the first referent becomes Ready. */
  onCreated?: () => void | Promise<void>;
}

export interface WorkloadResult {
  /** resolvedAt − the last referent's readyAt of each resolved App, ms, ascending. */
  latencies: number[];
  /** Each resolved App's last referent's readyAt (epoch ms) and its latency, in the Apps' order. */
  samples: LatencySample[];
  /** latencies plus, for each unresolved App, how long it had waited at the end (a lower bound), ascending. */
  censored: number[];
  unresolved: number;
  /** Requests the generator sent to the counted resources (creates, readiness patches, its App watch). */
  requests: number;
  /** How long creating every object took, ms. */
  createMs: number;
}

/** One App's resolution: when its last referent became Ready (epoch ms) and how long it then took, ms. */
export interface LatencySample {
  readyAt: number;
  latencyMs: number;
  /**
   * How long the server took to answer the generator's patch that made that referent Ready, ms: a late App whose
   * write was slow too met a stall before any controller saw its event. Undefined when the last was a Secret,
   * which is created, not patched.
   */
  writeMs: number | undefined;
}

const CREATE_CONCURRENCY = 32;

/**
 * runWorkload is the benchmark's one workload generator, the same for every
 * implementation: the demo's scenario (App i refers to Database i, Cache i
 * and Secret i) created Apps first, then referents; then the demo's
 * readiness simulator marks each Database and Cache Ready after its seeded
 * delay and stamps status.readyAt. It watches the Apps and reads
 * status.resolvedAt, which the implementation under test writes.
 */
export async function runWorkload(o: WorkloadOptions): Promise<WorkloadResult> {
  const config = parseDemoConfig({
    apps: o.apps,
    readyAfter: { distribution: 'uniform', ...o.readyAfter },
    seed: o.seed,
  });
  const scenario = planScenario(config, o.namespace, o.seed);
  const client = new CountedClient(o.client);
  const abort = new AbortController();
  const readyAt = new Map<string, number>();
  // How long the server took to answer each readiness patch, ms.
  const writeMs = new Map<string, number>();
  const resolved = new Map<string, number>();
  let simulatorError: unknown;
  const simulator = new ReadinessSimulator({
    client,
    namespace: o.namespace,
    signal: abort.signal,
    onReady: (kind, name, at) => {
      readyAt.set(`${kind}/${name}`, at);
      writeMs.set(`${kind}/${name}`, Date.now() - at);
    },
    onError: (kind, name, e) =>
      (simulatorError ??= new Error(
        `marking ${kind} ${o.namespace}/${name} Ready failed: ${e instanceof Error ? e.message : String(e)}`,
      )),
  });
  const watch = new ResolutionWatch(o.client, o.namespace, abort.signal, (name, at) => {
    if (!resolved.has(name)) resolved.set(name, at);
  });
  let result: Omit<WorkloadResult, 'requests'>;
  try {
    await watch.started;
    const createdAt = Date.now();
    await eachLimited(scenario.apps, CREATE_CONCURRENCY, async (a: PlannedApp) => {
      await client.request('POST', demoPath('App', o.namespace), {
        body: appManifest(o.namespace, o.runId, a),
        signal: abort.signal,
      });
    });
    const referents: PlannedReferent[] = [...scenario.secrets, ...scenario.databases, ...scenario.caches];
    await eachLimited(referents, CREATE_CONCURRENCY, async (p) => {
      const path = p.kind === 'Secret' ? secretPath(o.namespace) : demoPath(p.kind, o.namespace);
      await client.request('POST', path, { body: referentManifest(o.namespace, o.runId, p), signal: abort.signal });
      if (p.kind === 'Secret') readyAt.set(`Secret/${p.name}`, Date.now());
    });
    const createMs = Date.now() - createdAt;
    await o.onCreated?.();
    for (const p of [...scenario.databases, ...scenario.caches])
      simulator.schedule(p.kind as 'Database' | 'Cache', p.name, p.readyAfterMs);

    const readyCount = scenario.databases.length + scenario.caches.length + scenario.secrets.length;
    let allReadyAt: number | undefined;
    for (;;) {
      if (simulatorError) throw simulatorError;
      if (watch.error) throw watch.error;
      if (resolved.size >= scenario.apps.length) break;
      if (allReadyAt === undefined && readyAt.size >= readyCount) allReadyAt = Date.now();
      if (allReadyAt !== undefined && Date.now() - allReadyAt > o.timeoutAfterReadyMs) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const end = Date.now();
    const latencies: number[] = [];
    const samples: LatencySample[] = [];
    const censored: number[] = [];
    for (const a of scenario.apps) {
      const keys = [`Database/${a.database}`, `Cache/${a.cache}`, `Secret/${a.secret}`];
      const needs = keys.map((k) => readyAt.get(k));
      const at = resolved.get(a.name);
      const l = at === undefined ? undefined : resolutionLatency(at, needs);
      if (l !== undefined && at !== undefined) {
        latencies.push(l);
        // The referent that became Ready last is the one whose readyAt the latency is measured from.
        const last = keys[needs.indexOf(at - l)]!;
        samples.push({ readyAt: at - l, latencyMs: l, writeMs: writeMs.get(last) });
      }
      const c = l ?? resolutionLatency(end, needs);
      if (c !== undefined) censored.push(c);
    }
    latencies.sort((a, b) => a - b);
    censored.sort((a, b) => a - b);
    result = { latencies, samples, censored, unresolved: scenario.apps.length - latencies.length, createMs };
  } finally {
    abort.abort();
    await simulator.stop();
    await watch.stopped;
  }
  return { ...result, requests: client.total + watch.opened };
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * ResolutionWatch watches the Apps of one namespace and reports each App's
 * status.resolvedAt (epoch ms) as it appears. It reconnects from the last
 * resourceVersion if the server ends the watch; opened counts its requests.
 */
class ResolutionWatch {
  opened = 0;
  error: Error | undefined;
  readonly started: Promise<void>;
  readonly stopped: Promise<void>;
  private resourceVersion: string | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly signal: AbortSignal,
    private readonly onResolved: (name: string, at: number) => void,
  ) {
    let started!: () => void;
    this.started = new Promise((r) => (started = r));
    this.stopped = this.run(started).catch((e: unknown) => {
      if (!isAbortError(e) && !signal.aborted) this.error = e instanceof Error ? e : new Error(String(e));
      started();
    });
  }

  private async run(started: () => void): Promise<void> {
    while (!this.signal.aborted) {
      const query = {
        watch: 'true',
        allowWatchBookmarks: 'true',
        ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}),
      };
      this.opened++;
      const stream = await this.client.openStream(demoPath('App', this.namespace), query, this.signal);
      started();
      for await (const line of stream.lines()) {
        const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number; message?: string } };
        if (event.type === 'ERROR') throw new Error(`the App watch failed: ${event.object.message ?? line}`);
        this.resourceVersion = event.object.metadata?.resourceVersion ?? this.resourceVersion;
        const at = (event.object.status as { resolvedAt?: string } | undefined)?.resolvedAt;
        if (at) this.onResolved(event.object.metadata.name, Date.parse(at));
      }
    }
  }
}
