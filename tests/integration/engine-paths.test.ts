import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Manager,
  conditionReadiness,
  resolvedCondition,
  setCondition,
  type ControllerOptions,
  type StatusCondition,
} from '@/lib/engine';
import { KubeClient, KubeRequestError, SharedInformerPool } from '@/lib/kube';
import type { ObjectKey } from '@/lib/model';
import { ensureDemoKinds } from '@/server/demo/kinds';
import { getTestCluster, type TestCluster } from '../setup/cluster';

// The engine's less travelled paths against the selected cluster: a reconcile
// asking to run again later (requeueAfter), a status write refused with 409
// Conflict because the cached object is stale, and referrers going away
// (deleted, or forgotten by a controller without `for`) until their
// referents' kind has its HTTP watch closed on the server.

const GROUP = 'demo.refwatch.dev';
const DB = `Database.${GROUP}`;
const API = `/apis/${GROUP}/v1alpha1`;
let cluster: TestCluster;
let client: KubeClient;
let manager: Manager | undefined;

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig);
  await ensureDemoKinds(client, { install: true, timeoutMs: 30_000 });
}, 60_000);

afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

afterAll(() => client?.close());

function startManager(controllers: ControllerOptions[], grace = 400): Manager {
  const m = new Manager({
    source: new SharedInformerPool({ client }),
    grace,
    readiness: (kind) => (kind.endsWith(`.${GROUP}`) ? conditionReadiness('Ready') : undefined),
    statsIntervalMs: 0,
  });
  for (const c of controllers) m.addController(c);
  m.start();
  manager = m;
  return m;
}

const appKey = (ns: string, name: string): ObjectKey => `App.${GROUP}/${ns}/${name}`;
const createApp = (ns: string, name: string, db: string) =>
  client.request('POST', `${API}/namespaces/${ns}/apps`, {
    body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'App', metadata: { name }, spec: { databaseRef: { name: db } } },
  });
