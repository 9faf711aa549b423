import { setMaxListeners } from 'node:events';
import { Manager, type WatchStatus } from '../../lib/engine';
import {
  KubeRequestError,
  SharedInformerPool,
  isAbortError,
  sleep,
  type KubeClient,
  type Logger,
  type SharedInformerPoolOptions,
  type WatchCount,
} from '../../lib/kube';
import type { KubeObject, ObjectKey } from '../../lib/model';
import { parseDemoConfig } from '../../server/demo/config';
import { CountedClient, type DemoClient, type RequestOptions } from '../../server/demo/counted-client';
import { demoPath, demoReadiness, secretPath } from '../../server/demo/kinds';
import { ReadinessSimulator } from '../../server/demo/readiness-simulator';
import { appManifest, planScenario, referentManifest, type PlannedApp } from '../../server/demo/scenario';
import { resolvedBy } from '../../server/demo/backoff-controller';
import { watchController } from '../../server/demo/watch-controller';

/**
 * A fault run: the demo's workload (Apps referring to Databases, Caches and
 * Secrets that turn Ready over a spread of time, some Apps deleted midway)
 * reconciled by refwatch's engine with the demo's watch controller, while a
 * fault is injected and cleared. It ends by checking every App against what
 * the cluster holds.
 */

export interface FaultWorkloadOptions {
  /** The generator's client, straight to kube-apiserver as admin: it creates, marks Ready and deletes. */
  admin: KubeClient;
  /** refwatch's client: through a proxy, or as a ServiceAccount, as the case needs. */
  refwatch: KubeClient;
  /** An existing, empty namespace. */
  namespace: string;
  apps: number;
  /** Databases and Caches turn Ready uniformly between these delays after every object exists. */
  readyAfter: { minMs: number; maxMs: number };
  seed: number;
  /** Options of every reflector of refwatch's pool (watch timeouts, retry delays). */
  reflector?: SharedInformerPoolOptions['reflector'];
  /** When the fault starts, ms after every object exists. */
  faultAfterMs: number;
  /** Injects the fault and resolves once it has cleared. */
  fault(run: RunningWorkload): Promise<void>;
  /** How long after the fault cleared and the last referent turned Ready the run waits for the last resolutions. */
  settleTimeoutMs: number;
}

/** RunningWorkload is what a fault sees of the run it disturbs. */
export interface RunningWorkload {
  manager: Manager;
  pool: SharedInformerPool;
  signal: AbortSignal;
  /** The log lines of refwatch's pool so far. */
  logs: string[];
}

export interface WatchCounts {
  lists: number;
  watchesOpened: number;
}

export interface FaultOutcome {
  apps: number;
  deleted: number;
  /** Apps whose referents all turned Ready, and which so must be resolved. */
  expectedResolved: number;
  /**
   * Apps whose final state is wrong: resolved on the server although a
   * referent never turned Ready (or before its last one did), or not
   * resolved although all did; or whose state in refwatch's change log says
   * otherwise than the server.
   */
  lost: number;
  /** Up to 10 of the lost Apps, each with why. */
  lostSamples: string[];
  /** Apps whose resolution was written more than once. */
  duplicated: number;
  /** Reconciles of an App that began after refwatch's cache had seen the App deleted. */
  reconcilesAfterDelete: number;
  /** Deleted Apps refwatch never saw go, or that still have references in its registry. */
  deletionsMissed: number;
  /**
   * Seconds from the fault clearing until the last App it held up is
   * resolved (see recoveryEnd); 0 when it held up none; undefined when one
   * was still unresolved settleTimeoutMs after the last referent turned Ready.
   */
  recoverySeconds: number | undefined;
  /** Apps waiting when the fault cleared: their referents all Ready, their resolution not yet in refwatch's App cache. */
  waitingAtClear: number;
  /** Relists of primed caches by kind and reason, as refwatch_relists_total counts them. */
  relists: WatchCount[];
  /** Lists and watches opened per kind, when the fault started, when it cleared, and at the end. */
  watchesAtStart: Record<string, WatchCounts>;
  watchesAtClear: Record<string, WatchCounts>;
  watchesAtEnd: Record<string, WatchCounts>;
  /** Watches refwatch holds at the end, per kind: one per kind by design. */
  watchesPerKind: Record<string, number>;
  /** Reconciles per App key, with when each began (epoch ms). */
  reconcileTimes: Map<ObjectKey, number[]>;
  faultStartedAt: number;
  faultClearedAt: number;
  logs: string[];
}

