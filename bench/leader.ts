/**
 * Leader election between replicas in separate processes (tests/fixtures/leader-replica.ts),
 * each a Manager reconciling the ConfigMaps of one namespace while it leads:
 *   leader.failover    the leader is killed with SIGKILL (no release) → the standby's first reconcile, s
 *   leader.handover    the leader gets SIGTERM (stops, releases the Lease) → the standby's first reconcile, s
 * Timings: leaseDuration 3 s, renewDeadline 2 s, retryPeriod 0.5 s; the worst of ROUNDS rounds.
 * Targets: failover ≤ leaseDuration + retryPeriod (3.5 s); handover ≤ retryPeriod (0.5 s): a standby
 * may take an unreleased Lease only once it expires and a released one at its next try, so anything
 * longer is time the election itself lost.
 *   leader.failover.defaults   one failover with client-go's defaults (15 s, 10 s, 2 s): target ≤ 17 s
 * On the embedded server always; with REFWATCH_BENCH_REAL=1 on kube-apiserver too (`.real`).
 *
 *   npx tsx bench/leader.ts
 */
import { KubeClient } from '../lib/kube';
import { startEmbeddedServer } from '../lib/embedded';
import { Replica, type ReplicaTimings } from '../tests/fixtures/leader-replicas';
import { realCluster } from './real';
import { result } from './report';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SHORT: ReplicaTimings = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 };
const DEFAULTS: ReplicaTimings = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 };

interface Cluster {
  kubeconfig: object;
  client: KubeClient;
}

let namespaces = 0;

/**
 * takeovers times `rounds` takeovers in a chain: a leader and a fresh standby
 * that has seen it; the leader gets `signal`; the time until the standby's
 * first reconcile as leader. Returns seconds per round.
 */
async function takeovers(
  cluster: Cluster,
  signal: 'SIGKILL' | 'SIGTERM',
  timings: ReplicaTimings,
  rounds: number,
): Promise<number[]> {
  const namespace = `leader-bench-${process.pid}-${++namespaces}`;
  await cluster.client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
  });
  await cluster.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    body: { metadata: { name: 'work' } },
  });
  let n = 0;
  const replica = () =>
    new Replica({ ...timings, kubeconfig: cluster.kubeconfig, namespace, lease: 'bench', identity: `r${++n}` });
  const all: Replica[] = [];
  const seconds: number[] = [];
  try {
    let leader = replica();
    all.push(leader);
    await leader.waitFor((e) => e.event === 'reconcile', 'first leader reconciling', 60_000);
    for (let i = 0; i < rounds; i++) {
      const standby = replica();
      all.push(standby);
      await standby.waitFor((e) => e.event === 'leader' && e.identity === leader.identity, 'seeing the leader', 60_000);
      // Past a renew or two, so the standby's view of the lease is a settled one.
      await new Promise((r) => setTimeout(r, 2 * timings.retryPeriod));
      const at = await leader.kill(signal);
      const started = await standby.waitFor((e) => e.event === 'started', 'takeover', timings.leaseDuration * 3);
      const reconciled = await standby.waitFor(
        (e) => e.event === 'reconcile' && e.at >= started.at,
        'reconcile after takeover',
      );
      seconds.push((reconciled.at - at) / 1000);
      leader = standby;
    }
    return seconds;
  } finally {
    await Promise.all(all.map((r) => r.kill('SIGKILL')));
  }
}

async function measure(cluster: Cluster, suffix: string, withDefaults: boolean): Promise<void> {
  const failover = await takeovers(cluster, 'SIGKILL', SHORT, ROUNDS);
  console.log(`failover${suffix} rounds (s): ${failover.map((s) => s.toFixed(3)).join(' ')}`);
  const handover = await takeovers(cluster, 'SIGTERM', SHORT, ROUNDS);
  console.log(`handover${suffix} rounds (s): ${handover.map((s) => s.toFixed(3)).join(' ')}`);
  result(
    `leader.failover${suffix}`,
    Math.max(...failover),
    's',
    '<=',
    (SHORT.leaseDuration + SHORT.retryPeriod) / 1000,
  );
  result(`leader.handover${suffix}`, Math.max(...handover), 's', '<=', SHORT.retryPeriod / 1000);
  if (withDefaults) {
    const [d] = await takeovers(cluster, 'SIGKILL', DEFAULTS, 1);
    result(`leader.failover.defaults${suffix}`, d!, 's', '<=', (DEFAULTS.leaseDuration + DEFAULTS.retryPeriod) / 1000);
  }
}

async function embedded(): Promise<void> {
  const server = await startEmbeddedServer();
  const kubeconfig = server.kubeconfig();
  const client = KubeClient.fromKubeconfig(kubeconfig);
  try {
    await measure({ kubeconfig, client }, '', true);
  } finally {
    client.close();
    await server.stop();
  }
}

async function real(): Promise<void> {
  const cluster = await realCluster('leader');
  const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'real' });
  try {
    await measure({ kubeconfig: cluster.kubeconfig, client }, '.real', false);
  } finally {
    client.close();
    await cluster.stop();
  }
}

// A MISS in the embedded part fails the bench too (result() sets the exit code), after the real part has run.
await embedded();
if (process.env.REFWATCH_BENCH_REAL === '1') await real();
