import { watchTargetKey, type Manager, type WakeOn, type WatchStatus } from '../../lib/engine';
import { KubeRequestError, isAbortError } from '../../lib/kube';
import { formatKey, kindKey, type ObjectKey } from '../../lib/model';
import {
  DEMO_MODES,
  type DanglingApp,
  type DemoMode,
  type DemoRunView,
  type ModeResult,
  type RunPhase,
} from '../../lib/demo/wire';
import { BackoffController } from './backoff-controller';
import type { DemoConfig } from './config';
import { CountedClient, type DemoClient } from './counted-client';
import { demoPath, ensureDemoKinds, secretPath } from './kinds';
import { ReadinessSimulator } from './readiness-simulator';
import {
  appManifest,
  DEMO_GROUP,
  RUN_LABEL,
  UNINSTALLED_KIND,
  planScenario,
  referentManifest,
  type DanglingKind,
  type PlannedApp,
  type PlannedReferent,
  type Scenario,
} from './scenario';
import { requiredReadyAts, resolutionLatency, speedup, summarize, toCsv } from './stats';
import { watchController, watchControllerName } from './watch-controller';

export type { DanglingApp, DemoRunView, ModeResult, RunPhase } from '../../lib/demo/wire';
export const MODES = DEMO_MODES;

/** AppRow is one App's line in the exports. */
export interface AppRow {
  app: string;
  dangling: string;
  createdAt: string;
  lastReadyAt: string;
  watchResolvedAt: string;
  watchLatencyMs: number | undefined;
  watchReconciles: number;
  watchRequests: number;
  backoffResolvedAt: string;
  backoffLatencyMs: number | undefined;
  backoffReconciles: number;
  backoffRequests: number;
}

export const APP_ROW_COLUMNS: readonly (keyof AppRow & string)[] = [
  'app',
  'dangling',
  'createdAt',
  'lastReadyAt',
  'watchResolvedAt',
  'watchLatencyMs',
  'watchReconciles',
  'watchRequests',
  'backoffResolvedAt',
  'backoffLatencyMs',
  'backoffReconciles',
  'backoffRequests',
];

interface ModeRecord {
  reconciles: number;
  requests: number;
  resolvedAt?: number;
}

interface AppRecord {
  key: ObjectKey;
  plan: PlannedApp;
  createdAt?: number;
  /** When the churn patch dropping its cacheRef was sent; unset again if the patch failed. */
  cacheDroppedAt?: number;
  watch: ModeRecord;
  backoff: ModeRecord;
}

export interface DemoRunDeps {
  manager: Manager;
  client: DemoClient;
  workers: number;
  installCrds: boolean;
  serverRequestCount?: () => Record<string, number>;
  wakeOn: WakeOn;
}

const CREATE_CONCURRENCY = 16;
const TICK_MS = 250;

/**
 * WatchRequestMeter counts the list and watch requests of the shared watches
 * a controller uses, from the informer source's own counters: a watch that
 * existed before the run is charged only for what it did during the run.
 */
class WatchRequestMeter {
  private readonly last = new Map<string, number>();
  private readonly totals = new Map<string, number>();

  constructor(private readonly tracked: (w: WatchStatus) => boolean) {}

  /** baseline records the counters of the watches running now, which the run did not start. */
  baseline(watches: WatchStatus[]): void {
    for (const w of watches) if (this.tracked(w)) this.last.set(watchTargetKey(w.target), requestsOf(w));
  }

  sample(watches: WatchStatus[]): void {
    for (const w of watches) {
      if (!this.tracked(w)) continue;
      const id = watchTargetKey(w.target);
      const now = requestsOf(w);
      const before = this.last.get(id) ?? 0;
      // Counters restart with a new watch (released, then acquired again).
      const delta = now >= before ? now - before : now;
      this.totals.set(id, (this.totals.get(id) ?? 0) + delta);
      this.last.set(id, now);
    }
  }

  total(filter: (id: string) => boolean = () => true): number {
    let n = 0;
    for (const [id, v] of this.totals) if (filter(id)) n += v;
    return n;
  }
}

