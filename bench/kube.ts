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
 *                         Event latency in rounds of one run each way (BENCH_FREEZE_ROUNDS, default
 *                         15): the median of the rounds' ratios of their medians, with quartiles. The
 *                         ratio of the medians over five rounds came out 0.95–1.20 on identical code
 *                         (a 1 ms median moves by a tenth from run to run; a freeze takes about 1 µs).
 *                         The p99 ratio is reported beside it: on identical code it came out anywhere
 *                         from 0.74 to 1.51 in consecutive runs (a millisecond's tail is the process's
 *                         GC and scheduling, not the microseconds a freeze takes)
 * With REFWATCH_BENCH_REAL=1 and the kube-apiserver/etcd binaries at hand, the same churn runs against
 * kube-apiserver, three times, each time seen by the informer and by a bare HTTPS watch beside it in the same
 * process, one that only parses its lines (no cache, no reflector). The bare watch's latency
 * (kube.eventLatency.real.floor, reported) is what kube-apiserver and etcd take on this machine before any client
 * does anything; the informer's (kube.eventLatency.real, reported) includes it. Judged is what the client adds:
 * for each write, when the informer's handler saw it less when the bare watch parsed it
 * (kube.eventLatency.real.added, the p99 of all writes of the three rounds, each round's printed beside it). Until
 * 2 Dec 2026 the informer's own p99 was judged against 10 ms; on the 2-core machines this bench runs on, the bare
 * watch's p99 alone was 12.6–20.6 ms, so that figure judged kube-apiserver and the machine. Both watches share one
 * event loop: when the informer's socket is read first, its work delays the bare watch's arrival as well, so
 * "added" can err low by one event's processing (tens of µs), far below the target.
 *
 * Targets, from what a controller needs of its client:
 *   initialSync <= 2 s      a controller that starts or takes over leadership reconciles within 2 s of
 *                           asking for a kind of 10,000 objects, well inside a failover (leader.failover)
 *   eventLatency <= 10 ms   the client adds nothing a person sees: half the resolution p50 target
 *                           (20 ms), which also pays for the readiness write and the reconcile. Against
 *                           the in-process embedded server, whose own share is small, that is the
 *                           informer's latency; against kube-apiserver, what the informer adds to a bare
 *                           watch's (eventLatency.real.added)
 *   watchesPerKind == 1     DESIGN's invariant 1, whatever the number of subscribers
 *   freeze.* <= 1.1         read-only caches cost at most 10% over mutable ones, or users would turn them off
 *
 *   npx tsx bench/kube.ts
 */
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { startEmbeddedServer } from '../lib/embedded';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import type { InformerEvent, WatchTarget } from '../lib/engine/informer-source';
import type { RealCluster } from '../tests/setup/real-cluster';
import { realCluster } from './real';
import { percentile, report, result } from './report';

const SYNC_OBJECTS = 10_000;
const CHURN_OBJECTS = 1_000;
const CHURN_WRITES = 3_000;
const WRITERS = Number(process.env.BENCH_WRITERS ?? 2);
const SUBSCRIBERS = 10_000;
/** Paired churns against kube-apiserver: the judged p99 is of all their writes, and each round's is printed. */
const REAL_ROUNDS = 3;

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

const FREEZE_ROUNDS = Number(process.env.BENCH_FREEZE_ROUNDS ?? 15);
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

/**
 * Writes: the stamp each write of one churn sets, and when it was sent. Stamps are unique per run: a patch that
 * changes nothing produces no watch event.
 */
class Writes {
  readonly run = ++latencyRuns;
  readonly sent = new Map<string, number>();
}

/** Arrivals: when one watch delivered each write of a churn. */
class Arrivals {
  readonly at = new Map<string, number>();
  constructor(private readonly writes: Writes) {}

  /** seen notes an object the watch delivered; a stamp seen again (a later event of the same write) is not. */
  seen(object: unknown): void {
    const stamp = (object as { data?: { stamp?: string } } | undefined)?.data?.stamp;
    if (stamp === undefined || !this.writes.sent.has(stamp) || this.at.has(stamp)) return;
    this.at.set(stamp, performance.now());
  }

  /** latencies: the ms from each write's time in `since` (when it was sent, unless given) to its arrival, sorted. */
  latencies(since: ReadonlyMap<string, number> = this.writes.sent): number[] {
    return [...this.at].map(([stamp, t]) => t - since.get(stamp)!).sort((a, b) => a - b);
  }
}

/** churn patches objects in namespace ns from WRITERS concurrent loops, stamping each, until every watch saw each write. */
async function churn(client: KubeClient, ns: string, writes: Writes, ...watches: Arrivals[]): Promise<void> {
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < CHURN_WRITES; i = next++) {
      const stamp = `r${writes.run}w${i}`;
      writes.sent.set(stamp, performance.now());
      await client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/cm-${i % CHURN_OBJECTS}`, {
        body: { data: { stamp } },
        contentType: 'application/merge-patch+json',
      });
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  await until(() => watches.every((w) => w.at.size === CHURN_WRITES), 'every update delivered', 30_000);
}

/** informerWatch subscribes to the ConfigMaps of namespace ns through pool, noting each update in arrivals. */
async function informerWatch(pool: SharedInformerPool, ns: string, arrivals: Arrivals): Promise<void> {
  const target: WatchTarget = { group: '', kind: 'ConfigMap', namespace: ns };
  const sub = pool.acquire(target, (e: InformerEvent) => (e.type === 'updated' ? arrivals.seen(e.object) : undefined));
  await until(() => sub.isPrimed() && sub.status().phase === 'Watching', 'churn watch');
}

/** eventLatency times each write of churn until its informer handler call. */
async function eventLatency(client: KubeClient, ns: string, freeze = true): Promise<number[]> {
  const writes = new Writes();
  const arrivals = new Arrivals(writes);
  const pool = new SharedInformerPool({ client, reflector: { freeze } });
  try {
    await informerWatch(pool, ns, arrivals);
    await churn(client, ns, writes, arrivals);
    return arrivals.latencies();
  } finally {
    await pool.stop();
  }
}

/**
 * bareWatch is the least a client can do in refwatch's place: one HTTPS watch of the ConfigMaps of namespace ns
 * whose lines are parsed as they come, with no cache and no reflector. Its arrivals are when the API server and
 * etcd delivered each write.
 */
async function bareWatch(
  cluster: RealCluster,
  client: KubeClient,
  ns: string,
  arrivals: Arrivals,
): Promise<ClientRequest> {
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const list = await client.getJSON<{ metadata?: { resourceVersion?: string } }>(path, { limit: 1 });
  const url = `${cluster.url}${path}?watch=1&resourceVersion=${list.metadata?.resourceVersion ?? ''}`;
  return new Promise<ClientRequest>((resolve, reject) => {
    const req = https.get(url, { ca: cluster.ca, headers: { authorization: `Bearer ${cluster.token}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`the bare watch got HTTP ${res.statusCode}`));
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          const event = JSON.parse(pending.slice(0, nl)) as { type?: string; object?: unknown };
          pending = pending.slice(nl + 1);
          if (event.type === 'MODIFIED') arrivals.seen(event.object);
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

