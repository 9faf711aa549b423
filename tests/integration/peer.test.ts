import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeClient } from '@/lib/kube';
import { IMPLEMENTATIONS, prepareCluster, runPeer, type PeerCluster } from '@/bench/peer/peer-run';
import { getTestCluster } from '../setup/cluster';

// The peer benchmark's smoke test: the Go binary builds (cached per machine by
// bench/peer/build.sh) and every implementation resolves every App of a small
// run, so the comparison cannot rot. It needs kube-apiserver's /metrics, so
// it runs on the real cluster only. Timings are the benchmark's business.

const kind = inject('refwatchCluster').kind;
const APPS = 20;

describe.runIf(kind === 'real')('peer benchmark (smoke)', () => {
  let dir: string;
  let cluster: PeerCluster;
  let goBinary: string;

  beforeAll(async () => {
    const build = spawnSync('bash', [path.resolve(import.meta.dirname, '../../bench/peer/build.sh')], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    goBinary = build.stdout.trim().split('\n').pop() ?? '';
    if (build.status !== 0 || !goBinary)
      throw new Error(`bench/peer/build.sh exited with ${build.status ?? build.signal}: see its output above`);
    const test = await getTestCluster();
    const provided = inject('refwatchCluster');
    if (provided.kind !== 'real') throw new Error('unreachable: the real cluster was selected');
    dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-peer-'));
    const kubeconfigPath = path.join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfigPath, stringify(test.kubeconfig), { mode: 0o600 });
    const client = KubeClient.fromKubeconfig(test.kubeconfig, { source: 'real test cluster' });
    cluster = { endpoint: { url: provided.url, token: provided.token, ca: provided.ca }, kubeconfigPath, client };
    await prepareCluster(client);
  }, 900_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(IMPLEMENTATIONS)(
    '%s resolves every App, writes each once, and holds one watch per kind',
    async (implementation) => {
      const f = await runPeer(cluster, {
        implementation,
        apps: APPS,
        readyAfter: { minMs: 500, maxMs: 3_000 },
        seed: 7,
        workers: 4,
        timeoutAfterReadyMs: 45_000,
        goBinary,
      });
      expect(f.unresolved).toBe(0);
      // One sample per App, for the pooled percentiles and the plot over the run.
      expect(f.latencySamples).toHaveLength(APPS);
      // Every App's last referent is a Database or a Cache, made Ready by a patch whose answer was timed.
      for (const s of f.latencySamples) expect(s.writeMs).toBeGreaterThanOrEqual(0);
      expect(f.latencies).toHaveLength(APPS);
      expect(f.latencyMs.max).toBeGreaterThanOrEqual(0);
      // Only the implementation writes App status: at least once per App, and no more than once plus a conflict retry.
      expect(f.requests.byKey['PATCH apps.demo.refwatch.dev/status']).toBeGreaterThanOrEqual(APPS);
      expect(f.requests.byKey['PATCH apps.demo.refwatch.dev/status']).toBeLessThanOrEqual(2 * APPS);
      expect(f.openWatchesByResource).toEqual({
        'apps.demo.refwatch.dev': 1,
        'databases.demo.refwatch.dev': 1,
        'caches.demo.refwatch.dev': 1,
        secrets: 1,
      });
      expect(f.cpuSeconds).toBeGreaterThan(0);
      expect(f.peakRssBytes).toBeGreaterThan(0);
    },
    300_000,
  );
});
