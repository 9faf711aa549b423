import { existsSync } from 'node:fs';
import { ApiException, CoreV1Api, Watch } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { getTestCluster, toKubeConfig, type TestCluster } from '../setup/cluster';
import { kubeRequest } from '../setup/kube-http';
import { startRealCluster } from '../setup/real-cluster';

const kind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let core: CoreV1Api;

beforeAll(async () => {
  cluster = await getTestCluster();
  core = toKubeConfig(cluster.kubeconfig).makeApiClient(CoreV1Api);
});

async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof ApiException) return e.code;
    throw e;
  }
}

describe(`test cluster (${kind})`, () => {
  it('creates, reads and deletes a ConfigMap in a fresh namespace', async () => {
    const namespace = await cluster.newNamespace('smoke');
    expect(namespace).toMatch(/^smoke-[0-9a-f]{8}$/);

    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { mode: 'fast' } },
    });
    const read = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(read.data).toEqual({ mode: 'fast' });

    await core.deleteNamespacedConfigMap({ namespace, name: 'settings' });
    expect(await statusOf(core.readNamespacedConfigMap({ namespace, name: 'settings' }))).toBe(404);
  });

  it('gives each call to newNamespace its own namespace', async () => {
    const [a, b] = await Promise.all([cluster.newNamespace('twin'), cluster.newNamespace('twin')]);
    expect(a).not.toBe(b);
    expect((await core.readNamespace({ name: a! })).metadata?.name).toBe(a);
  });

  let finishedNamespace = '';
  it('hands out a namespace that is deleted when the test finishes', async () => {
    finishedNamespace = await cluster.newNamespace('cleanup');
    expect((await core.readNamespace({ name: finishedNamespace })).status?.phase).toBe('Active');
  });

  it('has deleted (or, with no controller to finalize it, begun deleting) the previous namespace', async () => {
    expect(finishedNamespace).not.toBe('');
    const gone = await core.readNamespace({ name: finishedNamespace }).then(
      (ns) => ns.status?.phase === 'Terminating',
      (e: unknown) => e instanceof ApiException && e.code === 404,
    );
    expect(gone).toBe(true);
  });

  it('counts an open client-node watch and stops counting it after abort', async () => {
    const namespace = await cluster.newNamespace('watch');
    const configmaps = async () => (await cluster.openWatches()).configmaps ?? 0;
    const before = await configmaps();

    const seen: string[] = [];
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const watch = await new Watch(toKubeConfig(cluster.kubeconfig)).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      {},
      (phase, obj: { metadata?: { name?: string } }) => seen.push(`${phase} ${obj.metadata?.name}`),
      () => ended(),
    );

    await expect.poll(configmaps).toBe(before + 1);
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'observed' } } });
    await expect.poll(() => seen).toContain('ADDED observed');

    watch.abort();
    await done;
    await expect.poll(configmaps).toBe(before);
  });
});

describe.runIf(kind === 'real')('real cluster', () => {
  it('refuses the restricted user with 403', async () => {
    const namespace = await cluster.newNamespace('rbac');
    const restricted = toKubeConfig(cluster.restrictedKubeconfig!).makeApiClient(CoreV1Api);
    expect(await statusOf(restricted.listNamespacedConfigMap({ namespace }))).toBe(403);
  });

  it('keeps its objects and address across a kube-apiserver restart', async () => {
    const namespace = await cluster.newNamespace('restart');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'survivor' }, data: { a: '1' } } });

    await cluster.restart!();

    const read = await core.readNamespacedConfigMap({ namespace, name: 'survivor' });
    expect(read.data).toEqual({ a: '1' });
  });

  it('leaves no server or files behind after stop()', async () => {
    const second = await startRealCluster();
    const endpoint = { url: second.url, token: second.token, ca: second.ca };
    expect((await kubeRequest(endpoint, 'GET', '/readyz')).status).toBe(200);

    await second.stop();

    await expect(kubeRequest(endpoint, 'GET', '/readyz')).rejects.toThrow(/ECONNREFUSED/);
    expect(existsSync(second.dir)).toBe(false);
    await expect(second.restart()).rejects.toThrow(/after stop/);
  });
});
