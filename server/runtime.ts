import 'server-only';
import { ChangeLog, type ChangeLogOptions, type ClusterInfo } from '../lib/changelog';
import { startAdmission, type AdmissionService } from './admission';
import { Manager, type FallbackNamespace } from '../lib/engine';
import { SharedInformerPool, createLogger, type Logger } from '../lib/kube';
import { parseConfig, type Config } from './config';
import { connectCluster, probeCluster, type ClusterConnection } from './cluster';
import { DemoRunner } from './demo';
import { startExample, type Example } from './example';
import { embeddedKubeconfigPath, writeKubeconfigFile } from './kubeconfig-file';
import { startHistory, withHistoryWarnings, type History } from './history';
import { createMetrics, type Metrics } from './metrics';
import { clusterRulesBase, observeAuto, observeWithRules, type Observer } from './observer';
import { PackSwitch } from '../lib/rules/pack-switch';
import { ClusterRules, type ReferenceRulesState } from '../lib/rules/cluster-rules';
import { judgeReadiness, type Readiness } from './readiness';
import { StateHistory } from './state-history';
import { ReferrerSummary } from './summary';
import { SummaryFeed } from './summary-feed';

/**
 * Runtime is the process singleton behind every route handler: the cluster
 * connection, the informer pool, the engine and its change log, metrics, and
 * the rules observer.
 */
export interface Runtime {
  readonly version: number;
  readonly config: Config;
  readonly startedAt: number;
  readonly connection: ClusterConnection;
  readonly pool: SharedInformerPool;
  readonly manager: Manager;
  readonly changelog: ChangeLog;
  /** The overview's counts, kept current from the change log, and their feed to the streams. */
  readonly summary: ReferrerSummary;
  readonly summaryFeed: SummaryFeed;
  readonly metrics: Metrics;
  readonly observer: Observer;
  /** Each tracked object's recent state transitions, for its details. */
  readonly history: StateHistory;
  /** Transitions kept across restarts (SQLite or PostgreSQL); undefined with --history off. */
  readonly store?: History;
  /** Where the library's watch and leadership lines go (REFWATCH_LOG_LEVEL). */
  readonly logger: Logger;
  /** The fast-vs-backoff demo, when config.demo is on. */
  readonly demo?: DemoRunner;
  /** The example loaded into the embedded cluster (deploy/example), unless config.example is unset. */
  readonly example?: Example;
  /** The admission check: the embedded cluster's Warning headers, and the webhook of --admission-listen. */
  readonly admission?: AdmissionService;
  cluster(): ClusterInfo;
  onCluster(listener: (info: ClusterInfo) => void): () => void;
  /** What /readyz answers: see judgeReadiness. */
  readiness(): Readiness;
  dispose(): Promise<void>;
}

/** Bumped whenever Runtime's shape changes, so a dev reload replaces an old instance. */
const RUNTIME_VERSION = 8;
const KEY = Symbol.for('refwatch.runtime');
const PROBE_INTERVAL_MS = 10_000;
const COMPACT_INTERVAL_MS = 10_000;

interface Slot {
  version: number;
  promise: Promise<Runtime>;
}

type GlobalWithRuntime = typeof globalThis & { [KEY]?: Slot };

/**
 * ensureRuntime returns the process's runtime, starting it on first use.
 * instrumentation.ts calls it at server start; route handlers call it too,
 * so a request never races the start.
 */
export function ensureRuntime(): Promise<Runtime> {
  const g = globalThis as GlobalWithRuntime;
  const slot = g[KEY];
  if (slot && slot.version === RUNTIME_VERSION) return slot.promise;
  const previous = slot?.promise;
  const promise = (async () => {
    if (previous) await previous.then((r) => r.dispose()).catch(() => {});
    return startRuntime(parseConfig(), { kubeconfigFile: embeddedKubeconfigPath() });
  })();
  g[KEY] = { version: RUNTIME_VERSION, promise };
  // A failed start is retried by the next caller instead of being cached for ever.
  promise.catch(() => {
    if (g[KEY]?.promise === promise) delete g[KEY];
  });
  return promise;
}

/** disposeRuntime stops the process's runtime, if any; awaited. */
export async function disposeRuntime(): Promise<void> {
  const g = globalThis as GlobalWithRuntime;
  const slot = g[KEY];
  delete g[KEY];
  if (slot) await (await slot.promise.catch(() => undefined))?.dispose();
}

export interface RuntimeOptions {
  /** Where to write the embedded cluster's kubeconfig for kubectl; removed at dispose. */
  kubeconfigFile?: string;
  /** The change log's retention (default: ChangeLog's). */
  changelog?: Pick<ChangeLogOptions, 'retainRevisions' | 'retainMs'>;
  /** How often the change log is compacted when nothing changes, so aged tombstones go (default 10 s). */
  compactIntervalMs?: number;
}

