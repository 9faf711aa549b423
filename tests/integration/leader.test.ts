import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kubeRequest, type KubeEndpoint } from '../setup/kube-http';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import {
  Replica,
  TcpProxy,
  kubeconfigVia,
  overlappingLeadership,
  type ReplicaTimings,
} from '../fixtures/leader-replicas';

// Short timings so failover fits a test; every assertion is relative to them.
const T: ReplicaTimings = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 };

let cluster: TestCluster;
let endpoint: KubeEndpoint;
const replicas: Replica[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  const caData = cluster.kubeconfig.clusters[0]?.cluster['certificate-authority-data'];
  endpoint = {
    url: cluster.url,
    token: cluster.token,
    ...(caData ? { ca: Buffer.from(caData, 'base64').toString('utf8') } : {}),
  };
});

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.kill('SIGKILL')));
  await Promise.all(proxies.splice(0).map((p) => p.stop()));
});

async function setup(
  prefix: string,
): Promise<{ namespace: string; replica: (identity: string, kubeconfig?: object) => Replica }> {
  const namespace = await cluster.newNamespace(prefix);
  const res = await kubeRequest(endpoint, 'POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'work' } },
  });
  expect(res.status).toBe(201);
  return {
    namespace,
    replica: (identity, kubeconfig = cluster.kubeconfig) => {
      const r = new Replica({ ...T, kubeconfig, namespace, lease: 'controller', identity });
      replicas.push(r);
      return r;
    },
  };
}

/** firstLeader waits until one of the replicas reports it leads, and returns it with the other. */
async function firstLeader(a: Replica, b: Replica): Promise<[Replica, Replica]> {
  const leader = await Promise.any([
    a.waitFor((e) => e.event === 'started', 'leadership').then(() => a),
    b.waitFor((e) => e.event === 'started', 'leadership').then(() => b),
  ]);
  return leader === a ? [a, b] : [b, a];
}

async function lease(
  namespace: string,
): Promise<{ holderIdentity?: string; renewTime?: string; leaseTransitions?: number; leaseDurationSeconds?: number }> {
  const res = await kubeRequest(
    endpoint,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/controller`,
  );
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { spec: Record<string, never> }).spec;
}

describe('leader election across processes', () => {
  it('one replica leads and reconciles; after it is killed the other leads within leaseDuration + retryPeriod', async () => {
    const { namespace, replica } = await setup('leader-kill');
    const [leader, standby] = await firstLeader(replica('a'), replica('b'));
    await leader.waitFor((e) => e.event === 'reconcile' && e.key === `ConfigMap/${namespace}/work`, 'a reconcile');
    await standby.waitFor((e) => e.event === 'leader' && e.identity === leader.identity, 'seeing the leader');
    // A few renew periods in which the standby must stay out.
    await new Promise((r) => setTimeout(r, 4 * T.retryPeriod));
    expect(standby.first('started')).toBeUndefined();
    expect(standby.first('reconcile')).toBeUndefined();
    expect(await lease(namespace)).toMatchObject({
      holderIdentity: leader.identity,
      leaseDurationSeconds: 3,
      leaseTransitions: 0,
    });

    const killedAt = await leader.kill('SIGKILL');
    const started = await standby.waitFor((e) => e.event === 'started', 'takeover');
    expect(started.at - killedAt).toBeLessThanOrEqual(T.leaseDuration + T.retryPeriod);
    await standby.waitFor((e) => e.event === 'reconcile' && e.at >= started.at, 'a reconcile after takeover');
    expect(await lease(namespace)).toMatchObject({ holderIdentity: standby.identity, leaseTransitions: 1 });
    expect(await overlappingLeadership([leader, standby])).toEqual([]);
  });

  it('a leader stopped with SIGTERM releases the Lease and the other leads within one retry period', async () => {
    const { namespace, replica } = await setup('leader-release');
    const [leader, standby] = await firstLeader(replica('a'), replica('b'));
    await standby.waitFor((e) => e.event === 'leader' && e.identity === leader.identity, 'seeing the leader');
    const termAt = await leader.kill('SIGTERM');
    expect((await leader.exited).code).toBe(0);
    const stopped = leader.first('stopped')!;
    expect(stopped.reason).toBe('stopped');
    const started = await standby.waitFor((e) => e.event === 'started', 'takeover');
    expect(started.at - termAt).toBeLessThanOrEqual(T.retryPeriod);
    expect(started.at).toBeGreaterThanOrEqual(stopped.at);
    await standby.waitFor((e) => e.event === 'reconcile', 'a reconcile after takeover');
    expect(await lease(namespace)).toMatchObject({ holderIdentity: standby.identity, leaseTransitions: 1 });
    expect(await overlappingLeadership([leader, standby])).toEqual([]);
  });

  it('a leader whose requests fail stops its controllers before its lease expires', async () => {
    const { namespace, replica } = await setup('leader-cut');
    const target = new URL(cluster.url);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    proxies.push(proxy);
    const leader = replica('cut-off', kubeconfigVia(cluster.kubeconfig, proxy.port));
    await leader.waitFor((e) => e.event === 'started', 'leadership');
    const standby = replica('standby');
    await standby.waitFor((e) => e.event === 'leader' && e.identity === 'cut-off', 'seeing the leader');

    const cutAt = Date.now();
    proxy.cut();
    const stopped = await leader.waitFor((e) => e.event === 'stopped', 'giving up leadership', 10_000);
    expect(stopped.reason).toBe('lost');
    expect(stopped.at).toBeGreaterThanOrEqual(cutAt);
    // The Lease's renewTime is the leader's last renew that reached the server.
    const lastRenew = Date.parse((await lease(namespace)).renewTime!);
    expect(stopped.at).toBeLessThan(lastRenew + T.leaseDuration);
    expect(stopped.at).toBeLessThanOrEqual(lastRenew + T.renewDeadline + 100);
    expect((await leader.exited).code).toBe(1);
    const reconciles = leader.events.filter((e) => e.event === 'reconcile');
    expect(reconciles.every((e) => e.at < stopped.at)).toBe(true);

    const started = await standby.waitFor((e) => e.event === 'started', 'takeover');
    expect(started.at).toBeGreaterThanOrEqual(lastRenew + T.leaseDuration);
    expect(await overlappingLeadership([leader, standby])).toEqual([]);
  });
});
