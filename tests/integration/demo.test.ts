import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { stuck } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import type { KubeObject } from '@/lib/model';
import { DemoRunner, demoPath, demoReadiness, type DemoRun } from '@/server/demo';
import { getTestCluster, type TestCluster } from '../setup/cluster';

const kind = inject('refwatchCluster').kind;
const GRACE_MS = 300;
const DEMO_KINDS = [
  'Database.demo.refwatch.dev',
  'Cache.demo.refwatch.dev',
  'Secret',
  'PostgresDatabase.db.example.com',
];

let cluster: TestCluster;
let client: KubeClient;
let manager: Manager;
let runner: DemoRunner;

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${kind} test cluster` });
  manager = new Manager({
    source: new SharedInformerPool({ client }),
    readiness: demoReadiness,
    grace: GRACE_MS,
    statsIntervalMs: 0,
  });
  manager.start();
  runner = new DemoRunner({ manager, client, installCrds: true });
});

// A failed test must not leave its run active for the next one.
afterEach(async () => {
  for (const r of runner.list()) await runner.delete(r.id);
});

afterAll(async () => {
  await runner?.dispose();
  await manager?.stop();
});

/** No watch of the demo's kinds is left in the engine: every reference controller of them is cancelled. */
async function demoWatchesGone(): Promise<void> {
  await expect
    .poll(
      () =>
        manager.source
          .watches()
          .filter(
            (w) =>
              DEMO_KINDS.includes(w.target.group ? `${w.target.kind}.${w.target.group}` : w.target.kind) ||
              w.target.kind === 'App',
          ).length,
      { timeout: 15_000 },
    )
    .toBe(0);
}

async function finish(run: DemoRun): Promise<ReturnType<DemoRun['view']>> {
  await run.finished;
  return run.view({ latencies: true });
}

/** The run's Apps on the engine: its watch controller's referrers and their states. */
function graphOf(run: DemoRun): { controller: boolean; referrers: number; references: number; states: string[] } {
  const referrers = manager.registry.referrers(run.watchController);
  const states = referrers.map(
    (r) => manager.changelog.get('referrer', `${run.watchController}|${r.key}`)?.state ?? 'none',
  );
  let references = 0;
  for (const r of referrers) references += manager.registry.referencesOf(run.watchController, r.key).length;
  return {
    controller: manager.controllerNames().includes(run.watchController),
    referrers: referrers.length,
    references,
    states,
  };
}

/** Waits past the grace period, so a reference controller without references would have been cancelled. */
const pastGrace = () => new Promise((resolve) => setTimeout(resolve, GRACE_MS * 4));

describe(`demo on the ${kind} cluster`, () => {
  it('resolves a small run, the watch controller sooner than the backoff one', async () => {
    const run = runner.start({
      apps: 20,
      readyAfter: { distribution: 'uniform', minMs: 200, maxMs: 1000 },
      timeoutMs: 60_000,
      seed: 1,
    });
    const view = await finish(run);
    expect(view.error).toBeUndefined();
    expect(view.phase).toBe('Completed');
    expect(view.progress.resolved).toEqual({ watch: 20, backoff: 20 });
    expect(view.latencies!.watch).toHaveLength(20);
    expect(view.latencies!.backoff).toHaveLength(20);
    expect(view.results.modes.watch.latencyMs!.p50).toBeLessThan(view.results.modes.backoff.latencyMs!.p50);
    expect(view.results.modes.watch.latencyMs!.max).toBeGreaterThanOrEqual(0);
    // The watch controller reads referents from its caches; backoff GETs them on every retry.
    expect(view.results.modes.backoff.requests.reconcile).toBeGreaterThan(view.results.modes.watch.requests.reconcile);

    // Both controllers recorded their resolution on the App itself.
    const app = await client.getJSON<KubeObject>(demoPath('App', run.namespace, 'shop-0'));
    const resolvedBy = (app.status as { resolvedBy: Record<string, { resolvedAt: string; reconciles: number }> })
      .resolvedBy;
    expect(Object.keys(resolvedBy).sort()).toEqual(['backoff', 'watch']);
    expect(resolvedBy.watch!.resolvedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(resolvedBy.watch!.reconciles).toBeGreaterThanOrEqual(1);
    const db = await client.getJSON<KubeObject>(demoPath('Database', run.namespace, 'orders-0'));
    expect(
      (db.status as { readyAt: string; conditions: { type: string; status: string }[] }).conditions,
    ).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));

    const csv = run.exportCsv().trim().split('\r\n');
    expect(csv).toHaveLength(21);
    expect(csv[0]).toContain('watchLatencyMs');

    // Completed, the run keeps its watch controller: the engine (and the dashboard) still holds its resolved graph.
    expect(run.pendingTimers()).toBe(0);
    expect(graphOf(run)).toEqual({
      controller: true,
      referrers: 20,
      references: 60,
      states: Array(20).fill('Resolved'),
    });
    await pastGrace();
    for (const k of ['Database.demo.refwatch.dev', 'Cache.demo.refwatch.dev', 'Secret'])
      expect(manager.referenceControllers.state(k)).toBe('Active');

    await runner.delete(run.id);
    expect(await run.remaining()).toBe(0);
    expect(runner.get(run.id)).toBeUndefined();
    expect(graphOf(run)).toEqual({ controller: false, referrers: 0, references: 0, states: [] });
  });

  it('rejects a second run while one is active', async () => {
    const run = runner.start({ apps: 2, readyAfter: { distribution: 'fixed', ms: 2000 }, timeoutMs: 30_000 });
    expect(() => runner.start({ apps: 2 })).toThrow(
      new RegExp(`still (creating|running).*POST /api/v1/demo/runs/${run.id}/stop`),
    );
    await runner.delete(run.id);
  });

  it('leaves dangling Apps unresolved, reports them stuck and keeps them out of the percentiles', async () => {
    const run = runner.start({
      apps: 9,
      readyAfter: { distribution: 'fixed', ms: 1500 },
      dangling: { typo: 1 / 9, wrongNamespace: 1 / 9, kindNotInstalled: 1 / 9 },
      timeoutMs: 60_000,
      seed: 2,
    });
    const dangling = run.scenario.apps
      .filter((a) => a.dangling)
      .map((a) => `App.demo.refwatch.dev/${run.namespace}/${a.name}`);
    expect(dangling).toHaveLength(3);
    // While the run goes on, the engine's stuck diagnosis names each dangling App.
    await expect
      .poll(() => stuck(manager, { olderThan: 0 }).filter((s) => dangling.includes(s.key)).length, { timeout: 15_000 })
      .toBe(3);
    const typo = run.scenario.apps.find((a) => a.dangling === 'typo')!;
    // Apps are created before their referents: the suggestion comes once the Database exists.
    await expect
      .poll(() => stuck(manager, { olderThan: 0 }).find((s) => s.key.endsWith(`/${typo.name}`))?.message, {
        timeout: 15_000,
      })
      .toContain(`did you mean ${typo.database}`);

    const view = await finish(run);
    expect(view.phase).toBe('Completed');
    expect(view.progress.apps).toEqual({ total: 9, resolvable: 6, dangling: 3 });
    expect(view.progress.resolved).toEqual({ watch: 6, backoff: 6 });
    expect(view.latencies!.watch).toHaveLength(6);
    expect(view.results.dangling.byKind).toEqual({ typo: 1, wrongNamespace: 1, kindNotInstalled: 1 });
    expect(view.results.dangling.apps.map((d) => d.app).sort()).toEqual([...dangling].sort());
    for (const d of view.results.dangling.apps) expect(d.reason).toBeTruthy();
    await runner.delete(run.id);
    await demoWatchesGone();
  });

  it('cancels the Cache reference controller when churn drops every cacheRef', async () => {
    const run = runner.start({
      apps: 5,
      readyAfter: { distribution: 'fixed', ms: 4000 },
      churn: { dropKind: 'Cache', afterMs: 500 },
      timeoutMs: 60_000,
    });
    const rcs = manager.referenceControllers;
    await expect.poll(() => run.phase, { timeout: 15_000 }).toBe('Running');
    // Started: on a busy machine its watch may still be priming as the run turns Running (seen in CI).
    expect(['Priming', 'Active']).toContain(rcs.state('Cache.demo.refwatch.dev'));
    await expect.poll(() => rcs.state('Cache.demo.refwatch.dev'), { timeout: 15_000 }).toBe('Cancelled');
    // The run still waits on its Databases, whose reference controller stays.
    expect(run.phase).toBe('Running');
    expect(rcs.state('Database.demo.refwatch.dev')).toBe('Active');
    const view = await finish(run);
    expect(view.phase).toBe('Completed');
    expect(view.results.churn).toMatchObject({ dropKind: 'Cache', apps: 5 });
    expect(Math.min(...view.latencies!.watch, ...view.latencies!.backoff)).toBeGreaterThanOrEqual(0);
    const app = await client.getJSON<KubeObject>(demoPath('App', run.namespace, 'shop-0'));
    expect((app.spec as Record<string, unknown>).cacheRef).toBeUndefined();
    // The ended run's graph stays: two references per App, the Cache controller still shown Cancelled.
    await pastGrace();
    expect(graphOf(run)).toMatchObject({ controller: true, referrers: 5, references: 10 });
    expect(rcs.state('Cache.demo.refwatch.dev')).toBe('Cancelled');
    expect(rcs.state('Database.demo.refwatch.dev')).toBe('Active');
    await runner.delete(run.id);
    await expect.poll(() => rcs.state('Database.demo.refwatch.dev'), { timeout: 10_000 }).toBe('Cancelled');
  });

  it("keeps a stopped run's objects, exports and graph until it is deleted", async () => {
    const run = runner.start({
      apps: 10,
      readyAfter: { distribution: 'uniform', minMs: 20_000, maxMs: 30_000 },
      timeoutMs: 120_000,
      seed: 3,
    });
    await expect.poll(() => run.phase, { timeout: 30_000 }).toBe('Running');
    await expect.poll(() => graphOf(run).references, { timeout: 15_000 }).toBe(30);
    // Every referent exists, none is Ready yet: each App waits.
    await expect.poll(() => graphOf(run).states.filter((s) => s === 'Waiting').length, { timeout: 15_000 }).toBe(10);

    const stopped = await runner.stop(run.id);
    expect(stopped).toBe(run);
    expect(run.phase).toBe('Stopped');
    expect(run.pendingTimers()).toBe(0);
    expect(await run.remaining()).toBe(40);
    expect(run.exportCsv().trim().split('\r\n')).toHaveLength(11);
    expect(JSON.parse(run.exportJson())).toMatchObject({ id: run.id, phase: 'Stopped', apps: expect.any(Array) });
    // Stopping again changes nothing; starting another run is allowed.
    expect((await runner.stop(run.id)).phase).toBe('Stopped');
    expect(runner.active()).toBeUndefined();

    // Its watch controller stays, so its Apps still show waiting on their referents, whose watches stay.
    await pastGrace();
    expect(graphOf(run)).toEqual({
      controller: true,
      referrers: 10,
      references: 30,
      states: Array(10).fill('Waiting'),
    });
    expect(manager.referenceControllers.state('Database.demo.refwatch.dev')).toBe('Active');
    expect(run.view().progress.resolved).toEqual({ watch: 0, backoff: 0 });

    await runner.delete(run.id);
    expect(await run.remaining()).toBe(0);
    expect(graphOf(run)).toEqual({ controller: false, referrers: 0, references: 0, states: [] });
    await demoWatchesGone();
  });

  it('keeps the latest runs and deletes the oldest with its watch controller', async () => {
    const small = new DemoRunner({ manager, client, installCrds: true, retainRuns: 2 });
    try {
      const runs: DemoRun[] = [];
      for (let i = 0; i < 3; i++) {
        const run = small.start({ apps: 1, readyAfter: { distribution: 'fixed', ms: 100 }, timeoutMs: 30_000 });
        runs.push(run);
        expect((await finish(run)).phase).toBe('Completed');
      }
      const [oldest, ...kept] = runs as [DemoRun, DemoRun, DemoRun];
      await expect.poll(() => small.get(oldest.id), { timeout: 15_000 }).toBeUndefined();
      expect(await oldest.remaining()).toBe(0);
      expect(graphOf(oldest).controller).toBe(false);
      expect(small.list().map((r) => r.id)).toEqual(kept.map((r) => r.id));
      for (const r of kept) expect(graphOf(r)).toMatchObject({ controller: true, referrers: 1, references: 3 });
    } finally {
      await small.dispose();
    }
    expect(manager.controllerNames().filter((n) => n.startsWith('demo/watch'))).toEqual([]);
  });

  it('leaves no object, watch or timer behind when stopped halfway', async () => {
    await demoWatchesGone();
    const before = await cluster.openWatches();
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const timersBefore = timeouts();

    const run = runner.start({
      apps: 30,
      readyAfter: { distribution: 'uniform', minMs: 20_000, maxMs: 30_000 },
      timeoutMs: 120_000,
    });
    await expect.poll(() => run.phase, { timeout: 30_000 }).toBe('Running');
    await expect
      .poll(() => manager.referenceControllers.state('Database.demo.refwatch.dev'), { timeout: 15_000 })
      .toBe('Active');
    expect(run.pendingTimers()).toBeGreaterThan(0);
    // The run's Database watch reached the server. Not "more than before": a watch the previous test closed can
    // still be counted in `before` and be gone by now, as seen in CI.
    expect(manager.source.watches().some((w) => w.target.kind === 'Database' && w.primed)).toBe(true);
    await expect
      .poll(async () => (await cluster.openWatches())['databases.demo.refwatch.dev'] ?? 0, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);

    await runner.delete(run.id);
    expect(run.phase).toBe('Stopped');
    expect(await run.remaining()).toBe(0);
    expect(run.pendingTimers()).toBe(0);
    expect(manager.controllerNames()).not.toContain(run.watchController);
    expect(manager.registry.referrers(run.watchController)).toHaveLength(0);
    for (const k of ['Database.demo.refwatch.dev', 'Cache.demo.refwatch.dev', 'Secret']) {
      await expect.poll(() => manager.referenceControllers.state(k), { timeout: 10_000 }).toBe('Cancelled');
    }
    await demoWatchesGone();
    for (const resource of [
      'apps.demo.refwatch.dev',
      'databases.demo.refwatch.dev',
      'caches.demo.refwatch.dev',
      'secrets',
    ]) {
      await expect
        .poll(async () => (await cluster.openWatches())[resource] ?? 0, { timeout: 15_000 })
        .toBeLessThanOrEqual(before[resource] ?? 0);
    }
    // Process-wide: idle keep-alive connections hold socket timers until they close (5 s on each end).
    // Checked between sleeps, since expect.poll's own timers would count.
    for (let i = 0; i < 60 && timeouts() > timersBefore; i++) await new Promise((resolve) => setTimeout(resolve, 500));
    expect(timeouts()).toBeLessThanOrEqual(timersBefore);
  });
});