/**
 * fallbackNamespaces is where a kind whose cluster-wide list is Forbidden is
 * watched instead, as kubectl falls back: the kubeconfig context's namespace
 * (in a Pod, its own), or "default" when the context names none, plus
 * --namespaces. The embedded cluster has no RBAC to fall back from.
 */
export function fallbackNamespaces(
  connection: Pick<ClusterConnection, 'client' | 'embedded'>,
  config: Pick<Config, 'namespaces' | 'cluster'>,
): FallbackNamespace[] {
  if (connection.embedded) return [];
  const contextNamespace = connection.client.describe().namespace;
  const from = config.cluster.mode === 'in-cluster' ? "the Pod's namespace" : 'the context';
  return [
    contextNamespace
      ? { namespace: contextNamespace, from }
      : { namespace: 'default', from: "kubectl's default: the context names no namespace" },
    ...(config.namespaces ?? []).map((namespace) => ({ namespace, from: '--namespaces' })),
  ];
}

export async function startRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const connection = await connectCluster(config);
  const changelog = new ChangeLog(opts.changelog);
  const history = new StateHistory(changelog);
  history.start();
  const summary = new ReferrerSummary(changelog, { stuckThresholdMs: config.stuckThresholdMs });
  const summaryFeed = new SummaryFeed(summary);
  const logger = createLogger(config.logLevel ? { level: config.logLevel } : {});
  const pool = new SharedInformerPool({ client: connection.client, logger });
  const metrics = createMetrics();
  const auto = config.packsAuto ? await observeAuto(config) : undefined;
  const observer = auto ? auto.observer : await observeWithRules(config);
  let onScopeFallback = () => {};
  let onPacks = () => {};
  let onReferenceRules = () => {};
  const manager = new Manager({
    source: pool,
    changelog,
    grace: config.graceMs,
    logger,
    ...(config.namespaces ? { namespaces: config.namespaces } : {}),
    fallbackNamespaces: fallbackNamespaces(connection, config),
    readiness: (kind) => observer.readiness(kind),
    queueMetrics: (controller) => metrics.queueMetrics(controller),
    hooks: {
      onResolved: (controller, _key, latencyMs) => metrics.observeResolution(controller, latencyMs),
      onReconcileError: (controller) => metrics.reconcileErrors.inc({ controller }),
      onScopeFallback: () => onScopeFallback(),
    },
  });
  observer.attach(manager, auto ? { kinds: auto.alwaysOn } : {});
  const packSwitch = auto
    ? new PackSwitch({
        manager,
        source: pool,
        observer,
        packs: auto.switched,
        alwaysOn: auto.alwaysOn,
        onChange: (states) => {
          for (const s of states) logger.info(`rule pack ${s.why}`, { pack: s.pack, on: s.on });
          onPacks();
        },
        onError: (what, e) => logger.warn(`rule packs: ${what} failed: ${e instanceof Error ? e.message : String(e)}`),
      })
    : undefined;
  const logged = new Set<string>();
  const clusterRules = new ClusterRules({
    manager,
    source: pool,
    observer,
    ...(await clusterRulesBase(config)),
    onChange: (states) => {
      logReferenceRules(logger, states, logged);
      onReferenceRules();
    },
    onError: (what, e) => logger.warn(`ReferenceRules: ${what} failed: ${e instanceof Error ? e.message : String(e)}`),
  });
  metrics.attach(manager, pool);
  // Before the engine starts, so the first transitions after a restart are compared with the stored ones.
  const store = config.history
    ? await startHistory({
        config: config.history,
        changelog,
        client: connection.client,
        embedded: connection.embedded !== undefined,
        server: connection.info.server,
        registry: metrics.registry,
        logger,
      }).catch(async (e: unknown) => {
        // A history schema newer than this binary stops the start; what started so far is stopped with it.
        metrics.detach();
        await connection.stop();
        throw e;
      })
    : undefined;
  manager.start();
  packSwitch?.start();
  clusterRules.start();
  const embedded = connection.embedded;
  const admission =
    embedded || config.admission
      ? await startAdmission({ source: pool, observer, changelog, config: config.admission })
      : undefined;
  if (embedded && admission) embedded.setAdmission((op, object) => admission.admission.check(op, object).warnings);
  const demo = config.demo
    ? new DemoRunner({
        manager,
        client: connection.client,
        serverRequestCount: embedded ? () => embedded.requestCount() : undefined,
      })
    : undefined;
  const example = connection.example
    ? startExample({
        manager,
        client: connection.client,
        manifests: connection.example,
        onError: (what, e) =>
          console.error(
            `refwatch: example: could not mark ${what} Ready: ${e instanceof Error ? e.message : String(e)}`,
          ),
      })
    : undefined;
  let removeKubeconfig: (() => Promise<void>) | undefined;
  if (embedded && opts.kubeconfigFile) {
    try {
      removeKubeconfig = await writeKubeconfigFile(opts.kubeconfigFile, embedded.kubeconfig());
      console.log(
        `refwatch: embedded cluster at ${embedded.url}; try: KUBECONFIG=${opts.kubeconfigFile} kubectl get pods -A`,
      );
    } catch (e) {
      // kubectl access is a convenience: a read-only home must not keep the dashboard from starting.
      console.warn(
        `refwatch: could not write the embedded cluster's kubeconfig to ${opts.kubeconfigFile}: ${e instanceof Error ? e.message : String(e)}; set XDG_STATE_HOME to a writable directory for kubectl access`,
      );
    }
  }

  let info = connection.info;
  let everReachable = info.reachable;
  const listeners = new Set<(info: ClusterInfo) => void>();
  const scopeFallbacks = () => manager.scopeFallbacks().map((f) => f.message);
  const packLines = (): string[] => [
    ...config.rulePacks.map((p) => `${p}: on, ${config.packsAuto ? 'always' : 'listed in --packs'}`),
    ...(packSwitch?.packStates().map((s) => s.why) ?? []),
  ];
  const current = (): ClusterInfo => {
    const fallbacks = scopeFallbacks();
    const rulesLines = referenceRulesLines(clusterRules);
    const withPacks = { ...info, packs: packLines(), ...(rulesLines.length > 0 ? { referenceRules: rulesLines } : {}) };
    return fallbacks.length > 0 ? { ...withPacks, scopeFallbacks: fallbacks } : withPacks;
  };
  onScopeFallback = () => {
    for (const l of listeners) l(current());
  };
  onPacks = onScopeFallback;
  onReferenceRules = onScopeFallback;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const probe = async () => {
    const next = await probeCluster(connection.client, info, abort.signal);
    if (abort.signal.aborted) return;
    const changed = next.reachable !== info.reachable || next.version !== info.version || next.message !== info.message;
    info = next;
    everReachable ||= info.reachable;
    if (changed) for (const l of listeners) l(current());
    timer = setTimeout(() => void probe(), PROBE_INTERVAL_MS);
  };
  await probe();
  // The log compacts as it changes; this timer lets a quiet log drop tombstones that aged out.
  const compactTimer = setInterval(() => changelog.compact(), opts.compactIntervalMs ?? COMPACT_INTERVAL_MS);

  let disposing: Promise<void> | undefined;
  const runtime: Runtime = {
    version: RUNTIME_VERSION,
    config,
    startedAt: Date.now(),
    connection,
    pool,
    manager,
    changelog,
    summary,
    summaryFeed,
    metrics,
    observer,
    history,
    ...(store ? { store } : {}),
    logger,
    ...(demo ? { demo } : {}),
    ...(example ? { example } : {}),
    ...(admission ? { admission } : {}),
    cluster: current,
    onCluster(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    readiness: () =>
      withHistoryWarnings(
        judgeReadiness({
          cluster: info,
          everReachable,
          watches: pool.watches(),
          now: Date.now(),
          scopeFallbacks: scopeFallbacks(),
        }),
        [...(store?.warnings() ?? []), ...clusterRules.warnings()],
      ),
    dispose() {
      disposing ??= (async () => {
        abort.abort();
        if (timer) clearTimeout(timer);
        clearInterval(compactTimer);
        listeners.clear();
        await demo?.dispose();
        await example?.stop();
        await packSwitch?.stop();
        await clusterRules.stop();
        await removeKubeconfig?.();
        embedded?.setAdmission(undefined);
        await admission?.stop();
        await manager.stop();
        await store?.stop();
        history.stop();
        summaryFeed.stop();
        summary.stop();
        metrics.detach();
        await connection.stop();
      })();
      return disposing;
    },
  };
  return runtime;
}

/** referenceRulesLines is the Cluster panel's view of ReferenceRules: why they are not watched, or each object's fate. */
function referenceRulesLines(rules: ClusterRules): NonNullable<ClusterInfo['referenceRules']> {
  const watch = rules.watchState();
  const objects = rules
    .states()
    .map((s) => ({ message: s.message, ok: s.problems.length === 0, problems: s.problems }));
  // A missing CRD is a choice, not a fault; a Forbidden list is a fault with a rule to grant.
  return watch ? [{ message: watch, ok: watch.includes('does not serve'), problems: [] }, ...objects] : objects;
}

/** logReferenceRules logs each problem once, at warn with the field named, and each applied version at info. */
function logReferenceRules(logger: Logger, states: readonly ReferenceRulesState[], logged: Set<string>): void {
  const now = new Set<string>();
  for (const s of states) {
    for (const p of s.problems) {
      now.add(p);
      if (!logged.has(p)) logger.warn(p, { event: 'reference_rules_invalid', object: s.object });
    }
    now.add(s.message);
    if (!logged.has(s.message) && s.problems.length === 0)
      logger.info(s.message, { event: 'reference_rules_applied', object: s.object });
  }
  logged.clear();
  for (const line of now) logged.add(line);
}