const CREATE_CONCURRENCY = 16;
/** A tenth of the Databases never turn Ready: their Apps must stay unresolved. */
const NEVER_READY_EVERY = 10;
/** One App in twenty is deleted while the run goes on. */
const DELETE_EVERY = 20;
const CONTROLLER = 'faults/watch';

/** runFaultWorkload runs the workload with its fault and returns what the end checks found. */
export async function runFaultWorkload(o: FaultWorkloadOptions): Promise<FaultOutcome> {
  const abort = new AbortController();
  // Every sleep and request of the run listens on it.
  setMaxListeners(0, abort.signal);
  const logs: string[] = [];
  const generator = patient(o.admin, abort.signal);
  const databases = Math.max(1, Math.round(o.apps / 5));
  const config = parseDemoConfig({
    apps: o.apps,
    databases,
    caches: databases,
    secrets: Math.max(1, Math.round(o.apps / 10)),
    readyAfter: { distribution: 'uniform', ...o.readyAfter },
    seed: o.seed,
  });
  const scenario = planScenario(config, o.namespace, o.seed);
  const neverReady = new Set(
    scenario.databases.filter((_, i) => i % NEVER_READY_EVERY === NEVER_READY_EVERY - 1).map((d) => d.name),
  );
  const toDelete = new Set(scenario.apps.filter((_, i) => i % DELETE_EVERY === DELETE_EVERY - 1).map((a) => a.name));

  /** When each referent's Ready patch was sent (status.readyAt), and when it was answered. */
  const readyAt = new Map<string, number>();
  const readyAnsweredAt = new Map<string, number>();
  /** When each App's resolution was written (answered), per write. */
  const resolutions = new Map<ObjectKey, number[]>();
  /**
   * When refwatch's App cache first held each App's resolution. This, not
   * the write's answer, says an App is resolved: a write the server applied
   * but whose answer a reset connection lost is seen here, and not rewritten.
   */
  const resolvedSeen = new Map<ObjectKey, number>();
  const reconcileTimes = new Map<ObjectKey, number[]>();
  const goneAt = new Map<ObjectKey, number>();
  let reconcilesAfterDelete = 0;
  let generatorError: Error | undefined;

  const pool = new SharedInformerPool({
    client: o.refwatch,
    logger: collectingLogger(logs),
    ...(o.reflector ? { reflector: o.reflector } : {}),
  });
  const manager = new Manager({
    source: pool,
    readiness: demoReadiness,
    grace: 60_000,
    statsIntervalMs: 0,
    logger: collectingLogger(logs),
  });
  const app = (name: string): ObjectKey => `App.demo.refwatch.dev/${o.namespace}/${name}`;
  const controller = watchController({
    name: CONTROLLER,
    namespace: o.namespace,
    measuring: () => true,
    client: new CountedClient(o.refwatch),
    workers: 8,
    wakeOn: 'readiness',
    onReconcile: (key) => {
      const at = Date.now();
      const times = reconcileTimes.get(key) ?? [];
      times.push(at);
      reconcileTimes.set(key, times);
      if (goneAt.has(key)) reconcilesAfterDelete++;
    },
    onResolved: (key) => resolutions.set(key, [...(resolutions.get(key) ?? []), Date.now()]),
    reconcilesOf: (key) => reconcileTimes.get(key)?.length ?? 0,
    onRequest: () => undefined,
  });
  manager.addController(controller);
  // A second subscriber to the App watch (shared, not a second watch) tells when refwatch's cache saw each App go.
  const appWatch = pool.acquire({ group: 'demo.refwatch.dev', kind: 'App', namespace: o.namespace }, (event) => {
    if (event.type === 'deleted') goneAt.set(event.key, Date.now());
    else if (
      (event.type === 'added' || event.type === 'updated') &&
      !resolvedSeen.has(event.key) &&
      resolvedBy(event.object, 'watch')
    )
      resolvedSeen.set(event.key, Date.now());
  });
  const simulator = new ReadinessSimulator({
    client: generator,
    namespace: o.namespace,
    signal: abort.signal,
    onReady: (kind, name, at) => {
      readyAt.set(`${kind}/${name}`, at);
      readyAnsweredAt.set(`${kind}/${name}`, Date.now());
    },
    onError: (kind, name, e) =>
      (generatorError ??= new Error(
        `marking ${kind} ${o.namespace}/${name} Ready failed: ${e instanceof Error ? e.message : String(e)}`,
      )),
  });
  const timers = new Set<NodeJS.Timeout>();
  const deletions = new Set<Promise<void>>();
  try {
    manager.start();
    await until(
      () => pool.watches().some((w) => w.target.kind === 'App' && w.primed),
      60_000,
      'the App watch to prime',
      abort.signal,
    );

    await eachLimited(scenario.apps, CREATE_CONCURRENCY, (a) =>
      generator
        .request('POST', demoPath('App', o.namespace), {
          body: appManifest(o.namespace, 'faults', a),
          signal: abort.signal,
        })
        .then(() => undefined),
    );
    await eachLimited(
      [...scenario.secrets, ...scenario.databases, ...scenario.caches],
      CREATE_CONCURRENCY,
      async (p) => {
        await generator.request('POST', p.kind === 'Secret' ? secretPath(o.namespace) : demoPath(p.kind, o.namespace), {
          body: referentManifest(o.namespace, 'faults', p),
          signal: abort.signal,
        });
        if (p.kind === 'Secret') {
          readyAt.set(`Secret/${p.name}`, Date.now());
          readyAnsweredAt.set(`Secret/${p.name}`, Date.now());
        }
      },
    );
    const startedAt = Date.now();
    for (const p of [...scenario.databases, ...scenario.caches]) {
      if (!neverReady.has(p.name)) simulator.schedule(p.kind as 'Database' | 'Cache', p.name, p.readyAfterMs);
    }
    // Deletions spread over the readiness window, so that some fall inside the fault.
    const doomed = scenario.apps.filter((a) => toDelete.has(a.name));
    doomed.forEach((a, i) => {
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          const p = generator.request('DELETE', demoPath('App', o.namespace, a.name), { signal: abort.signal }).then(
            () => undefined,
            (e: unknown) => {
              if (!isAbortError(e)) generatorError ??= new Error(`deleting App ${a.name} failed: ${String(e)}`);
            },
          );
          deletions.add(p);
          void p.finally(() => deletions.delete(p));
        },
        Math.round(((i + 0.5) / doomed.length) * o.readyAfter.maxMs),
      );
      timers.add(timer);
    });

    await sleep(Math.max(0, startedAt + o.faultAfterMs - Date.now()), abort.signal);
    const faultStartedAt = Date.now();
    const watchesAtStart = watchCounts(pool.watches());
    await o.fault({ manager, pool, signal: abort.signal, logs });
    const faultClearedAt = Date.now();
    const watchesAtClear = watchCounts(pool.watches());

    const expected = scenario.apps.filter((a) => !toDelete.has(a.name) && !neverReady.has(a.database));
    const waitingAtClear = expected.filter(
      (a) => (lastReadyAt(a, readyAnsweredAt) ?? Infinity) <= faultClearedAt && !resolvedSeen.has(app(a.name)),
    );
    // Every referent that will turn Ready has, every deletion went out, and every expected App is resolved.
    const done = () => {
      if (generatorError) throw generatorError;
      return (
        simulator.pending() === 0 &&
        timers.size === 0 &&
        deletions.size === 0 &&
        expected.every((a) => resolvedSeen.has(app(a.name)))
      );
    };
    const settled = await until(
      done,
      o.readyAfter.maxMs + o.settleTimeoutMs,
      'every expected App to resolve',
      abort.signal,
      false,
    );
    const recoveredAt = recoveryEnd(
      expected,
      waitingAtClear,
      faultClearedAt,
      (a) => resolvedSeen.get(app(a.name)),
      (a) => lastReadyAt(a, readyAnsweredAt),
    );
    // Late reconciles of deleted Apps would show up in this pause.
    await sleep(1_000, abort.signal);

    const lostSamples: string[] = [];
    let lost = 0;
    const server = await listApps(generator, o.namespace, abort.signal);
    for (const a of scenario.apps) {
      if (toDelete.has(a.name)) continue;
      const key = app(a.name);
      const onServer = server.get(a.name);
      const written = onServer ? resolvedBy(onServer, 'watch')?.resolvedAt : undefined;
      const readyBy = lastReadyAt(a, readyAt);
      const should = !neverReady.has(a.database) && readyBy !== undefined;
      const state = manager.changelog.get('referrer', `${CONTROLLER}|${key}`)?.state;
      let why: string | undefined;
      if (!onServer) why = 'missing on the server';
      else if (should && written === undefined)
        why = `not resolved although its referents were all Ready by ${new Date(readyBy).toISOString()}`;
      else if (!should && written !== undefined)
        why = `resolved at ${written} although ${neverReady.has(a.database) ? `Database ${a.database} never turned Ready` : 'a referent is not Ready'}`;
      else if (written !== undefined && readyBy !== undefined && Date.parse(written) < readyBy - 1)
        why = `resolved at ${written}, before its last referent turned Ready`;
      else if (should !== (state === 'Resolved')) why = `the change log says ${state ?? 'nothing'}`;
      if (why) {
        lost++;
        if (lostSamples.length < 10) lostSamples.push(`${key}: ${why}`);
      }
    }
    let deletionsMissed = 0;
    for (const a of doomed) {
      const key = app(a.name);
      if (!goneAt.has(key) || manager.registry.referencesOf(CONTROLLER, key).length > 0) deletionsMissed++;
    }
    if (!settled && lostSamples.length === 0)
      lostSamples.push('the run did not settle within its timeout, yet every App is in its right state at the end');
    return {
      apps: scenario.apps.length,
      deleted: doomed.length,
      expectedResolved: expected.length,
      lost,
      lostSamples,
      duplicated: [...resolutions.values()].filter((times) => times.length > 1).length,
      reconcilesAfterDelete,
      deletionsMissed,
      recoverySeconds: Number.isFinite(recoveredAt) ? Math.max(0, recoveredAt - faultClearedAt) / 1000 : undefined,
      waitingAtClear: waitingAtClear.length,
      relists: pool.telemetry.relistCounts(),
      watchesAtStart,
      watchesAtClear,
      watchesAtEnd: watchCounts(pool.watches()),
      watchesPerKind: watchesPerKind(pool.watches()),
      reconcileTimes,
      faultStartedAt,
      faultClearedAt,
      logs,
    };
  } finally {
    abort.abort();
    for (const t of timers) clearTimeout(t);
    await simulator.stop();
    await Promise.allSettled([...deletions]);
    await appWatch.release();
    await manager.stop();
    await pool.stop();
  }
}

