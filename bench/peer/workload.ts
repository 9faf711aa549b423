import { isAbortError, type KubeClient } from '../../lib/kube';
import type { KubeObject } from '../../lib/model';
import { parseDemoConfig } from '../../server/demo/config';
import { CountedClient } from '../../server/demo/counted-client';
import { demoPath, secretPath, type DemoKind } from '../../server/demo/kinds';
import { ReadinessSimulator } from '../../server/demo/readiness-simulator';
import {
  appManifest,
  planScenario,
  referentManifest,
  type PlannedApp,
  type PlannedReferent,
} from '../../server/demo/scenario';
import { timeApps, type AppTimings } from './app-timings';

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

export interface WorkloadResult extends AppTimings {
  unresolved: number;
  /** Requests the generator sent to the counted resources (creates, readiness patches, its watches). */
  requests: number;
  /** How long creating every object took, ms. */
  createMs: number;
}

const CREATE_CONCURRENCY = 32;

/** The referents whose Ready events the generator watches for: the reaction is timed from their arrival. */
const WATCHED_REFERENTS = ['Database', 'Cache'] as const;

/** The kinds the generator watches, each with one watch of its own: the Apps, then the watched referents. */
export const GENERATOR_WATCHES: readonly DemoKind[] = ['App', ...WATCHED_REFERENTS];

/**
 * runWorkload is the benchmark's one workload generator, the same for every
 * implementation: the demo's scenario (App i refers to Database i, Cache i
 * and Secret i) created Apps first, then referents; then the demo's
 * readiness simulator marks each Database and Cache Ready after its seeded
 * delay and stamps status.readyAt. It watches the Apps and reads
 * status.resolvedAt, which the implementation under test writes. It watches
 * the Databases and Caches too, a watcher like any other: when their Ready
 * event reaches it is when the server had told its watchers, and the
 * implementation's reaction is timed from there.
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
  const watch = new KindWatch(o.client, 'App', o.namespace, abort.signal, (app) => {
    const at = (app.status as { resolvedAt?: string } | undefined)?.resolvedAt;
    if (at && !resolved.has(app.metadata.name)) resolved.set(app.metadata.name, Date.parse(at));
  });
  // When each Database's and Cache's Ready event reached a watcher of the generator's own, epoch ms.
  const seen = new Map<string, number>();
  const referentWatches = WATCHED_REFERENTS.map(
    (kind) =>
      new KindWatch(o.client, kind, o.namespace, abort.signal, (referent, arrivedAt) => {
        const key = `${kind}/${referent.metadata.name}`;
        if ((referent.status as { readyAt?: string } | undefined)?.readyAt && !seen.has(key)) seen.set(key, arrivedAt);
      }),
  );
  const watches = [watch, ...referentWatches];
  let result: Omit<WorkloadResult, 'requests'>;
  try {
    await Promise.all(watches.map((w) => w.started));
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
      for (const w of watches) if (w.error) throw w.error;
      if (resolved.size >= scenario.apps.length) break;
      if (allReadyAt === undefined && readyAt.size >= readyCount) allReadyAt = Date.now();
      if (allReadyAt !== undefined && Date.now() - allReadyAt > o.timeoutAfterReadyMs) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const timings = timeApps(scenario.apps, { readyAt, resolved, seen, writeMs }, Date.now());
    result = { ...timings, unresolved: scenario.apps.length - timings.latencies.length, createMs };
  } finally {
    abort.abort();
    await simulator.stop();
    await Promise.all(watches.map((w) => w.stopped));
  }
  return { ...result, requests: client.total + watches.reduce((n, w) => n + w.opened, 0) };
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * KindWatch watches one demo kind in one namespace and hands each object it
 * receives to onObject, with the time it arrived (epoch ms). It reconnects
 * from the last resourceVersion if the server ends the watch; opened counts
 * its requests.
 */
class KindWatch {
  opened = 0;
  error: Error | undefined;
  readonly started: Promise<void>;
  readonly stopped: Promise<void>;
  private resourceVersion: string | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly kind: DemoKind,
    private readonly namespace: string,
    private readonly signal: AbortSignal,
    private readonly onObject: (object: KubeObject, arrivedAt: number) => void,
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
      const stream = await this.client.openStream(demoPath(this.kind, this.namespace), query, this.signal);
      started();
      for await (const line of stream.lines()) {
        const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number; message?: string } };
        const arrivedAt = Date.now();
        if (event.type === 'ERROR') throw new Error(`the ${this.kind} watch failed: ${event.object.message ?? line}`);
        this.resourceVersion = event.object.metadata?.resourceVersion ?? this.resourceVersion;
        if (event.type !== 'BOOKMARK') this.onObject(event.object, arrivedAt);
      }
    }
  }
}
