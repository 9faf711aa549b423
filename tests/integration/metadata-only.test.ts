import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { explain } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import {
  KubeClient,
  LAST_APPLIED,
  SharedInformerPool,
  type KubeTransport,
  type Query,
  type ReadOptions,
  type WatchStream,
} from '@/lib/kube';
import type { KubeObject } from '@/lib/model';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * Metadata-only caches against both clusters (REFWATCH_TEST_CLUSTER=embedded|real):
 * a controller whose ConfigMaps reference Secrets resolves them from a cache of
 * PartialObjectMetadata that never holds a Secret's data.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let client: KubeClient;
const running: Manager[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
  cluster.faults?.reset();
});

/** HeldWatches passes every request through, except that new watches wait while held. */
class HeldWatches implements KubeTransport {
  readonly server: string;
  private gate: Promise<void> = Promise.resolve();
  private openGate = () => {};
  watchesAsked = 0;

  constructor(private readonly inner: KubeClient) {
    this.server = inner.server;
  }
  getJSON<T>(path: string, query?: Query, signal?: AbortSignal, opts?: ReadOptions): Promise<T> {
    return this.inner.getJSON<T>(path, query, signal, opts);
  }
  async openStream(path: string, query: Query, signal: AbortSignal, opts?: ReadOptions): Promise<WatchStream> {
    this.watchesAsked++;
    await this.gate;
    return this.inner.openStream(path, query, signal, opts);
  }
  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }
  release(): void {
    this.openGate();
  }
}

const secretsPath = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;
const DATA = { password: Buffer.from('hunter2-'.repeat(64)).toString('base64') };

async function createSecret(ns: string, name: string): Promise<void> {
  const applied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: DATA });
  await client.request('POST', secretsPath(ns), {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, labels: { tier: 'db' }, annotations: { [LAST_APPLIED]: applied, owner: 'shop' } },
      data: DATA,
      stringData: { extra: 'plain' },
    },
  });
}
async function deleteSecret(ns: string, name: string): Promise<void> {
  await client.request('DELETE', `${secretsPath(ns)}/${name}`);
}
async function createReferrer(ns: string, name: string, secret: string): Promise<void> {
  await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, annotations: { 'needs-secret': secret } } },
  });
}

/** startManager runs a controller whose ConfigMaps (in ns) reference the Secret their annotation names; states holds each one's last resolution. */
function startManager(
  ns: string,
  transport: KubeTransport = client,
): { manager: Manager; pool: SharedInformerPool; states: Map<string, string> } {
  const pool = new SharedInformerPool({ client: transport, reflector: { backoff: { initialMs: 100, maxMs: 1000 } } });
  const manager = new Manager({ source: pool, grace: 60_000, statsIntervalMs: 0 });
  const states = new Map<string, string>();
  manager.addController({
    name: 'needs-secret',
    for: { group: '', kind: 'ConfigMap', namespace: ns },
    reconcile(ctx) {
      const secret = ctx.object?.metadata.annotations?.['needs-secret'];
      if (!ctx.object || !secret) return;
      states.set(
        ctx.object.metadata.name,
        ctx.resolve(`Secret/${ns}/${secret}`, "metadata.annotations['needs-secret']").state,
      );
    },
  });
  manager.start();
  running.push(manager);
  return { manager, pool, states };
}

const secretWatch = (pool: SharedInformerPool) => pool.watches().filter((w) => w.target.kind === 'Secret');

function cachedSecrets(manager: Manager): KubeObject[] {
  return [...(manager.referenceControllers.subscriptionOf('Secret')?.store.values() ?? [])];
}