/** An App resolved within this of its last referent turning Ready (or of the fault clearing) was not held up by the fault. */
export const NORMAL_LAG_MS = 2_000;

/**
 * recoveryEnd is when the last App the fault held up was resolved: those
 * waiting when it cleared, and those resolved after it cleared but more than
 * NORMAL_LAG_MS after the later of their last referent turning Ready and the
 * clearing (a cache still stale, a watch still backing off). It is clearedAt
 * when the fault held up none, and Infinity when one is still unresolved.
 */
export function recoveryEnd<A>(
  expected: A[],
  waitingAtClear: A[],
  clearedAt: number,
  resolvedAt: (a: A) => number | undefined,
  lastReady: (a: A) => number | undefined,
): number {
  const held = new Set(waitingAtClear);
  for (const a of expected) {
    const at = resolvedAt(a);
    const ready = lastReady(a);
    if (at === undefined || ready === undefined) continue;
    if (at > clearedAt && at - Math.max(ready, clearedAt) > NORMAL_LAG_MS) held.add(a);
  }
  let end = clearedAt;
  for (const a of held) end = Math.max(end, resolvedAt(a) ?? Infinity);
  return end;
}

/** lastReadyAt is when the last of an App's referents turned Ready, or undefined while one is not. */
function lastReadyAt(a: PlannedApp, readyAt: Map<string, number>): number | undefined {
  const times = [
    readyAt.get(`Database/${a.database}`),
    readyAt.get(`Cache/${a.cache}`),
    readyAt.get(`Secret/${a.secret}`),
  ];
  return times.some((t) => t === undefined) ? undefined : Math.max(...(times as number[]));
}

