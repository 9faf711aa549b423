// The controller's test on refwatch/testing: a cluster of its own per run (the embedded one, or kube-apiserver +
// etcd with REFWATCH_TEST_CLUSTER=real), the compiled controller run against it as it runs in production.
// Run it with `npm test` (node --test) after `npm run build`.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { readManifests, startTestCluster, type KubeObject, type TestCluster } from 'refwatch/testing';

const GROUP = 'demo.refwatch.dev';
const demo = (kind: string, name: string, spec: object) => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind,
  metadata: { name, namespace: 'shop' },
  spec,
});
const readyOf = (o: KubeObject | undefined) =>
  (o?.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === 'Ready',
  );

let cluster: TestCluster;
let controller: ChildProcess;
let output = '';

before(async () => {
  cluster = await startTestCluster({
    crds: readManifests(new URL('../crds.yaml', import.meta.url)),
    namespaces: ['shop'],
    objects: [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-password', namespace: 'shop' },
        stringData: { p: 'x' },
      },
      demo('Database', 'orders', {}),
      demo('Cache', 'sessions', {}),
      demo('App', 'web', {
        databaseRef: { name: 'orders' },
        cacheRef: { name: 'sessions' },
        secretRef: { name: 'db-password' },
      }),
    ],
  });
  controller = spawn(process.execPath, [new URL('./controller.js', import.meta.url).pathname], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  controller.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  controller.stderr!.on('data', (d: Buffer) => (output += d.toString()));
});

after(async () => {
  if (controller.exitCode === null && controller.signalCode === null) {
    controller.kill('SIGKILL');
    await once(controller, 'exit');
  }
  await cluster.stop();
});

/** printed resolves once the controller has printed a line matching re, and fails after 30 s quoting what it printed. */
async function printed(re: RegExp): Promise<void> {
  for (const deadline = Date.now() + 30_000; !re.test(output);) {
    if (Date.now() > deadline) assert.fail(`the controller never printed ${re}; it printed:\n${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const markReady = (kind: 'databases' | 'caches', name: string) =>
  cluster.client.request('PATCH', `/apis/${GROUP}/v1alpha1/namespaces/shop/${kind}/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ready' }] } },
  });

test('an App waits, Ready=False, while its Database and Cache are not Ready', async () => {
  // The first verdict may be NotPrimed, written before the referents' caches hold their snapshots.
  const app = await cluster.waitFor(`App.${GROUP}/shop/web`, (o) => readyOf(o)?.reason === 'NotReady', 30_000);
  assert.equal(readyOf(app)?.status, 'False');
});

test('the App becomes Ready=True as soon as its referents are Ready', async () => {
  await markReady('caches', 'sessions');
  await markReady('databases', 'orders');
  await cluster.waitFor(`App.${GROUP}/shop/web`, (o) => readyOf(o)?.status === 'True', 30_000);
  await printed(/^App shop\/web resolved$/m);
});

test('a deleted Secret sends the App back to Ready=False, naming it', async () => {
  await cluster.delete('Secret/shop/db-password');
  const app = await cluster.waitFor(`App.${GROUP}/shop/web`, (o) => readyOf(o)?.reason === 'NotFound', 30_000);
  assert.equal(readyOf(app)?.status, 'False');
});

test('SIGTERM stops the controller cleanly', async () => {
  controller.kill('SIGTERM');
  const [code] = (await once(controller, 'exit')) as [number | null];
  assert.equal(code, 0);
  await printed(/^app-controller stopped$/m);
});
