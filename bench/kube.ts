/**
 * lib/kube against the embedded API server, in-process:
 *   kube.initialSync      10,000 ConfigMaps: acquire → primed (WatchList)
 *   kube.eventLatency     1,000 ConfigMaps churning (3,000 merge patches from 2 concurrent
 *                         writers, BENCH_WRITERS to change): write sent → handler sees it, p99
 *   kube.watchesPerKind   10,000 subscribers of one kind: HTTP watches on the server
 *   kube.freeze.*         initialSync and eventLatency with objects deep-frozen at ingest
 *                         (the default) and not frozen, alternating in one run. The initial sync is
 *                         timed in pairs, one frozen and one not, in turns (BENCH_FREEZE_SYNC_PAIRS,
 *                         default 40): the judged ratio is the median of the pairs' ratios, with their
 *                         quartiles beside it. One sync of 10,000 objects varies by a quarter from the
 *                         next (the collector, the in-process server), five times the 1 µs an object's
 *                         freeze costs (a CPU profile: about 12 ms of a 250 ms sync); the ratio of the
 *                         best of five of each came out anywhere from 1.02 to 1.37 on identical code.
 *                         Event latency in rounds (BENCH_FREEZE_ROUNDS, default 5): the median over
 *                         rounds of each round's median. The p99 ratio is reported beside it: on
 *                         identical code it came out anywhere from 0.74 to 1.51 in consecutive runs (a
 *                         millisecond's tail is the process's GC and scheduling, not the microseconds a
 *                         freeze takes), where the median's ratio stayed within 1.00–1.01
 * With REFWATCH_BENCH_REAL=1 and the kube-apiserver/etcd binaries at hand, the
 * event latency is measured against kube-apiserver too (kube.eventLatency.real).
 *
 * Targets, from what a controller needs of its client:
 *   initialSync <= 2 s      a controller that starts or takes over leadership reconciles within 2 s of
 *                           asking for a kind of 10,000 objects, well inside a failover (leader.failover)
 *   eventLatency <= 10 ms   the client adds nothing a person sees: half the resolution p50 target
 *                           (20 ms), which also pays for the readiness write and the reconcile
 *   watchesPerKind == 1     DESIGN's invariant 1, whatever the number of subscribers
 *   freeze.* <= 1.1         read-only caches cost at most 10% over mutable ones, or users would turn them off
 *
 *   npx tsx bench/kube.ts
 */
import { startEmbeddedServer } from '../lib/embedded';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import type { InformerEvent, WatchTarget } from '../lib/engine/informer-source';
import { realCluster } from './real';
import { percentile, report, result } from './report';

const SYNC_OBJECTS = 10_000;
const CHURN_OBJECTS = 1_000;
const CHURN_WRITES = 3_000;
const WRITERS = Number(process.env.BENCH_WRITERS ?? 2);
const SUBSCRIBERS = 10_000;

const configMap = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { payload: 'x'.repeat(200) },
});

async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

const FREEZE_ROUNDS = Number(process.env.BENCH_FREEZE_ROUNDS ?? 5);
const FREEZE_SYNC_PAIRS = Number(process.env.BENCH_FREEZE_SYNC_PAIRS ?? 40);

async function initialSync(client: KubeClient, freeze = true): Promise<number> {
  const pool = new SharedInformerPool({ client, reflector: { freeze } });
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

let latencyRuns = 0;

/** eventLatency patches objects in namespace ns from WRITERS concurrent loops and times each write until its handler call. */
async function eventLatency(client: KubeClient, ns: string, freeze = true): Promise<number[]> {
  // Stamps unique per run: a patch that changes nothing produces no watch event.
  const run = ++latencyRuns;
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
  const pool = new SharedInformerPool({ client, reflector: { freeze } });
  try {
    const target: WatchTarget = { group: '', kind: 'ConfigMap', namespace: ns };
    const sub = pool.acquire(target, handler);
    await until(() => sub.isPrimed() && sub.status().phase === 'Watching', 'churn watch');
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < CHURN_WRITES; i = next++) {
        const stamp = `r${run}w${i}`;
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
    const subs = Array.from({ length: SUBSCRIBERS }, () =>
      pool.acquire({ group: '', kind: 'ConfigMap', namespace: 'churn' }, () => {}),
    );
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
    ok.push(await freezeCost(client));
    return ok.every(Boolean);
  } finally {
    await server.stop();
  }
}

/**
 * freezeCost runs initialSync and eventLatency with and without deep-freezing
 * at ingest, alternating so that both see the same machine load, and reports
 * frozen / not frozen: the median of the ratios of paired initial syncs, and
 * the median over rounds of each round's median event latency (its p99 is
 * reported).
 */
async function freezeCost(client: KubeClient): Promise<boolean> {
  const sync = { on: [] as number[], off: [] as number[] };
  const ratios: number[] = [];
  for (let pair = 0; pair < FREEZE_SYNC_PAIRS; pair++) {
    const ms = { on: 0, off: 0 };
    // Each pair swaps which goes first.
    for (const freeze of pair % 2 === 0 ? [true, false] : [false, true])
      ms[freeze ? 'on' : 'off'] = await initialSync(client, freeze);
    sync.on.push(ms.on);
    sync.off.push(ms.off);
    ratios.push(ms.on / ms.off);
  }
  const p99 = { on: [] as number[], off: [] as number[] };
  const p50 = { on: [] as number[], off: [] as number[] };
  for (let round = 0; round < FREEZE_ROUNDS; round++) {
    // Each round swaps which goes first.
    for (const freeze of round % 2 === 0 ? [true, false] : [false, true]) {
      const mode = freeze ? 'on' : 'off';
      const latencies = await eventLatency(client, 'churn', freeze);
      p99[mode].push(percentile(latencies, 99));
      p50[mode].push(percentile(latencies, 50));
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => percentile(sorted(xs), 50);
  report('kube.freeze.initialSync.frozen', median(sync.on), 'ms(median)');
  report('kube.freeze.initialSync.unfrozen', median(sync.off), 'ms(median)');
  report('kube.freeze.initialSync.ratio.p25', percentile(sorted(ratios), 25), 'x');
  report('kube.freeze.initialSync.ratio.p75', percentile(sorted(ratios), 75), 'x');
  report('kube.freeze.eventLatency.frozen', median(p50.on), 'ms(p50)');
  report('kube.freeze.eventLatency.unfrozen', median(p50.off), 'ms(p50)');
  report('kube.freeze.eventLatency.p99.ratio', median(p99.on) / median(p99.off), 'x');
  const ok = [
    result('kube.freeze.initialSync.ratio', median(ratios), `x(median of ${ratios.length} pairs)`, '<=', 1.1),
    result('kube.freeze.eventLatency.ratio', median(p50.on) / median(p50.off), 'x', '<=', 1.1),
  ];
  return ok.every(Boolean);
}

async function real(): Promise<boolean> {
  const cluster = await realCluster('kube');
  try {
    const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'real' });
    await client.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'churn' } },
    });
    for (let i = 0; i < CHURN_OBJECTS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client.request('POST', '/api/v1/namespaces/churn/configmaps', { body: configMap('churn', `cm-${i + j}`) }),
        ),
      );
    }
    const latency = await eventLatency(client, 'churn');
    return result('kube.eventLatency.real', percentile(latency, 99), 'ms', '<=', 10);
  } finally {
    await cluster.stop();
  }
}

// A MISS in the embedded part fails the bench too (result() sets the exit code), after the real part has run.
await embedded();
if (process.env.REFWATCH_BENCH_REAL === '1') await real();