function watchCounts(watches: WatchStatus[]): Record<string, WatchCounts> {
  const out: Record<string, WatchCounts> = {};
  for (const w of watches) {
    const k = w.target.kind;
    const c = (out[k] ??= { lists: 0, watchesOpened: 0 });
    c.lists += w.lists;
    c.watchesOpened += w.watchesOpened;
  }
  return out;
}

function watchesPerKind(watches: WatchStatus[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of watches) out[w.target.kind] = (out[w.target.kind] ?? 0) + 1;
  return out;
}

async function listApps(client: DemoClient, namespace: string, signal: AbortSignal): Promise<Map<string, KubeObject>> {
  const list = await client.getJSON<{ items: KubeObject[] }>(demoPath('App', namespace), {}, signal);
  return new Map(list.items.map((a) => [a.metadata.name, a]));
}

/**
 * patient retries a request while the API server is unreachable, failing or
 * throttling, as the cluster's own writers (a readiness controller, a user's
 * kubectl) keep at it through an outage; anything else fails at once.
 */
function patient(client: KubeClient, signal: AbortSignal): DemoClient {
  const retrying = async <T>(send: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await send();
      } catch (e) {
        if (
          !(e instanceof KubeRequestError) ||
          !(e.status === 0 || e.status === 429 || e.status >= 500) ||
          signal.aborted
        )
          throw e;
        await sleep(250, signal);
      }
    }
  };
  return {
    request: (method: string, path: string, opts?: RequestOptions) =>
      retrying(() => client.request(method, path, opts)),
    getJSON: <T>(path: string, query?: Parameters<KubeClient['getJSON']>[1], s?: AbortSignal) =>
      retrying(() => client.getJSON<T>(path, query, s)),
  };
}

/** until polls cond every 100 ms; past timeoutMs it throws, or returns false when told not to. */
async function until(
  cond: () => boolean,
  timeoutMs: number,
  what: string,
  signal: AbortSignal,
  throwOnTimeout = true,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) {
      if (throwOnTimeout) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      return false;
    }
    await sleep(100, signal);
  }
  return true;
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function collectingLogger(lines: string[]): Logger {
  const add = (level: string) => (msg: string) => {
    lines.push(`${new Date().toISOString()} ${level} ${msg}`);
  };
  return { debug: () => undefined, info: add('info'), warn: add('warn'), error: add('error') };
}