/** A WatchList sync is one watch request that also counts as a list; a ListWatch sync lists, then watches. */
function requestsOf(w: WatchStatus): number {
  const mode = (w as WatchStatus & { syncMode?: string }).syncMode;
  return w.watchesOpened + (mode === 'WatchList' ? 0 : w.lists);
}

async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal.throwIfAborted();
      await fn(items[next++]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * DemoRun is one fast-vs-backoff run: it creates its namespace and objects,
 * runs the readiness simulator and both controllers, and measures. halt()
 * ends the run: the backoff controller, the simulator, every timer and
 * request stop, and the figures are final; the watch controller stays on the
 * engine, writing nothing, so the dashboard keeps the run's resolved graph.
 * cleanup() removes the watch controller and deletes every object it made.
 */
export class DemoRun {
  readonly namespace: string;
  /** The name of this run's watch controller on the engine. */
  readonly watchController: string;
  readonly scenario: Scenario;
  phase: RunPhase = 'Creating';
  readonly startedAt = Date.now();
  endedAt: number | undefined;
  error: string | undefined;

  private readonly abort = new AbortController();
  private readonly apps = new Map<ObjectKey, AppRecord>();
  private readonly readyAt = {
    Database: new Map<string, number>(),
    Cache: new Map<string, number>(),
    Secret: new Map<string, number>(),
  };
  private readonly setupClient: CountedClient;
  private readonly simulatorClient: CountedClient;
  private readonly clients: Record<DemoMode, CountedClient>;
  private readonly simulator: ReadinessSimulator;
  private backoff: BackoffController | undefined;
  private watchAdded = false;
  private removing: Promise<void> | undefined;
  private readonly meter: WatchRequestMeter;
  private readonly appTarget: string;
  private readonly timers = new Set<NodeJS.Timeout>();
  private created = 0;
  private readonly resolvedCount: Record<DemoMode, number> = { watch: 0, backoff: 0 };
  private readonly resolvable: number;
  private churnAppliedAt: number | undefined;
  private churnApps = 0;
  private serverBaseline: number | undefined;
  private serverRequests: number | undefined;
  private danglingReasons = new Map<ObjectKey, { reason?: string; message?: string }>();
  private halting: Promise<void> | undefined;
  /** Settles when the setup (create and start) has ended, whatever the outcome. */
  readonly setup: Promise<void>;
  private finishedResolve!: () => void;
  /** Resolves once the run has halted. */
  readonly finished = new Promise<void>((resolve) => (this.finishedResolve = resolve));

  constructor(
    readonly id: string,
    readonly config: DemoConfig,
    readonly seed: number,
    private readonly deps: DemoRunDeps,
  ) {
    this.namespace = `refwatch-demo-${id}`;
    this.watchController = watchControllerName(id);
    this.scenario = planScenario(config, this.namespace, seed);
    for (const plan of this.scenario.apps) {
      const key = formatKey({ group: DEMO_GROUP, kind: 'App', namespace: this.namespace, name: plan.name });
      this.apps.set(key, { key, plan, watch: { reconciles: 0, requests: 0 }, backoff: { reconciles: 0, requests: 0 } });
    }
    this.resolvable = this.scenario.apps.filter((a) => !a.dangling).length;
    this.setupClient = new CountedClient(deps.client);
    this.simulatorClient = new CountedClient(deps.client);
    this.clients = { watch: new CountedClient(deps.client), backoff: new CountedClient(deps.client) };
    this.simulator = new ReadinessSimulator({
      client: this.simulatorClient,
      namespace: this.namespace,
      signal: this.abort.signal,
      onReady: (kind, name, at) => this.readyAt[kind].set(name, at),
      onError: (kind, name, e) => {
        this.error ??= `marking ${kind} ${this.namespace}/${name} Ready failed: ${e instanceof Error ? e.message : String(e)}`;
      },
    });
    this.appTarget = watchTargetKey({ group: DEMO_GROUP, kind: 'App', namespace: this.namespace });
    const referentKinds = new Set([
      `Database.${DEMO_GROUP}`,
      `Cache.${DEMO_GROUP}`,
      'Secret',
      kindKey({ group: 'db.example.com', kind: UNINSTALLED_KIND.kind }),
    ]);
    this.meter = new WatchRequestMeter((w) => {
      const id = watchTargetKey(w.target);
      return (
        id === this.appTarget ||
        (w.target.namespace === undefined &&
          w.target.labelSelector === undefined &&
          referentKinds.has(kindKey(w.target)))
      );
    });
    this.meter.baseline(deps.manager.source.watches());
    this.setup = this.run();
  }

  /** isActive: the run is creating objects or waiting for resolutions. */
  isActive(): boolean {
    return this.phase === 'Creating' || this.phase === 'Running';
  }

  /** Timers and backoff waits of this run still pending: 0 once it halted. */
  pendingTimers(): number {
    return this.timers.size + this.simulator.pending() + (this.backoff?.queue.waiting() ?? 0);
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const m = this.deps.manager;
    try {
      const server = this.deps.serverRequestCount?.();
      if (server) this.serverBaseline = sum(server);
      this.after(this.config.timeoutMs, () => void this.halt('TimedOut'));
      await ensureDemoKinds(this.setupClient, { install: this.deps.installCrds, signal });
      await this.setupClient.request('POST', '/api/v1/namespaces', {
        body: {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: {
            name: this.namespace,
            labels: { [RUN_LABEL]: this.id, 'app.kubernetes.io/part-of': 'refwatch-demo' },
          },
        },
        signal,
      });
      const count = (mode: DemoMode) => (key: ObjectKey) => {
        const r = this.apps.get(key);
        if (r && this.isActive()) r[mode].reconciles++;
      };
      const request = (mode: DemoMode) => (key: ObjectKey) => {
        const r = this.apps.get(key);
        if (r) r[mode].requests++;
      };
      const reconciles = (mode: DemoMode) => (key: ObjectKey) => this.apps.get(key)?.[mode].reconciles ?? 0;
      m.addController(
        watchController({
          name: this.watchController,
          namespace: this.namespace,
          measuring: () => this.isActive(),
          client: this.clients.watch,
          workers: this.deps.workers,
          wakeOn: this.deps.wakeOn,
          onReconcile: count('watch'),
          onResolved: (key, at) => this.resolved('watch', key, at),
          reconcilesOf: reconciles('watch'),
          onRequest: request('watch'),
        }),
      );
      this.watchAdded = true;
      this.backoff = new BackoffController({
        source: m.source,
        apps: { group: DEMO_GROUP, kind: 'App', namespace: this.namespace },
        client: this.clients.backoff,
        preset: this.config.backoffPreset,
        workers: this.deps.workers,
        onReconcile: count('backoff'),
        onResolved: (key, at) => this.resolved('backoff', key, at),
        reconcilesOf: reconciles('backoff'),
        onRequest: request('backoff'),
      });
      this.backoff.start();

      // Apps first, then what they refer to: an App never waits on a referent that was ready before it existed.
      await eachLimited([...this.apps.values()], CREATE_CONCURRENCY, signal, async (r) => {
        await this.setupClient.request('POST', demoPath('App', this.namespace), {
          body: appManifest(this.namespace, this.id, r.plan),
          signal,
        });
        r.createdAt = Date.now();
        this.created++;
      });
      const referents: PlannedReferent[] = [
        ...this.scenario.secrets,
        ...this.scenario.databases,
        ...this.scenario.caches,
      ];
      await eachLimited(referents, CREATE_CONCURRENCY, signal, async (p) => {
        const path = p.kind === 'Secret' ? secretPath(this.namespace) : demoPath(p.kind, this.namespace);
        await this.setupClient.request('POST', path, { body: referentManifest(this.namespace, this.id, p), signal });
        this.created++;
        if (p.kind === 'Secret') this.readyAt.Secret.set(p.name, Date.now());
      });
      if (this.phase !== 'Creating') return;
      this.phase = 'Running';
      // Delays count from here, once every object exists: readiness never competes with the creation burst.
      for (const p of [...this.scenario.databases, ...this.scenario.caches])
        this.simulator.schedule(p.kind as 'Database' | 'Cache', p.name, p.readyAfterMs);
      if (this.config.churn) this.after(this.config.churn.afterMs, () => void this.churn());
      this.tick();
    } catch (e) {
      if (signal.aborted || isAbortError(e)) return;
      this.error = e instanceof Error ? e.message : String(e);
      // Not awaited: halt awaits this setup.
      void this.halt('Failed');
    }
  }

  private tick(): void {
    this.meter.sample(this.deps.manager.source.watches());
    if (
      this.phase === 'Running' &&
      this.resolvedCount.watch >= this.resolvable &&
      this.resolvedCount.backoff >= this.resolvable
    ) {
      void this.halt('Completed');
      return;
    }
    if (this.isActive()) this.after(TICK_MS, () => this.tick());
  }

  private resolved(mode: DemoMode, key: ObjectKey, at: number): void {
    const r = this.apps.get(key);
    // After the run ended its figures are final.
    if (!r || r[mode].resolvedAt !== undefined || !this.isActive()) return;
    r[mode].resolvedAt = at;
    this.resolvedCount[mode]++;
    if (
      this.phase === 'Running' &&
      this.resolvedCount.watch >= this.resolvable &&
      this.resolvedCount.backoff >= this.resolvable
    )
      void this.halt('Completed');
  }

  /** churn drops every App's cacheRef, so no reference to a Cache remains. */
  private async churn(): Promise<void> {
    const signal = this.abort.signal;
    this.churnAppliedAt = Date.now();
    try {
      await eachLimited([...this.apps.values()], CREATE_CONCURRENCY, signal, async (r) => {
        // Stamped before sending: the App can resolve before the answer arrives.
        r.cacheDroppedAt = Date.now();
        try {
          await this.setupClient.request('PATCH', demoPath('App', this.namespace, r.plan.name), {
            body: { spec: { cacheRef: null } },
            contentType: 'application/merge-patch+json',
            signal,
          });
        } catch (e) {
          r.cacheDroppedAt = undefined;
          throw e;
        }
        this.churnApps++;
      });
    } catch (e) {
      if (signal.aborted || isAbortError(e)) return;
      this.error ??= `dropping cacheRef failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /**
   * halt ends the run: the backoff controller and the simulator stopped, timers
   * cleared, requests awaited, figures frozen. The watch controller keeps its
   * references (and the reference controllers they hold) until cleanup. Idempotent.
   */
  halt(phase: RunPhase): Promise<void> {
    this.halting ??= (async () => {
      if (this.isActive()) this.phase = phase;
      this.endedAt = Date.now();
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.abort.abort();
      this.meter.sample(this.deps.manager.source.watches());
      const server = this.deps.serverRequestCount?.();
      if (server && this.serverBaseline !== undefined) this.serverRequests = sum(server) - this.serverBaseline;
      for (const r of this.apps.values()) {
        if (!r.plan.dangling) continue;
        const entity = this.deps.manager.changelog.get('referrer', `${this.watchController}|${r.key}`);
        if (entity) this.danglingReasons.set(r.key, { reason: entity.reason, message: entity.message });
      }
      await this.setup;
      await this.backoff?.stop();
      await this.simulator.stop();
      this.finishedResolve();
    })();
    return this.halting;
  }

  /** removeWatchController takes the run's watch controller and its references off the engine. Idempotent. */
  removeWatchController(): Promise<void> {
    this.removing ??= this.watchAdded ? this.deps.manager.removeController(this.watchController) : Promise.resolve();
    return this.removing;
  }

  /** cleanup halts the run, removes its watch controller, then deletes every object it made and its namespace. */
  async cleanup(): Promise<void> {
    await this.halt('Stopped');
    await this.removeWatchController();
    const c = this.deps.client;
    const selector = { labelSelector: `${RUN_LABEL}=${this.id}` };
    const collections = [
      demoPath('App', this.namespace),
      demoPath('Database', this.namespace),
      demoPath('Cache', this.namespace),
      secretPath(this.namespace),
    ];
    const ignoreMissing = (e: unknown) => {
      if (!(e instanceof KubeRequestError && e.status === 404)) throw e;
    };
    // Objects first: a namespace on a cluster without a namespace controller stays Terminating with its objects in it.
    await Promise.all(collections.map((p) => c.request('DELETE', p, { query: selector }).catch(ignoreMissing)));
    await c.request('DELETE', `/api/v1/namespaces/${this.namespace}`).catch(ignoreMissing);
  }

  /** remaining counts the run's objects still on the cluster. */
  async remaining(): Promise<number> {
    const selector = { labelSelector: `${RUN_LABEL}=${this.id}` };
    const collections = [
      demoPath('App', this.namespace),
      demoPath('Database', this.namespace),
      demoPath('Cache', this.namespace),
      secretPath(this.namespace),
    ];
    let n = 0;
    for (const p of collections) {
      try {
        n += ((await this.deps.client.getJSON<{ items?: unknown[] }>(p, selector)).items ?? []).length;
      } catch (e) {
        if (!(e instanceof KubeRequestError && e.status === 404)) throw e;
      }
    }
    return n;
  }

  private requiredReadyAts(r: AppRecord): (number | undefined)[] {
    const ready = {
      database: this.readyAt.Database.get(r.plan.database),
      secret: this.readyAt.Secret.get(r.plan.secret),
      cache: this.readyAt.Cache.get(r.plan.cache),
    };
    return requiredReadyAts(ready, r.cacheDroppedAt);
  }

  private latencyOf(r: AppRecord, mode: DemoMode): number | undefined {
    const at = r[mode].resolvedAt;
    if (at === undefined || r.plan.dangling) return undefined;
    return resolutionLatency(at, this.requiredReadyAts(r));
  }

  private modeResult(mode: DemoMode, now: number): { result: ModeResult; latencies: number[] } {
    const latencies: number[] = [];
    const censored: number[] = [];
    let reconciles = 0;
    let unresolved = 0;
    for (const r of this.apps.values()) {
      reconciles += r[mode].reconciles;
      if (r.plan.dangling) continue;
      const l = this.latencyOf(r, mode);
      if (l !== undefined) {
        latencies.push(l);
        censored.push(l);
        continue;
      }
      unresolved++;
      // Waiting since its last referent became ready: a lower bound of its latency.
      const waited = resolutionLatency(now, this.requiredReadyAts(r));
      if (waited !== undefined) censored.push(waited);
    }
    latencies.sort((a, b) => a - b);
    const apps = Math.max(1, this.apps.size);
    const reconcile = this.clients[mode].total;
    const watches = mode === 'watch' ? this.meter.total() : this.meter.total((id) => id === this.appTarget);
    return {
      latencies,
      result: {
        mode,
        resolved: this.resolvedCount[mode],
        unresolved,
        latencyMs: summarize(latencies),
        censoredLatencyMs: unresolved > 0 ? summarize(censored) : null,
        reconciles: { total: reconciles, perApp: round(reconciles / apps) },
        requests: { total: reconcile + watches, reconcile, watches, perApp: round((reconcile + watches) / apps) },
      },
    };
  }

  view(opts: { latencies?: boolean } = {}): DemoRunView {
    const now = this.endedAt ?? Date.now();
    const watch = this.modeResult('watch', now);
    const backoff = this.modeResult('backoff', now);
    const byKind: Record<DanglingKind, number> = { typo: 0, wrongNamespace: 0, kindNotInstalled: 0 };
    const dangling: DanglingApp[] = [];
    for (const r of this.apps.values()) {
      if (!r.plan.dangling) continue;
      byKind[r.plan.dangling]++;
      const why =
        this.danglingReasons.get(r.key) ??
        this.deps.manager.changelog.get('referrer', `${this.watchController}|${r.key}`);
      const d: DanglingApp = { app: r.key, dangling: r.plan.dangling };
      if (why?.reason !== undefined) d.reason = why.reason;
      if (why?.message !== undefined) d.message = why.message;
      if (dangling.length < 50) dangling.push(d);
    }
    const censored = backoff.result.censoredLatencyMs !== null;
    const b = backoff.result.censoredLatencyMs ?? backoff.result.latencyMs;
    const w = watch.result.latencyMs;
    let readyReferents = 0;
    for (const m of Object.values(this.readyAt)) readyReferents += m.size;
    const s = this.scenario;
    const view: DemoRunView = {
      id: this.id,
      namespace: this.namespace,
      watchController: this.watchController,
      phase: this.phase,
      config: this.config,
      seed: this.seed,
      startedAt: new Date(this.startedAt).toISOString(),
      progress: {
        elapsedMs: now - this.startedAt,
        objects: {
          planned: s.apps.length + s.databases.length + s.caches.length + s.secrets.length,
          created: this.created,
        },
        apps: { total: s.apps.length, resolvable: this.resolvable, dangling: s.apps.length - this.resolvable },
        referents: { total: s.databases.length + s.caches.length + s.secrets.length, ready: readyReferents },
        resolved: { ...this.resolvedCount },
      },
      results: {
        modes: { watch: watch.result, backoff: backoff.result },
        speedup: { p50: speedup(b?.p50, w?.p50), p90: speedup(b?.p90, w?.p90), p99: speedup(b?.p99, w?.p99), censored },
        dangling: { total: s.apps.length - this.resolvable, byKind, apps: dangling },
        setupRequests: this.setupClient.total,
        simulatorRequests: this.simulatorClient.total,
      },
    };
    if (this.endedAt !== undefined) view.endedAt = new Date(this.endedAt).toISOString();
    if (this.error !== undefined) view.error = this.error;
    if (this.config.churn) {
      view.results.churn = { ...this.config.churn, apps: this.churnApps };
      if (this.churnAppliedAt !== undefined) view.results.churn.appliedAt = new Date(this.churnAppliedAt).toISOString();
    }
    if (this.serverRequests !== undefined) view.results.apiServer = { requests: this.serverRequests };
    if (opts.latencies) view.latencies = { watch: watch.latencies, backoff: backoff.latencies };
    return view;
  }

  rows(): AppRow[] {
    const iso = (t: number | undefined) => (t === undefined ? '' : new Date(t).toISOString());
    return [...this.apps.values()].map((r) => {
      const ready = this.requiredReadyAts(r);
      const last =
        ready.every((t) => t !== undefined) && !r.plan.dangling ? Math.max(...(ready as number[])) : undefined;
      return {
        app: r.key,
        dangling: r.plan.dangling ?? '',
        createdAt: iso(r.createdAt),
        lastReadyAt: iso(last),
        watchResolvedAt: iso(r.watch.resolvedAt),
        watchLatencyMs: this.latencyOf(r, 'watch'),
        watchReconciles: r.watch.reconciles,
        watchRequests: r.watch.requests,
        backoffResolvedAt: iso(r.backoff.resolvedAt),
        backoffLatencyMs: this.latencyOf(r, 'backoff'),
        backoffReconciles: r.backoff.reconciles,
        backoffRequests: r.backoff.requests,
      };
    });
  }

  /** exportJson is the run with every App's row; exportCsv is the rows alone. */
  exportJson(): string {
    // null, not a missing field, for an App a mode has not resolved.
    return JSON.stringify(
      { ...this.view({ latencies: true }), apps: this.rows() },
      (_k, v: unknown) => (v === undefined ? null : v),
      2,
    );
  }

  exportCsv(): string {
    return toCsv(APP_ROW_COLUMNS, this.rows());
  }
}

function sum(counts: Record<string, number>): number {
  let n = 0;
  for (const v of Object.values(counts)) n += v;
  return n;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