const createDatabase = async (ns: string, name: string) => {
  await client.request('POST', `${API}/namespaces/${ns}/databases`, {
    body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'Database', metadata: { name } },
  });
  await client.request('PATCH', `${API}/namespaces/${ns}/databases/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: '' }] } },
  });
};
const dbWatches = async () => (await cluster.openWatches())['databases.demo.refwatch.dev'] ?? 0;
const databaseRefOf = (spec: unknown) => (spec as { databaseRef: { name: string } }).databaseRef.name;
// status.resolvedBy keeps unknown fields on a real apiserver, which prunes those the App's schema lacks elsewhere.
const observedOf = (status: unknown) =>
  (status as { resolvedBy?: { observed?: string } } | undefined)?.resolvedBy?.observed;

describe(`engine paths against the ${process.env.REFWATCH_TEST_CLUSTER ?? 'embedded'} cluster`, () => {
  it('a reconcile returning requeueAfter runs again after that delay, and not before', async () => {
    const ns = await cluster.newNamespace('requeue');
    const delay = 1500;
    const at: number[] = [];
    startManager([
      {
        name: 'ttl',
        for: { group: GROUP, kind: 'App', namespace: ns },
        reconcile: () => {
          at.push(performance.now());
          // Only the first reconcile asks again: nothing else changes the App.
          return at.length === 1 ? { requeueAfter: delay } : undefined;
        },
      },
    ]);
    await createApp(ns, 'web', 'orders');
    await vi.waitFor(() => expect(at).toHaveLength(1), { timeout: 15_000 });
    await new Promise((r) => setTimeout(r, delay * 0.7));
    expect(at).toHaveLength(1);
    await vi.waitFor(() => expect(at).toHaveLength(2), { timeout: delay + 10_000 });
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(delay - 1);
    // Asked once, run once more: no third reconcile follows.
    await new Promise((r) => setTimeout(r, delay));
    expect(at).toHaveLength(2);
  });

  it('a status write refused with 409 Conflict (stale resourceVersion) is retried and ends resolved', async () => {
    const ns = await cluster.newNamespace('conflict');
    await createDatabase(ns, 'orders');
    const conflicts: string[] = [];
    let attempts = 0;
    const m = startManager([
      {
        name: 'status',
        for: { group: GROUP, kind: 'App', namespace: ns },
        async reconcile(ctx) {
          const app = ctx.object!;
          const ready = resolvedCondition([ctx.resolve(`${DB}/${ns}/${databaseRefOf(app.spec)}`, 'spec.databaseRef')]);
          const conditions = setCondition(
            (app.status as { conditions?: StatusCondition[] } | undefined)?.conditions,
            ready,
          );
          if (!conditions) return; // the status already says so
          if (++attempts === 1) {
            // Someone else writes the App first: the cached copy, and its resourceVersion, are now stale.
            await client.request('PATCH', `${API}/namespaces/${ns}/apps/${app.metadata.name}`, {
              contentType: 'application/merge-patch+json',
              body: { metadata: { labels: { touched: 'yes' } } },
            });
          }
          // A new object built from the cached one: the cached one is frozen.
          try {
            await client.request('PUT', `${API}/namespaces/${ns}/apps/${app.metadata.name}/status`, {
              body: { ...app, status: { ...(app.status as object), conditions } },
              signal: ctx.signal,
            });
          } catch (e) {
            if (e instanceof KubeRequestError && e.status === 409) conflicts.push(e.message);
            throw e; // a failed reconcile is retried, rate-limited
          }
        },
      },
    ]);
    await createApp(ns, 'web', 'orders');
    await vi.waitFor(
      async () => {
        const app = await client.getJSON<{ status?: { conditions?: StatusCondition[] } }>(
          `${API}/namespaces/${ns}/apps/web`,
        );
        expect(app.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      },
      { timeout: 20_000, interval: 100 },
    );
    // The provoked conflict, and any a retry met while the cache was a write behind: each failed and was retried.
    expect(conflicts.length).toBeGreaterThanOrEqual(1);
    expect(m.controller('status')!.stats.errors).toBe(conflicts.length);
    await vi.waitFor(() => expect(m.changelog.get('referrer', `status|${appKey(ns, 'web')}`)?.state).toBe('Resolved'), {
      timeout: 15_000,
    });
  });

  it("forWakeOn 'generation': status and label writes to an App do not queue it, a spec change does; a 409 retried with requeueAfter ends written", async () => {
    const ns = await cluster.newNamespace('forwake');
    await createDatabase(ns, 'orders');
    const reconciles: { generation: number | undefined; resourceVersion: string | undefined }[] = [];
    let conflicts = 0;
    const m = startManager([
      {
        name: 'apps',
        for: { group: GROUP, kind: 'App', namespace: ns },
        forWakeOn: 'generation',
        async reconcile(ctx) {
          const app = ctx.object!;
          reconciles.push({ generation: app.metadata.generation, resourceVersion: app.metadata.resourceVersion });
          ctx.resolve(`${DB}/${ns}/${databaseRefOf(app.spec)}`, 'spec.databaseRef');
          if (observedOf(app.status) === databaseRefOf(app.spec)) return;
          if (reconciles.length === 1) {
            // Someone else writes the App's status first: the cached resourceVersion is stale, and the
            // newer App, a status write, queues nothing.
            await client.request('PATCH', `${API}/namespaces/${ns}/apps/${app.metadata.name}/status`, {
              contentType: 'application/merge-patch+json',
              body: { status: { resolvedBy: { other: 'yes' } } },
            });
          }
          try {
            await client.request('PATCH', `${API}/namespaces/${ns}/apps/${app.metadata.name}/status`, {
              contentType: 'application/merge-patch+json',
              body: {
                metadata: { resourceVersion: app.metadata.resourceVersion },
                status: { resolvedBy: { observed: databaseRefOf(app.spec) } },
              },
              signal: ctx.signal,
            });
          } catch (e) {
            if (!(e instanceof KubeRequestError && e.status === 409)) throw e;
            conflicts++;
            return { requeueAfter: 200 };
          }
        },
      },
    ]);
    const observed = async () =>
      observedOf((await client.getJSON<{ status?: unknown }>(`${API}/namespaces/${ns}/apps/web`)).status);
    await createApp(ns, 'web', 'orders');
    await vi.waitFor(async () => expect(await observed()).toBe('orders'), { timeout: 20_000, interval: 100 });
    expect(conflicts).toBeGreaterThanOrEqual(1);
    // Settled: the Database cache primed (it queues its referrers) and the requeueAfter has fired.
    const queue = m.controller('apps')!.queue;
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Active'), { timeout: 15_000 });
    await vi.waitFor(
      () =>
        expect({ ...queue.stats(), waiting: queue.waiting() }).toMatchObject({ depth: 0, processing: 0, waiting: 0 }),
      { timeout: 5_000 },
    );
    const settled = reconciles.length;
    // Status and label writes leave the generation: nothing is queued.
    await client.request('PATCH', `${API}/namespaces/${ns}/apps/web/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: { resolvedBy: { note: 'status only' } } },
    });
    await client.request('PATCH', `${API}/namespaces/${ns}/apps/web`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { touched: 'yes' } } },
    });
    await vi.waitFor(() => expect(queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(reconciles).toHaveLength(settled);
    // A spec change bumps the generation and queues the App.
    await client.request('PATCH', `${API}/namespaces/${ns}/apps/web`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { databaseRef: { name: 'billing' } } },
    });
    await vi.waitFor(async () => expect(await observed()).toBe('billing'), { timeout: 20_000, interval: 100 });
    expect(reconciles.at(-1)!.generation).toBe(2);
    expect(m.controller('apps')!.stats.errors).toBe(0);
  });

  it('referrers deleted, or forgotten without `for`, drop their references; the kind watch closes after the last', async () => {
    const ns = await cluster.newNamespace('gone');
    await createDatabase(ns, 'orders');
    const external = new Set<ObjectKey>([appKey(ns, 'ext')]);
    const before = await dbWatches();
    const m = startManager([
      {
        name: 'apps',
        for: { group: GROUP, kind: 'App', namespace: ns },
        reconcile: (ctx) => void ctx.resolve(`${DB}/${ns}/${databaseRefOf(ctx.object!.spec)}`, 'spec.databaseRef'),
      },
      {
        name: 'external',
        reconcile: (ctx) => {
          if (!external.has(ctx.key)) return { forget: true };
          ctx.resolve(`${DB}/${ns}/orders`, 'spec.databaseRef');
        },
      },
    ]);
    await createApp(ns, 'web', 'orders');
    m.controller('external')!.enqueue(appKey(ns, 'ext'));
    await vi.waitFor(() => expect(m.registry.referrersOf(`${DB}/${ns}/orders`)).toHaveLength(2), { timeout: 15_000 });
    await vi.waitFor(async () => expect(await dbWatches()).toBe(before + 1), { timeout: 15_000 });

    await client.request('DELETE', `${API}/namespaces/${ns}/apps/web`);
    await vi.waitFor(() => expect(m.registry.referrers('apps')).toEqual([]), { timeout: 15_000 });
    expect(m.referenceControllers.state(DB)).toBe('Active'); // ext still refers to it

    m.controller('external')!.forget(appKey(ns, 'ext'));
    external.delete(appKey(ns, 'ext'));
    expect(m.registry.kindCount(DB)).toBe(0);
    expect(m.changelog.get('referrer', `external|${appKey(ns, 'ext')}`)).toBeUndefined();
    await vi.waitFor(() => expect(m.referenceControllers.state(DB)).toBe('Cancelled'), { timeout: 15_000 });
    await vi.waitFor(async () => expect(await dbWatches()).toBe(before), { timeout: 15_000 });
  });
});
