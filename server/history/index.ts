import 'server-only';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ChangeLog } from '../../lib/changelog';
import { LeaderElector } from '../../lib/engine';
import { LeaseLock, type KubeClient, type Logger } from '../../lib/kube';
import type { Readiness } from '../readiness';
import type { HistoryConfig } from './config';
import { HistoryRecorder } from './recorder';
import { HistoryStore, type HistoryTarget } from './store';

export { HistoryRecorder } from './recorder';
export type { HistoryConfig } from './config';

/** History is the runtime's history: the recorder, and the leader election that lets one replica write. */
export interface History {
  readonly recorder: HistoryRecorder;
  readonly target: HistoryTarget;
  readonly cluster: string;
  /** What /readyz adds while the database is down: refwatch stays ready, live results do not depend on it. */
  warnings(): string[];
  stop(): Promise<void>;
}

export interface StartHistoryOptions {
  config: HistoryConfig;
  changelog: ChangeLog;
  client: KubeClient;
  /** The embedded cluster's history is kept apart from any real cluster's. */
  embedded: boolean;
  server: string;
  registry: Registry;
  logger: Logger;
  env?: Record<string, string | undefined>;
  /** The writer election's timings (ms) and this replica's identity; client-go's defaults otherwise. */
  leaderElection?: { leaseDuration?: number; renewDeadline?: number; retryPeriod?: number; identity?: string };
}

/**
 * clusterIdentity names a cluster in the history: `embedded`, or the API
 * server's host and port with a short hash of its URL, so a file per cluster
 * and one PostgreSQL database for several clusters both stay apart.
 */
export function clusterIdentity(embedded: boolean, server: string): string {
  if (embedded) return 'embedded';
  const hash = createHash('sha256').update(server).digest('hex').slice(0, 8);
  let host = 'cluster';
  try {
    const u = new URL(server);
    host = `${u.hostname}-${u.port || (u.protocol === 'http:' ? '80' : '443')}`;
  } catch {
    // A server that is not a URL still gets its own hash.
  }
  return `${host.replace(/[^A-Za-z0-9.-]/g, '_')}-${hash}`;
}

/** historyDir is $XDG_STATE_HOME/refwatch, or ~/.local/state/refwatch without it. */
export function historyDir(env: Record<string, string | undefined> = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || '/tmp', '.local', 'state');
  return join(state, 'refwatch');
}

export function historyTarget(
  config: Exclude<HistoryConfig, { mode: 'off' }>,
  cluster: string,
  env?: Record<string, string | undefined>,
): HistoryTarget {
  if (config.mode === 'postgres') return { dialect: 'postgres', url: config.url };
  return { dialect: 'sqlite', path: config.path ?? join(historyDir(env), `history-${cluster}.db`) };
}

/**
 * startHistory opens the history and starts recording; undefined with
 * `--history off`. With PostgreSQL on a real cluster, replicas elect a writer
 * on the Lease refwatch-history (the library's LeaderElector); a follower
 * keeps its state and reads, and writes nothing.
 */
export async function startHistory(opts: StartHistoryOptions): Promise<History | undefined> {
  const { config } = opts;
  if (config.mode === 'off') return undefined;
  const cluster = clusterIdentity(opts.embedded, opts.server);
  const target = historyTarget(config, cluster, opts.env);
  const elects = config.mode === 'postgres' && !opts.embedded;
  let elector: LeaderElector | undefined;
  const recorder = new HistoryRecorder({
    changelog: opts.changelog,
    open: () => HistoryStore.open(target, { cluster, log: (l) => opts.logger.warn(l) }),
    retentionMs: config.retentionMs,
    maxBytes: config.maxBytes,
    ...(elects ? { writable: () => elector?.isLeader() === true } : {}),
    log: (l) => opts.logger.warn(l),
  });
  if (elects) {
    const namespace = opts.client.describe().namespace ?? 'default';
    const { identity, ...timings } = opts.leaderElection ?? {};
    elector = new LeaderElector({
      lock: new LeaseLock(opts.client, namespace, 'refwatch-history', { logger: opts.logger }),
      identity: identity ?? `${hostname()}-${randomBytes(3).toString('hex')}`,
      ...timings,
      callbacks: {
        onStartedLeading: () => {
          opts.logger.info('history: this replica writes the history');
          void recorder.lead();
        },
        onStoppedLeading: () => {},
      },
      onError: (e) => opts.logger.debug(`history: leader election: ${e instanceof Error ? e.message : String(e)}`),
    });
  }
  await recorder.start();
  elector?.start();
  const unregister = registerHistoryMetrics(opts.registry, recorder);
  return {
    recorder,
    target,
    cluster,
    warnings() {
      const s = recorder.status();
      if (s.state !== 'down') return [];
      return [
        `history ${s.where ?? ''} is unavailable: ${s.error ?? 'unknown error'}; live results are unaffected, ${s.dropped} transitions dropped so far, reconnecting`,
      ];
    },
    async stop() {
      await elector?.stop();
      await recorder.stop();
      unregister();
    },
  };
}

/** withHistoryWarnings adds the history's warnings to /readyz's answer, which stays ready. */
export function withHistoryWarnings(r: Readiness, warnings: string[]): Readiness {
  if (warnings.length === 0) return r;
  return { ...r, status: r.ready ? 'degraded' : r.status, warnings: [...r.warnings, ...warnings] };
}

const METRICS = [
  'refwatch_history_written_total',
  'refwatch_history_dropped_total',
  'refwatch_history_pruned_total',
  'refwatch_history_queued',
  'refwatch_history_up',
  'refwatch_history_rows',
  'refwatch_history_bytes',
  'refwatch_history_oldest_seconds',
];

/** registerHistoryMetrics puts the history's figures on /metrics; returns their removal. */
export function registerHistoryMetrics(registry: Registry, recorder: HistoryRecorder): () => void {
  const status = () => recorder.status();
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  counter(METRICS[0]!, 'Transitions written to the history database.', () => status().written);
  counter(
    METRICS[1]!,
    'Transitions not written: the database was down or slow and the bounded queue was full, or a batch failed.',
    () => status().dropped,
  );
  counter(
    METRICS[2]!,
    'Transitions deleted by retention (--history-retention, --history-max-size).',
    () => status().pruned,
  );
  gauge(METRICS[3]!, 'Transitions waiting to be written.', () => status().queued);
  gauge(METRICS[4]!, '1 while the history database answers.', () => (status().state === 'up' ? 1 : 0));
  gauge(METRICS[5]!, "This cluster's transitions in the history, as of the last prune.", () => status().rows ?? 0);
  gauge(METRICS[6]!, 'Bytes the history database uses, as of the last prune.', () => status().bytes ?? 0);
  gauge(METRICS[7]!, 'Age of the oldest transition kept (s), as of the last prune.', () => {
    const oldest = status().oldestAt;
    return oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
  });
  return () => {
    for (const m of METRICS) registry.removeSingleMetric(m);
  };
}
