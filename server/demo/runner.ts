import { randomBytes } from 'node:crypto';
import type { Manager, WakeOn } from '../../lib/engine';
import { RefwatchError } from '../../lib/model';
import { parseDemoConfig } from './config';
import type { DemoClient } from './counted-client';
import { DemoRun, type DemoRunView } from './run';
import { DEMO_API_VERSION, DEMO_GROUP } from './scenario';

export interface DemoRunnerOptions {
  /** The engine the watch controller joins; it must judge the demo's kinds by their Ready condition (demoReadiness). */
  manager: Manager;
  /** Used for every object the runs make and read; each controller counts its requests on its own wrapper. */
  client: DemoClient;
  /** The API server's own request counts, to cross-check the controllers' counts (embedded cluster). */
  serverRequestCount?: () => Record<string, number>;
  /** Create the demo's CRDs when the cluster lacks them; otherwise a run fails and says how to install them. */
  installCrds?: boolean;
  /** Workers per controller, the same for both (default 8, as kube-controller-manager's --concurrent-*-syncs range). */
  workers?: number;
  /** What wakes the watch controller's Apps when a referent changes (default 'resolution': an App waits until all its referents are Ready). */
  wakeOn?: WakeOn;
  /**
   * Runs kept with their objects and watch controllers (default 5); starting
   * one more deletes the oldest, its watch controller included.
   */
  retainRuns?: number;
}

/**
 * DemoRunner starts, lists, stops and deletes fast-vs-backoff runs. One run
 * is active at a time; each run lives in its own namespace with its own watch
 * controller, kept after the run ends so the dashboard shows its graph, and
 * deleting it leaves no object, watch or timer behind.
 */
export class DemoRunner {
  private readonly runs = new Map<string, DemoRun>();
  private readonly deleting = new Map<string, Promise<void>>();
  private disposed = false;

  constructor(private readonly opts: DemoRunnerOptions) {
    const probe = { apiVersion: DEMO_API_VERSION, kind: 'Database', metadata: { name: 'probe' } };
    if (opts.manager.referenceControllers.readinessOf(`Database.${DEMO_GROUP}`)(probe).ready) {
      throw new RefwatchError(
        'InvalidDemoSetup',
        `the manager judges a Database without a Ready condition ready: build it with readiness: demoReadiness (server/demo)`,
        { field: 'readiness' },
      );
    }
  }

  /** start validates config and starts a run; it throws InvalidDemoConfig naming the field, or DemoRunActive while a run is active. */
  start(config: unknown): DemoRun {
    if (this.disposed) throw new RefwatchError('DemoStopped', 'the demo runner is stopped');
    const parsed = parseDemoConfig(config);
    const active = [...this.runs.values()].find((r) => r.isActive());
    if (active) {
      throw new RefwatchError(
        'DemoRunActive',
        `run ${active.id} is still ${active.phase.toLowerCase()}: wait for it to finish, or stop it with POST /api/v1/demo/runs/${active.id}/stop`,
        { field: 'id' },
      );
    }
    // Runs already being deleted do not count against the bound.
    const kept = [...this.runs.values()].filter((r) => !this.deleting.has(r.id));
    const retain = Math.max(1, this.opts.retainRuns ?? 5);
    for (const old of kept.slice(0, Math.max(0, kept.length - retain + 1))) void this.delete(old.id).catch(() => {});
    // A kept run holds its id (namespace, watch controller) until deleted.
    let id: string;
    do id = randomBytes(3).toString('hex');
    while (this.runs.has(id));
    const seed = parsed.seed ?? randomBytes(4).readUInt32LE(0);
    const run = new DemoRun(id, parsed, seed, {
      manager: this.opts.manager,
      client: this.opts.client,
      workers: this.opts.workers ?? 8,
      installCrds: this.opts.installCrds ?? false,
      serverRequestCount: this.opts.serverRequestCount,
      wakeOn: this.opts.wakeOn ?? 'resolution',
    });
    this.runs.set(id, run);
    return run;
  }

  /** list returns every run kept, oldest first. */
  list(): DemoRunView[] {
    return [...this.runs.values()].map((r) => r.view());
  }

  get(id: string): DemoRun | undefined {
    return this.runs.get(id);
  }

  /** active is the run creating or running now, if any. */
  active(): DemoRun | undefined {
    return [...this.runs.values()].find((r) => r.isActive());
  }

  private need(id: string): DemoRun {
    const run = this.runs.get(id);
    if (!run) {
      const known = [...this.runs.keys()];
      throw new RefwatchError(
        'DemoRunNotFound',
        `no demo run ${id}${known.length ? `; runs: ${known.join(', ')}` : '; start one with POST /api/v1/demo/runs'}`,
        { field: 'id' },
      );
    }
    return run;
  }

  /**
   * stop halts a run (phase Stopped if it was still going) and keeps its
   * objects, results and watch controller until delete. Idempotent: a run
   * that already ended is returned as it is.
   */
  async stop(id: string): Promise<DemoRun> {
    const run = this.need(id);
    await run.halt('Stopped');
    return run;
  }

  /**
   * delete halts a run, removes its watch controller, deletes every object it
   * made and its namespace, and forgets it. The engine then holds none of its
   * references; reference controllers no other run uses are cancelled after grace.
   */
  delete(id: string): Promise<void> {
    let p = this.deleting.get(id);
    if (p) return p;
    const run = this.need(id);
    p = (async () => {
      try {
        await run.cleanup();
        const left = this.opts.manager.registry.referrers(run.watchController).length;
        if (left > 0)
          throw new RefwatchError(
            'DemoCleanup',
            `${left} referrers of ${run.watchController} remain after its removal`,
          );
      } finally {
        this.runs.delete(id);
        this.deleting.delete(id);
      }
    })();
    this.deleting.set(id, p);
    return p;
  }

  /** dispose deletes every run; awaited. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.allSettled([...this.runs.keys()].map((id) => this.delete(id)));
    await Promise.allSettled([...this.deleting.values()]);
  }
}