/**
 * pairedEventLatency runs one churn with the informer and a bare watch open side by side, and returns the
 * latencies of each and, for each write, the ms the informer's handler saw it after the bare watch parsed it.
 */
async function pairedEventLatency(
  cluster: RealCluster,
  client: KubeClient,
  ns: string,
): Promise<{ informer: number[]; bare: number[]; added: number[] }> {
  const writes = new Writes();
  const informer = new Arrivals(writes);
  const bare = new Arrivals(writes);
  const pool = new SharedInformerPool({ client });
  let watch: ClientRequest | undefined;
  try {
    await informerWatch(pool, ns, informer);
    watch = await bareWatch(cluster, client, ns, bare);
    await churn(client, ns, writes, informer, bare);
  } finally {
    watch?.destroy();
    await pool.stop();
  }
  return { informer: informer.latencies(), bare: bare.latencies(), added: informer.latencies(bare.at) };
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
 * the median of the rounds' ratios of their median event latencies (the p99s'
 * ratio is reported).
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
  const latencyRatios: number[] = [];
  for (let round = 0; round < FREEZE_ROUNDS; round++) {
    // Each round swaps which goes first.
    for (const freeze of round % 2 === 0 ? [true, false] : [false, true]) {
      const mode = freeze ? 'on' : 'off';
      const latencies = await eventLatency(client, 'churn', freeze);
      p99[mode].push(percentile(latencies, 99));
      p50[mode].push(percentile(latencies, 50));
    }
    latencyRatios.push(p50.on.at(-1)! / p50.off.at(-1)!);
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => percentile(sorted(xs), 50);
  report('kube.freeze.initialSync.frozen', median(sync.on), 'ms(median)');
  report('kube.freeze.initialSync.unfrozen', median(sync.off), 'ms(median)');
  report('kube.freeze.initialSync.ratio.p25', percentile(sorted(ratios), 25), 'x');
  report('kube.freeze.initialSync.ratio.p75', percentile(sorted(ratios), 75), 'x');
  report('kube.freeze.eventLatency.frozen', median(p50.on), 'ms(p50)');
  report('kube.freeze.eventLatency.unfrozen', median(p50.off), 'ms(p50)');
  report('kube.freeze.eventLatency.ratio.p25', percentile(sorted(latencyRatios), 25), 'x');
  report('kube.freeze.eventLatency.ratio.p75', percentile(sorted(latencyRatios), 75), 'x');
  report('kube.freeze.eventLatency.p99.ratio', median(p99.on) / median(p99.off), 'x');
  const ok = [
    result('kube.freeze.initialSync.ratio', median(ratios), `x(median of ${ratios.length} pairs)`, '<=', 1.1),
    result(
      'kube.freeze.eventLatency.ratio',
      median(latencyRatios),
      `x(median of ${latencyRatios.length} rounds)`,
      '<=',
      1.1,
    ),
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
    const all = { informer: [] as number[], bare: [] as number[], added: [] as number[] };
    const roundP99s: number[] = [];
    for (let round = 0; round < REAL_ROUNDS; round++) {
      const r = await pairedEventLatency(cluster, client, 'churn');
      for (const k of ['informer', 'bare', 'added'] as const) all[k].push(...r[k]);
      roundP99s.push(percentile(r.added, 99));
    }
    for (const xs of Object.values(all)) xs.sort((a, b) => a - b);
    console.log(
      `kube: against kube-apiserver, ${REAL_ROUNDS} rounds of ${CHURN_WRITES} writes: p50 ${percentile(all.informer, 50).toFixed(2)} ms ` +
        `through the informer, ${percentile(all.bare, 50).toFixed(2)} ms through a bare watch beside it; the informer's ` +
        `p99 over the bare watch per round ${roundP99s.map((x) => x.toFixed(2)).join(', ')} ms`,
    );
    report('kube.eventLatency.real', percentile(all.informer, 99), 'ms(p99, write to informer handler)');
    report('kube.eventLatency.real.floor', percentile(all.bare, 99), 'ms(p99, a bare HTTPS watch)');
    report('kube.eventLatency.real.added.p50', percentile(all.added, 50), 'ms');
    return result('kube.eventLatency.real.added', percentile(all.added, 99), 'ms(p99)', '<=', 10);
  } finally {
    await cluster.stop();
  }
}

// A MISS in the embedded part fails the bench too (result() sets the exit code), after the real part has run.
await embedded();
if (process.env.REFWATCH_BENCH_REAL === '1') await real();
