import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Manager, conditionReadiness, type Controller } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { demoManifests } from '@/server/cluster';
import { getTestCluster, type TestCluster } from '../setup/cluster';

// The core engine end to end against the selected cluster: references resolve
// through the shared watch (no polling), one watch per referent kind, and a
// kind left without references has its HTTP watch closed on the server.

const DB = 'Database.demo.refwatch.dev';
const API = '/apis/demo.refwatch.dev/v1alpha1';
let cluster: TestCluster;
let client: KubeClient;
let manager: Manager | undefined;

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig);
  for (const crd of demoManifests()) {
    await client
      .request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })
      .catch((e: { status?: number }) => {
        if (e.status !== 409) throw e;
      });
  }
  // Established means served: wait until discovery lists the kinds.
  await vi.waitFor(
    async () => {
      const list = await client.getJSON<{ resources: { kind: string }[] }>(`${API}`);
      expect(list.resources.map((r) => r.kind)).toEqual(expect.arrayContaining(['App', 'Database', 'Cache']));
    },
    { timeout: 30_000, interval: 250 },
  );
}, 60_000);

afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

afterAll(() => client?.close());

/** A manager whose controller reconciles the Apps of one namespace (on the real tier, deleted namespaces linger). */
function startManager(namespace: string, grace = 400): { manager: Manager; controller: Controller } {
  const m = new Manager({
    source: new SharedInformerPool({ client }),
    grace,
    readiness: (kind) => (kind.endsWith('.demo.refwatch.dev') ? conditionReadiness('Ready') : undefined),
    statsIntervalMs: 0,
  });
  const controller = m.addController({
    name: 'watch',
    for: { group: 'demo.refwatch.dev', kind: 'App', namespace },
    reconcile(ctx) {
      const spec = ctx.object?.spec as { databaseRef?: { name: string } } | undefined;
      if (spec?.databaseRef)
        ctx.resolve(`${DB}/${ctx.object!.metadata.namespace}/${spec.databaseRef.name}`, 'spec.databaseRef');
    },
  });
  m.start();
  manager = m;
  return { manager: m, controller };
}

const app = (ns: string, name: string, db: string) =>
  client.request('POST', `${API}/namespaces/${ns}/apps`, {
    body: {
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'App',
      metadata: { name },
      spec: { databaseRef: { name: db } },
    },
  });
const state = (m: Manager, ns: string, name: string) =>
  m.changelog.get('referrer', `watch|App.demo.refwatch.dev/${ns}/${name}`)?.state;
const dbWatches = async () => (await cluster.openWatches())['databases.demo.refwatch.dev'] ?? 0;

describe(`the engine against the ${process.env.REFWATCH_TEST_CLUSTER ?? 'embedded'} cluster`, () => {
  it('a referent created later, then turning Ready, resolves its referrer through the watch with no polling', async () => {
    const ns = await cluster.newNamespace('engine');
    const { manager: m, controller } = startManager(ns);
    await app(ns, 'web', 'orders');
    await vi.waitFor(() => expect(state(m, ns, 'web')).toBe('NotFound'), { timeout: 15_000 });
    await client.request('POST', `${API}/namespaces/${ns}/databases`, {
      body: { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'Database', metadata: { name: 'orders' } },
    });
    await vi.waitFor(() => expect(state(m, ns, 'web')).toBe('Waiting'), { timeout: 15_000 });
    await client.request('PATCH', `${API}/namespaces/${ns}/databases/orders/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: '' }] } },
    });
    await vi.waitFor(() => expect(state(m, ns, 'web')).toBe('Resolved'), { timeout: 15_000 });
    // Woken by events only: a handful of reconciles, no rate-limited retry.
    expect(controller.queue.stats().retries).toBe(0);
    expect(m.changelog.get('referrer', `watch|App.demo.refwatch.dev/${ns}/web`)!.reconciles).toBeLessThanOrEqual(5);
  });

  it('one watch per referent kind whatever the referrers, closed on the server once no references remain', async () => {
    const ns = await cluster.newNamespace('engine');
    const baseline = await dbWatches();
    const { manager: m } = startManager(ns, 300);
    for (let i = 0; i < 20; i++) await app(ns, `app-${i}`, `db-${i % 3}`);
    await vi.waitFor(() => expect(m.registry.kindCount(DB)).toBe(20), { timeout: 15_000 });
    await vi.waitFor(async () => expect(await dbWatches()).toBe(baseline + 1), { timeout: 15_000 });
    expect(m.referenceControllers.state(DB)).toBe('Active');
    // Drop every reference: the kind is cancelled after grace and its HTTP watch closes.
    for (let i = 0; i < 20; i++) await client.request('DELETE', `${API}/namespaces/${ns}/apps/app-${i}`);
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Cancelled'), { timeout: 15_000 });
    await vi.waitFor(async () => expect(await dbWatches()).toBe(baseline), { timeout: 15_000 });
    const rc = m.changelog.get('controller', DB)!;
    expect(rc.reason).toBe('no references for 300 ms');
    expect(rc.history.map((h) => h.state)).toContain('Grace');
  });
});
