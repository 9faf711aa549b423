import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { conditionsOf } from '../../lib/engine';
import { KubeClient, sleep } from '../../lib/kube';
import { demoManifests } from '../../server/cluster';
import { ensureDemoKinds, demoPath, secretPath } from '../../server/demo/kinds';
import { startEmbeddedServer } from '../../lib/embedded';
import { startRealCluster } from './real-cluster';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * ExampleCluster is a cluster serving the demo's kinds, for programs that run
 * outside the test process (the example controller, the code of docs/library.md):
 * they find it through the kubeconfig file.
 */
export interface ExampleCluster {
  kind: 'embedded' | 'real';
  kubeconfigPath: string;
  client: KubeClient;
  /** Stops the cluster and removes the kubeconfig. */
  stop(): Promise<void>;
}

export async function startExampleCluster(kind: 'embedded' | 'real'): Promise<ExampleCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-example-'));
  const kubeconfigPath = path.join(dir, 'kubeconfig.yaml');
  let stopCluster: () => Promise<void>;
  if (kind === 'embedded') {
    const server = await startEmbeddedServer({ objects: demoManifests(root), token: randomBytes(24).toString('hex') });
    writeFileSync(kubeconfigPath, stringify(server.kubeconfig()), { mode: 0o600 });
    stopCluster = () => server.stop();
  } else {
    const cluster = await startRealCluster();
    writeFileSync(kubeconfigPath, stringify(cluster.kubeconfig), { mode: 0o600 });
    stopCluster = () => cluster.stop();
  }
  const client = KubeClient.fromFile(kubeconfigPath);
  try {
    await ensureDemoKinds(client, { install: true });
  } catch (e) {
    await stopCluster();
    throw e;
  }
  return {
    kind,
    kubeconfigPath,
    client,
    stop: async () => {
      client.close();
      await stopCluster();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const SHOP = 'shop';

/**
 * seedShop creates namespace shop with App web and its referents: Cache
 * sessions (Ready), Secret db-password, and Database orders, which is not
 * Ready until markReady is called.
 */
export async function seedShop(client: KubeClient): Promise<void> {
  const ns = SHOP;
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  await client.request('POST', secretPath(ns), {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-password', namespace: ns },
      stringData: { password: 'example' },
    },
  });
  const demo = (kind: 'Database' | 'Cache' | 'App', name: string, spec: object) => ({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind,
    metadata: { name, namespace: ns },
    spec,
  });
  await client.request('POST', demoPath('Database', ns), { body: demo('Database', 'orders', {}) });
  await client.request('POST', demoPath('Cache', ns), { body: demo('Cache', 'sessions', {}) });
  await markReady(client, 'Cache', 'sessions');
  await client.request('POST', demoPath('App', ns), {
    body: demo('App', 'web', {
      databaseRef: { name: 'orders' },
      cacheRef: { name: 'sessions' },
      secretRef: { name: 'db-password' },
    }),
  });
}

export async function markReady(client: KubeClient, kind: 'Database' | 'Cache', name: string): Promise<void> {
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await client.request('PATCH', demoPath(kind, SHOP, name, 'status'), {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        readyAt: at,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ready', lastTransitionTime: at },
        ],
      },
    },
  });
}

/**
 * driveShop plays the cluster's side: once App web's controller has written
 * Ready=False with reason NotReady (it found Database orders, not Ready), the
 * Database becomes Ready, and driveShop resolves when the App's status says
 * Ready=True.
 */
export async function driveShop(
  client: KubeClient,
  signal: AbortSignal,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  let databaseReady = false;
  for (;;) {
    const app = await client.getJSON<{ apiVersion: string; kind: string; metadata: { name: string } }>(
      demoPath('App', SHOP, 'web'),
      {},
      signal,
    );
    const ready = conditionsOf(app as Parameters<typeof conditionsOf>[0]).find((c) => c.type === 'Ready');
    if (ready?.status === 'True') {
      log('App shop/web has Ready=True in its status');
      return;
    }
    if (ready?.status === 'False' && ready.reason === 'NotReady' && !databaseReady) {
      log('App shop/web has Ready=False (NotReady): marking Database shop/orders Ready');
      await markReady(client, 'Database', 'orders');
      databaseReady = true;
    }
    await sleep(100, signal);
  }
}
