import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { getMetrics, getReadyz } from '@/server/api';
import { parseConfig } from '@/server/config';
import { createMetrics, type Metrics } from '@/server/metrics';
import { startRuntime } from '@/server/runtime';
import { callHandler } from '../unit/server/call';
import { LogCapture } from '../unit/kube/helpers';
import { getTestCluster } from '../setup/cluster';

/*
 * What refwatch says when its watches break, against both clusters
 * (REFWATCH_TEST_CLUSTER=embedded|real): the log lines and metrics of a relist
 * after a real 410, and what /readyz answers while primed caches' watches fail.
 */

const clusterKind = inject('refwatchCluster').kind;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

describe(`watch telemetry (${clusterKind} cluster)`, () => {
  it('logs a 410 the way client-go does, then the relist, and counts both', async () => {
    const cluster = await getTestCluster();
    const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
    const ns = await cluster.newNamespace('telemetry');
    const elsewhere = await cluster.newNamespace('telemetry-other');
    await client.request('POST', configMaps(ns), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } },
    });

    const log = new LogCapture();
    const pool = new SharedInformerPool({
      client,
      logger: log,
      reflector: { backoff: { initialMs: 200, maxMs: 2000 } },
    });
    const manager = new Manager({ source: pool, statsIntervalMs: 0, logger: log });
    const metrics: Metrics = createMetrics();
    metrics.attach(manager, pool);
    cleanup.push(
      () => client.close(),
      () => metrics.detach(),
      () => manager.stop(),
    );
    const sub = pool.acquire({ group: '', kind: 'ConfigMap', namespace: ns }, () => {});
    await expect.poll(() => [sub.isPrimed(), sub.status().phase], { timeout: 15_000 }).toEqual([true, 'Watching']);

    // A write outside the watched namespace moves the cluster's resourceVersion past the watch's.
    await client.request('POST', configMaps(elsewhere), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'moves-rv' } },
    });
    if (cluster.restart) {
      // A restarted kube-apiserver's watch cache starts at the current resourceVersion: resuming from ours is 410.
      await cluster.restart();
    } else {
      expect(Number(sub.status().resourceVersion)).toBeLessThan(Number(await currentRv(client, elsewhere)));
      // One tick: the watch's reconnect finds its resourceVersion compacted.
      cluster.faults!.dropWatches();
      cluster.faults!.compactNow();
    }
    await expect.poll(() => log.text.find((l) => l.startsWith('info relisted')), { timeout: 60_000 }).toBeDefined();
    // The closing note quotes these.
    console.log(
      `log lines of a relist after a real 410 (${clusterKind}):\n${log.lines.map((l) => `  ${l.level} ${l.msg}`).join('\n')}`,
    );

    expect(log.text).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^info watch of ConfigMap in ${ns} ended with: .*too old resource version.*\\(410 Gone\\); relisting$`,
        ),
      ),
    );
    expect(log.text).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^info relisted ConfigMap in ${ns} after 410 Gone: 1 objects in \\d+ ms, 0 changed while unwatched$`,
        ),
      ),
    );
    expect(log.lines.find((l) => l.msg.startsWith('relisted'))!.fields).toMatchObject({
      kind: 'ConfigMap',
      namespace: ns,
      event: 'relisted',
      reason: 'Expired',
      objects: 1,
      changes: 0,
    });
    expect(pool.telemetry.relistCounts()).toEqual([{ kind: 'ConfigMap', reason: 'Expired', count: 1 }]);
    expect(sub.status().lists).toBe(2);

    const text = await metrics.registry.metrics();
    expect(text).toContain('refwatch_relists_total{kind="ConfigMap",reason="Expired"} 1');
    expect(text).toMatch(/^refwatch_watch_restarts_total\{kind="ConfigMap",reason="Expired"\} [1-9]/m);
    const age = Number(/^refwatch_watch_last_event_age_seconds\{kind="ConfigMap"\} (\S+)$/m.exec(text)?.[1]);
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
  }, 120_000);

  it.runIf(clusterKind === 'embedded')(
    'keeps /readyz at 200, degraded with the failing watches named, while primed caches cannot watch',
    async () => {
      const cluster = await getTestCluster();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-readyz-'));
      const kubeconfig = path.join(dir, 'kubeconfig.json');
      fs.writeFileSync(kubeconfig, JSON.stringify(cluster.kubeconfig), { mode: 0o600 });
      const rt = await startRuntime(
        parseConfig({
          REFWATCH_CLUSTER: 'kubeconfig',
          KUBECONFIG: kubeconfig,
          REFWATCH_EXAMPLE: 'none',
          REFWATCH_DEMO: 'off',
        }),
      );
      cleanup.push(
        () => fs.rmSync(dir, { recursive: true, force: true }),
        () => rt.dispose(),
        () => cluster.faults!.reset(),
      );
      const readyz = async () => {
        const r = await callHandler(rt, (r) => getReadyz(r), '/readyz');
        return { status: r.status, body: r.body as { status: string; reasons: string[]; warnings: string[] } };
      };
      // The core rule pack watches Pods, Ingresses, RoleBindings... cluster-wide.
      await expect.poll(async () => (await readyz()).body.status, { timeout: 30_000 }).toBe('ready');
      expect(rt.pool.watches().length).toBeGreaterThan(0);

      // Every watch is dropped and every request after fails with 500: the caches keep their last state.
      cluster.faults!.failNext(100_000, 500);
      cluster.faults!.dropWatches();
      await expect.poll(async () => (await readyz()).body.status, { timeout: 30_000 }).toBe('degraded');
      const degraded = await readyz();
      expect(degraded.status).toBe(200);
      expect(degraded.body.reasons).toEqual([]);
      expect(degraded.body.warnings).toContainEqual(
        expect.stringMatching(/^watch of Pod failing for \d+ s \(ServerError\): .*; serving the last known state$/),
      );

      cluster.faults!.reset();
      await expect
        .poll(async () => (await readyz()).body, { timeout: 60_000 })
        .toEqual({ status: 'ready', reasons: [], warnings: [] });
      const text = (await callHandler(rt, (r) => getMetrics(r), '/metrics')).text;
      expect(text).toMatch(/^refwatch_watch_restarts_total\{kind="Pod",reason="ServerError"\} [1-9]/m);
    },
    120_000,
  );
});

/** currentRv is the cluster's resourceVersion now, as a list answers it. */
async function currentRv(client: KubeClient, ns: string): Promise<string> {
  const list = await client.getJSON<{ metadata: { resourceVersion: string } }>(configMaps(ns), { limit: 1 });
  return list.metadata.resourceVersion;
}
