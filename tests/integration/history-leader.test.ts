import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../lib/changelog';
import type { ReferentEntity } from '../../lib/changelog/entities';
import { KubeClient } from '../../lib/kube';
import { clusterIdentity, startHistory, type History } from '../../server/history';
import { HistoryStore } from '../../server/history/store';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { startPostgres, type TestPostgres } from '../setup/postgres';

// Replicas of one cluster share one PostgreSQL database and elect a writer on the Lease refwatch-history.
// Short timings so a takeover fits a test; every wait is relative to them.
const TIMINGS = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 };
const DAY_MS = 86_400_000;

let cluster: TestCluster;
let postgres: TestPostgres | undefined;
let skipped = '';
const histories: History[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  const started = await startPostgres();
  if ('url' in started) postgres = started;
  else skipped = started.skipped;
});
afterEach(async () => {
  await Promise.all(histories.splice(0).map((h) => h.stop()));
});
afterAll(() => postgres?.stop());

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** replica starts a history as one refwatch replica does, with the kubeconfig's namespace holding the Lease. */
async function replica(identity: string, namespace: string, changelog: ChangeLog): Promise<History> {
  const kubeconfig = structuredClone(cluster.kubeconfig);
  for (const c of kubeconfig.contexts) Object.assign(c.context, { namespace });
  const history = await startHistory({
    config: { mode: 'postgres', url: postgres!.url, retentionMs: 14 * DAY_MS, maxBytes: 2 ** 30 },
    changelog,
    client: KubeClient.fromKubeconfig(kubeconfig, { source: `${cluster.kind} test cluster` }),
    embedded: false,
    server: cluster.url,
    registry: new Registry(),
    logger: quiet,
    leaderElection: { ...TIMINGS, identity },
  });
  histories.push(history!);
  return history!;
}

async function holder(client: KubeClient, namespace: string): Promise<string | undefined> {
  try {
    const lease = await client.getJSON<{ spec: { holderIdentity?: string } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/refwatch-history`,
    );
    return lease.spec.holderIdentity || undefined;
  } catch {
    return undefined;
  }
}

function secret(name: string, state: ReferentEntity['state'], at: number): ReferentEntity {
  const key = `Secret/shop/${name}`;
  return { id: key, key, kind: 'Secret', namespace: 'shop', state, referencedBy: 1, changedAt: at };
}

describe('history with several replicas on one PostgreSQL database', () => {
  it('only the leader writes; when it stops, the other takes over and writes what changed meanwhile; rows carry the cluster', async ({
    skip,
  }) => {
    if (!postgres) return skip(`SKIPPED: ${skipped}`);
    const namespace = await cluster.newNamespace('history-leader');
    const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'test' });
    const logs = { a: new ChangeLog(), b: new ChangeLog() };
    const replicas = { a: await replica('a', namespace, logs.a), b: await replica('b', namespace, logs.b) };
    // Both replicas watch the same cluster, so both change logs see every change.
    const seen = (v: ReferentEntity, only?: 'a' | 'b') => {
      for (const name of ['a', 'b'] as const) if (!only || only === name) logs[name].put('referent', v.id, v);
    };
    const flush = () => Promise.all(Object.values(replicas).map((r) => r.recorder.flush()));

    let first: 'a' | 'b' | undefined;
    await expect
      .poll(async () => (first = (await holder(client, namespace)) as 'a' | 'b'), { timeout: 20_000 })
      .toMatch(/^[ab]$/);
    const second = first === 'a' ? 'b' : 'a';
    const id = clusterIdentity(false, cluster.url);
    const reader = await HistoryStore.open({ dialect: 'postgres', url: postgres.url }, { cluster: id });
    try {
      const states = async (name: string) =>
        (await reader.timeline({ object: `Secret/shop/${name}`, limit: 100 })).transitions.map((t) => t.state);

      // The Lease may name the leader a moment before its elector says so; what it saw meanwhile is written
      // when it starts leading, so the first change is waited for before the next.
      seen(secret('db', 'Ready', 1_000));
      await flush();
      await expect.poll(() => states('db'), { timeout: 10_000 }).toEqual(['Ready']);
      seen(secret('db', 'NotReady', 2_000));
      await flush();
      await expect.poll(() => states('db')).toEqual(['Ready', 'NotReady']);
      expect(replicas[first!].recorder.status().written).toBe(2);
      expect(replicas[second].recorder.status()).toMatchObject({ state: 'up', written: 0, queued: 0 });

      // The leader stops (its Lease is released); a change lands before or after the other takes over.
      await replicas[first!].stop();
      histories.splice(histories.indexOf(replicas[first!]), 1);
      seen(secret('db', 'NotFound', 3_000), second);
      await expect.poll(() => holder(client, namespace), { timeout: 20_000 }).toBe(second);
      await expect.poll(() => states('db'), { timeout: 10_000 }).toEqual(['Ready', 'NotReady', 'NotFound']);
      seen(secret('cache', 'Ready', 4_000), second);
      await replicas[second].recorder.flush();
      await expect.poll(() => states('cache')).toEqual(['Ready']);
      expect(replicas[second].recorder.status()).toMatchObject({ written: 2, dropped: 0 });

      // Every row names this cluster: one database can hold several.
      const sql = new pg.Client({ connectionString: postgres.url });
      await sql.connect();
      try {
        const clusters = await sql.query<{ cluster: string }>('select distinct cluster from objects');
        expect(clusters.rows.map((r) => r.cluster)).toEqual([id]);
        const rows = await sql.query<{ n: string }>(
          "select count(*) as n from transitions t join objects o on o.id = t.object_id where o.key like 'Secret/shop/%'",
        );
        expect(Number(rows.rows[0]!.n)).toBe(4);
      } finally {
        await sql.end();
      }
    } finally {
      await reader.close();
    }
  });
});
