/**
 * lib/kube against the embedded API server, in-process:
 *   kube.initialSync      10,000 ConfigMaps: acquire → primed (WatchList)
 *   kube.eventLatency     1,000 ConfigMaps churning (3,000 merge patches from 2 concurrent
 *                         writers, BENCH_WRITERS to change): write sent → handler sees it, p99
 *   kube.watchesPerKind   10,000 subscribers of one kind: HTTP watches on the server
 * With REFWATCH_BENCH_REAL=1 and the kube-apiserver/etcd binaries at hand, the
 * event latency is measured against kube-apiserver too (kube.eventLatency.real).
 *
 *   npx tsx bench/kube.ts
 */
import { startEmbeddedServer } from '../server/embedded';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import type { InformerEvent, WatchTarget } from '../lib/engine/informer-source';
import { percentile, result } from './report';

const SYNC_OBJECTS = 10_000;
const CHURN_OBJECTS = 1_000;
const CHURN_WRITES = 3_000;
const WRITERS = Number(process.env.BENCH_WRITERS ?? 2);
const SUBSCRIBERS = 10_000;

const configMap = (namespace: string, name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { payload: 'x'.repeat(200) } });

async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function initialSync(client: KubeClient): Promise<number> {
  const pool = new SharedInformerPool({ client });
  try {
    const t0 = performance.now();
    const sub = pool.acquire({ group: '', kind: 'ConfigMap', namespace: 'sync' }, () => {});
    await until(() => sub.isPrimed(), 'initial sync');
    const ms = performance.now() - t0;
    if (sub.store.size !== SYNC_OBJECTS) throw new Error(`synced ${sub.store.size} objects, expected ${SYNC_OBJECTS}`);
    return ms;
  } finally {
    await pool.stop();
  }
}

/** eventLatency patches objects in namespace ns from WRITERS concurrent loops and times each write until its handler call. */
async function eventLatency(client: KubeClient, ns: string): Promise<number[]> {
  const sent = new Map<string, number>();
  const samples: number[] = [];
  const handler = (e: InformerEvent) => {
    if (e.type !== 'updated') return;
    const stamp = (e.object as { data?: { stamp?: string } }).data?.stamp;
    const t = stamp === undefined ? undefined : sent.get(stamp);
    if (t === undefined) return;
    samples.push(performance.now() - t);
    sent.delete(stamp!);
  };
  const pool = new SharedInformerPool({ client });
  try {
    const target: WatchTarget = { group: '', kind: 'ConfigMap', namespace: ns };
    const sub = pool.acquire(target, handler);
    await until(() => sub.isPrimed() && sub.status().phase === 'Watching', 'churn watch');
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < CHURN_WRITES; i = next++) {
        const stamp = `w${i}`;
        sent.set(stamp, performance.now());
        await client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-${i % CHURN_OBJECTS}`, {
          body: { data: { stamp } },
          contentType: 'application/merge-patch+json',
        });
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    await until(() => samples.length === CHURN_WRITES, 'every update delivered', 30_000);
    samples.sort((a, b) => a - b);
    return samples;
  } finally {
    await pool.stop();
  }
}

async function watchesPerKind(client: KubeClient, openWatches: () => Record<string, number>): Promise<number> {
  const pool = new SharedInformerPool({ client });
  try {
    const subs = Array.from({ length: SUBSCRIBERS }, () => pool.acquire({ group: '', kind: 'ConfigMap', namespace: 'churn' }, () => {}));
    await until(() => subs.every((s) => s.isPrimed()) && subs[0]!.status().phase === 'Watching', 'subscribers primed');
    const watches = openWatches().configmaps ?? 0;
    await Promise.all(subs.map((s) => s.release()));
    return watches;
  } finally {
    await pool.stop();
  }
}

async function embedded(): Promise<boolean> {
  const objects: object[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sync' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'churn' } },
  ];
  for (let i = 0; i < SYNC_OBJECTS; i++) objects.push(configMap('sync', `cm-${i}`));
  for (let i = 0; i < CHURN_OBJECTS; i++) objects.push(configMap('churn', `cm-${i}`));
  const server = await startEmbeddedServer({ objects, retainedEvents: CHURN_WRITES * 2 });
  try {
    const client = KubeClient.fromKubeconfig(server.kubeconfig(), { source: 'embedded' });
    await initialSync(client); // warm-up: JIT and sockets
    const syncs: number[] = [];
    for (let i = 0; i < 3; i++) syncs.push(await initialSync(client));
    const latency = await eventLatency(client, 'churn');
    const watches = await watchesPerKind(client, () => server.openWatches());
    const ok = [
      result('kube.initialSync', Math.min(...syncs), 'ms', '<=', 2000),
      result('kube.eventLatency', percentile(latency, 99), 'ms', '<=', 10),
      result('kube.watchesPerKind', watches, 'watches', '==', 1),
    ];
    return ok.every(Boolean);
  } finally {
    await server.stop();
  }
}

async function real(): Promise<boolean> {
  const { startRealCluster, binariesDir } = await import('../tests/setup/real-cluster');
  try {
    binariesDir();
  } catch (e) {
    console.log(`SKIPPED: bench kube (real): ${e instanceof Error ? e.message : String(e)}`);
    return true;
  }
  const cluster = await startRealCluster();
  try {
    const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'real' });
    await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'churn' } } });
    for (let i = 0; i < CHURN_OBJECTS; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => client.request('POST', '/api/v1/namespaces/churn/configmaps', { body: configMap('churn', `cm-${i + j}`) })));
    }
    const latency = await eventLatency(client, 'churn');
    return result('kube.eventLatency.real', percentile(latency, 99), 'ms', '<=', 10);
  } finally {
    await cluster.stop();
  }
}

// A MISS is a figure to report, not a failure of the run.
await embedded();
if (process.env.REFWATCH_BENCH_REAL === '1') await real();
