import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ENTITY_KINDS } from '../lib/changelog';
import type { Manager } from '../lib/engine';
import type { SharedInformerPool } from '../lib/kube';
import { kindKey } from '../lib/model';
import type { QueueMetricsProvider } from '../lib/queue';

/** Metrics is refwatch's Prometheus registry (served at /metrics) and the hooks that feed it. */
export interface Metrics {
  registry: Registry;
  queueMetrics(controller: string): QueueMetricsProvider;
  observeResolution(controller: string, latencyMs: number | undefined): void;
  reconcileErrors: Counter<'controller'>;
  sseClients: Gauge;
  attach(manager: Manager, pool: SharedInformerPool): void;
  detach(): void;
}

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'refwatch_process_' });
  let manager: Manager | undefined;
  let pool: SharedInformerPool | undefined;

  new Gauge({
    name: 'refwatch_references',
    help: 'References in the registry, counted with multiplicity.',
    registers: [registry],
    collect() {
      this.set(manager?.registry.edgeCount ?? 0);
    },
  });
  new Gauge({
    name: 'refwatch_referrers',
    help: 'Referrers with at least one reference.',
    registers: [registry],
    collect() {
      this.set(manager?.registry.referrerCount ?? 0);
    },
  });
  new Gauge({
    name: 'refwatch_referents',
    help: 'Referents named by at least one reference.',
    registers: [registry],
    collect() {
      this.set(manager?.registry.referentCount ?? 0);
    },
  });
  new Gauge({
    name: 'refwatch_changelog_entities',
    help: 'Entities held by the change log, by entity kind and state: live, or a tombstone kept until compaction.',
    labelNames: ['entity', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      const log = manager?.changelog;
      if (!log) return;
      for (const entity of ENTITY_KINDS) {
        this.set({ entity, state: 'live' }, log.size(entity));
        this.set({ entity, state: 'tombstone' }, log.tombstones(entity));
      }
    },
  });
  new Gauge({
    name: 'refwatch_changelog_revisions_retained',
    help: 'Revisions a client may be behind and still get deltas; further behind, it resyncs.',
    registers: [registry],
    collect() {
      const log = manager?.changelog;
      this.set(log ? log.revision - log.compactedRevision : 0);
    },
  });
  new Gauge({
    name: 'refwatch_reference_controllers',
    help: 'Reference controllers (one per referent kind) by state.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.reset();
      const counts: Record<string, number> = { Starting: 0, Priming: 0, Active: 0, Grace: 0, Cancelled: 0 };
      for (const rc of manager?.referenceControllers.entities() ?? []) counts[rc.state] = (counts[rc.state] ?? 0) + 1;
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'refwatch_watches',
    help: 'Open shared watches, by kind, namespace (empty: all namespaces) and whether primed.',
    labelNames: ['kind', 'namespace', 'primed'],
    registers: [registry],
    collect() {
      this.reset();
      for (const w of pool?.watches() ?? []) {
        const kind = w.target.group ? `${w.target.kind}.${w.target.group}` : w.target.kind;
        this.inc({ kind, namespace: w.target.namespace ?? '', primed: String(w.primed) });
      }
    },
  });
  new Gauge({
    name: 'refwatch_queue_depth',
    help: 'Keys waiting in each controller work queue.',
    labelNames: ['controller'],
    registers: [registry],
    collect() {
      this.reset();
      // Read from the queues themselves: the change log's copy is as old as the engine's last stats tick.
      for (const name of manager?.controllerNames() ?? [])
        this.set({ controller: name }, manager!.controller(name)!.queue.stats().depth);
      forgetRemovedControllers();
    },
  });
  const adds = new Counter({
    name: 'refwatch_queue_adds_total',
    help: 'Keys added to each controller work queue.',
    labelNames: ['controller'],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'refwatch_queue_retries_total',
    help: 'Rate-limited retries of failed reconciles.',
    labelNames: ['controller'],
    registers: [registry],
  });
  const queueLatency = new Histogram({
    name: 'refwatch_queue_latency_seconds',
    help: 'Time a key waits in the queue before a worker takes it.',
    labelNames: ['controller'],
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const workDuration = new Histogram({
    name: 'refwatch_reconcile_duration_seconds',
    help: 'Time one reconcile takes.',
    labelNames: ['controller'],
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const resolution = new Histogram({
    name: 'refwatch_resolution_latency_seconds',
    help: 'From the queue add that woke a referrer (for a waiting referrer: the referent event) to its reconcile finding every referent ready.',
    labelNames: ['controller'],
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  // The pool counts; these read its counts at scrape, so the library needs no prom-client.
  new Counter({
    name: 'refwatch_watch_restarts_total',
    help: 'Watch requests that ended and were opened again, by kind and reason (Closed, Inactive, Expired, Unreachable, Throttled, ServerError, Forbidden, ...).',
    labelNames: ['kind', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of pool?.telemetry.restartCounts() ?? []) this.inc({ kind: c.kind, reason: c.reason }, c.count);
    },
  });
  new Counter({
    name: 'refwatch_relists_total',
    help: 'Relists of primed caches, by kind and reason (Expired: 410 Gone; WatchListUnsupported).',
    labelNames: ['kind', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of pool?.telemetry.relistCounts() ?? []) this.inc({ kind: c.kind, reason: c.reason }, c.count);
    },
  });
  new Gauge({
    name: 'refwatch_watch_last_event_age_seconds',
    help: 'Seconds since the last event, bookmark or list of each watched kind (the oldest, when a kind has several watches). A quiet watch still gets a bookmark about every minute.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      const ages = new Map<string, number>();
      for (const w of pool?.watches() ?? []) {
        if (w.lastEventAt === undefined) continue;
        const kind = kindKey(w.target);
        ages.set(kind, Math.max(ages.get(kind) ?? 0, (now - w.lastEventAt) / 1000));
      }
      for (const [kind, age] of ages) this.set({ kind }, age);
    },
  });
  const reconcileErrors = new Counter({
    name: 'refwatch_reconcile_errors_total',
    help: 'Reconciles that threw or rejected.',
    labelNames: ['controller'],
    registers: [registry],
  });
  const sseClients = new Gauge({
    name: 'refwatch_sse_clients',
    help: 'Connected SSE clients of /api/v1/stream.',
    registers: [registry],
  });

  // Controllers come and go (each demo run adds one and removes it): the series of a removed one are
  // dropped at the next scrape, so the registry and /metrics do not grow with every controller ever added.
  const perController = [adds, retries, queueLatency, workDuration, resolution, reconcileErrors];
  const controllers = new Set<string>();
  const forgetRemovedControllers = () => {
    if (!manager) return;
    for (const controller of controllers) {
      if (manager.controller(controller)) continue;
      for (const metric of perController) metric.remove({ controller });
      controllers.delete(controller);
    }
  };

  return {
    registry,
    queueMetrics(controller) {
      controllers.add(controller);
      return {
        onAdd: () => adds.inc({ controller }),
        onRetry: () => retries.inc({ controller }),
        onQueueLatency: (ms) => queueLatency.observe({ controller }, ms / 1000),
        onWorkDuration: (ms) => workDuration.observe({ controller }, ms / 1000),
      };
    },
    observeResolution(controller, latencyMs) {
      controllers.add(controller);
      if (latencyMs !== undefined) resolution.observe({ controller }, latencyMs / 1000);
    },
    reconcileErrors,
    sseClients,
    attach(m, p) {
      manager = m;
      pool = p;
    },
    detach() {
      manager = undefined;
      pool = undefined;
      registry.clear();
    },
  };
}