function expectMetadataOnly(objects: KubeObject[]): void {
  expect(objects.length).toBeGreaterThan(0);
  for (const o of objects) {
    expect(Object.keys(o).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(o).not.toHaveProperty('data');
    expect(o).not.toHaveProperty('stringData');
    expect(o.metadata.annotations?.[LAST_APPLIED]).toBeUndefined();
    // Of managedFields, only the name of the manager that changed the object last is kept (for history).
    const kept = o.metadata.managedFields as unknown[] | undefined;
    if (kept !== undefined) expect(kept).toEqual([{ manager: expect.any(String) }]);
  }
}

describe(`metadata-only caches (${clusterKind} cluster)`, () => {
  it('caches referenced Secrets as metadata only, and resolves and unresolves referrers on existence', async () => {
    const ns = await cluster.newNamespace('meta-exists');
    await createSecret(ns, 'db');
    await createReferrer(ns, 'web', 'db');
    await createReferrer(ns, 'api', 'later');
    const { manager, pool, states } = startManager(ns);
    await expect.poll(() => [states.get('web'), states.get('api')], { timeout: 15_000 }).toEqual(['Ready', 'NotFound']);

    expect(secretWatch(pool)).toMatchObject([{ metadataOnly: true, primed: true }]);
    const cached = manager.referenceControllers.cached(`Secret/${ns}/db`)!;
    expect(cached).toMatchObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: ns, labels: { tier: 'db' }, annotations: { owner: 'shop' } },
    });
    expect(cached.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expectMetadataOnly(cachedSecrets(manager));

    // explain finds similar names from metadata alone.
    await createSecret(ns, 'db-password');
    await createReferrer(ns, 'typo', 'db-pasword');
    await expect.poll(() => states.get('typo'), { timeout: 15_000 }).toBe('NotFound');
    const why = explain(manager, `ConfigMap/${ns}/typo`);
    expect(why.ok && why.value.controllers[0]?.references[0]).toMatchObject({
      state: 'NotFound',
      suggestions: [`Secret/${ns}/db-password`],
    });

    await createSecret(ns, 'later');
    await expect.poll(() => states.get('api'), { timeout: 15_000 }).toBe('Ready');
    await deleteSecret(ns, 'db');
    await expect.poll(() => states.get('web'), { timeout: 15_000 }).toBe('NotFound');
    expectMetadataOnly(cachedSecrets(manager));
  });

  it('relists after 410 and unresolves a referrer whose Secret went while the watch was down', async () => {
    const ns = await cluster.newNamespace('meta-expired');
    for (const n of ['a', 'b']) {
      await createSecret(ns, n);
      await createReferrer(ns, `uses-${n}`, n);
    }
    const held = new HeldWatches(client);
    const { manager, pool, states } = startManager(ns, held);
    await expect
      .poll(() => [states.get('uses-a'), states.get('uses-b')], { timeout: 15_000 })
      .toEqual(['Ready', 'Ready']);
    await expect.poll(() => secretWatch(pool)[0]?.phase).toBe('Watching');

    const watchesBefore = secretWatch(pool)[0]!.watchesOpened;
    held.hold();
    const asked = held.watchesAsked;
    cluster.faults?.dropWatches();
    if (cluster.restart) {
      // After a restart kube-apiserver's watch cache starts from the current resourceVersion, which a write
      // elsewhere moved past the reflector's: resuming from the reflector's gets 410, and it relists.
      await createReferrer(ns, 'unrelated', 'none');
      await cluster.restart();
      await deleteSecret(ns, 'b');
    } else {
      await expect.poll(() => held.watchesAsked, { timeout: 10_000 }).toBeGreaterThan(asked);
      await deleteSecret(ns, 'b');
      cluster.faults!.compactNow();
    }
    held.release();

    await expect.poll(() => states.get('uses-b'), { timeout: 60_000 }).toBe('NotFound');
    expect(states.get('uses-a')).toBe('Ready');
    const w = secretWatch(pool)[0]!;
    if (cluster.restart) {
      // kube-apiserver may send a bookmark at its newest resourceVersion as it shuts down, and a reflector that
      // took it resumes where the restarted watch cache begins, with no 410: the deletion then comes as an event.
      // Either way the watch was opened again and the deletion was seen.
      expect([1, 2]).toContain(w.lists);
      expect(w.watchesOpened).toBeGreaterThan(watchesBefore);
    } else expect(w.lists).toBe(2);
    expect(w.metadataOnly).toBe(true);
    expectMetadataOnly(cachedSecrets(manager));
  }, 120_000);

  it('serves a kind subscribed whole and metadata-only from one watch, and goes back to metadata only', async () => {
    const ns = await cluster.newNamespace('meta-shared');
    await createSecret(ns, 'db');
    await createReferrer(ns, 'web', 'db');
    const before = (await cluster.openWatches()).secrets ?? 0;
    const { manager, pool, states } = startManager(ns);
    await expect.poll(() => states.get('web'), { timeout: 15_000 }).toBe('Ready');
    await expect.poll(async () => (await cluster.openWatches()).secrets ?? 0, { timeout: 15_000 }).toBe(before + 1);

    // A controller of Secrets needs them whole: the same watch restarts with whole objects.
    const seen = new Map<string, KubeObject>();
    manager.addController({
      name: 'secret-reader',
      for: { group: '', kind: 'Secret' },
      reconcile(ctx) {
        if (ctx.object?.metadata.namespace === ns) seen.set(ctx.object.metadata.name, ctx.object);
      },
    });
    await expect
      .poll(() => (seen.get('db') as { data?: Record<string, string> } | undefined)?.data?.password, {
        timeout: 15_000,
      })
      .toBe(DATA.password);
    expect(secretWatch(pool)).toMatchObject([{ metadataOnly: false, primed: true, subscribers: 2 }]);
    await expect.poll(async () => (await cluster.openWatches()).secrets ?? 0, { timeout: 15_000 }).toBe(before + 1);
    await deleteSecret(ns, 'db');
    await expect.poll(() => states.get('web'), { timeout: 15_000 }).toBe('NotFound');

    // Its last whole-object subscriber gone, the watch is metadata-only again and the data leaves the cache.
    await createSecret(ns, 'db');
    await expect.poll(() => states.get('web'), { timeout: 15_000 }).toBe('Ready');
    await manager.removeController('secret-reader');
    await expect
      .poll(() => secretWatch(pool).map((w) => [w.metadataOnly, w.primed, w.lists]), { timeout: 15_000 })
      .toEqual([[true, true, 1]]);
    expectMetadataOnly(cachedSecrets(manager));
    await expect.poll(async () => (await cluster.openWatches()).secrets ?? 0, { timeout: 15_000 }).toBe(before + 1);
    await deleteSecret(ns, 'db');
    await expect.poll(() => states.get('web'), { timeout: 15_000 }).toBe('NotFound');
  });
});
