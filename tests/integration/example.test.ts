import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it, vi } from 'vitest';
import { Discovery, KubeClient, KubeRequestError } from '@/lib/kube';
import { getStuck } from '@/server/api';
import { exampleManifests } from '@/server/cluster';
import { parseConfig } from '@/server/config';
import { ensureDemoKinds } from '@/server/demo';
import { startExample, type Example } from '@/server/example';
import { startRuntime, type Runtime } from '@/server/runtime';
import { callHandler } from '../unit/server/call';
import { getTestCluster } from '../setup/cluster';

/*
 * deploy/example applied unchanged to the test cluster (embedded or
 * kube-apiserver), observed by refwatch's runtime through a kubeconfig as a
 * user's cluster is: the same four dangling references with the same
 * reasons on both, and App shop resolving once its Database turns Ready.
 */

const clusterKind = inject('refwatchCluster').kind;
const manifests = exampleManifests('deploy/example');
let rt: Runtime;
let example: Example;
let dir: string;

/** applyManifests creates each object at the resource discovery names for its kind; one already there is left as is. */
async function applyManifests(client: KubeClient, objects: readonly object[]): Promise<void> {
  const discovery = new Discovery(client);
  for (const obj of objects as { apiVersion: string; kind: string; metadata: { namespace?: string } }[]) {
    const slash = obj.apiVersion.indexOf('/');
    const r = await discovery.resolve({ group: slash < 0 ? '' : obj.apiVersion.slice(0, slash), kind: obj.kind });
    const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
    const url = r.namespaced
      ? `${base}/namespaces/${obj.metadata.namespace ?? 'default'}/${r.resource}`
      : `${base}/${r.resource}`;
    // A kind whose CRD was just created may take a moment to be served: 404 until then.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.request('POST', url, { body: obj });
        break;
      } catch (e) {
        if (e instanceof KubeRequestError && e.status === 409) break;
        if (!(e instanceof KubeRequestError && e.status === 404 && attempt < 100)) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

beforeAll(async () => {
  const cluster = await getTestCluster();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-example-'));
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  fs.writeFileSync(kubeconfig, JSON.stringify(cluster.kubeconfig), { mode: 0o600 });
  const client = KubeClient.fromFile(kubeconfig);
  await ensureDemoKinds(client, { install: true });
  await applyManifests(client, manifests);
  // A real cluster gets nothing from refwatch unless asked: the example is applied above, and its controllers started here.
  rt = await startRuntime(
    parseConfig({
      REFWATCH_CLUSTER: 'kubeconfig',
      KUBECONFIG: kubeconfig,
      REFWATCH_GRACE: '1s',
      REFWATCH_EXAMPLE: 'none',
    }),
  );
  example = startExample({ manager: rt.manager, client: rt.connection.client, manifests, readyAfterMs: 1_500 });
});

afterAll(async () => {
  await example?.stop();
  await rt?.dispose();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface StuckItem {
  key: string;
  reason: string;
  message: string;
  fix?: string;
  referent?: string;
}

async function stuckInExample(): Promise<Record<string, StuckItem>> {
  const res = await callHandler(rt, getStuck, '/api/v1/stuck?olderThan=0s&namespace=refwatch-example');
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body.items as StuckItem[]).map((s) => [s.key.split('/').pop()!, s]));
}

it(`lists the example's dangling references with their reasons, the cert-manager and External Secrets scene's among them (${clusterKind})`, async () => {
  await vi.waitFor(
    async () => {
      const stuck = await stuckInExample();
      expect(stuck.worker?.reason).toBe('NotFound');
      expect(stuck.reporter?.reason).toBe('NotFound');
      expect(stuck.analytics?.reason).toBe('KindUnknown');
      expect(stuck.checkout?.reason).toBe('NotFound');
      expect(stuck.storefront?.reason).toBe('NotFound');
      expect(stuck['payments-db']?.reason).toBe('NotFound');
      expect(stuck['web-v2']?.reason).toBe('NoMatch');
    },
    { timeout: 15_000, interval: 200 },
  );
  const stuck = await stuckInExample();
  expect(stuck.worker!.message).toMatch(/db-pasword.*did you mean db-password\?/);
  expect(stuck.reporter!.message).toContain('refwatch-shared');
  expect(stuck.reporter!.fix).toContain('refwatch-shared');
  expect(stuck.analytics!.message).toMatch(/PostgresCluster/);
  // A Deployment's Pod template is read: its missing ServiceAccount is why it would create no Pods.
  expect(stuck.checkout!.referent).toBe('ServiceAccount/refwatch-example/checkout');
  // On the real tier an earlier test may leave a ServiceAccount checkout in a namespace of its own (the real
  // cluster runs no namespace controller), and then the fix says to copy that one.
  expect(stuck.checkout!.fix).toMatch(
    /create ServiceAccount(\/refwatch-example\/checkout| checkout in refwatch-example \(a copy of the one in namespace )/,
  );
  // A Service whose selector matches no Pod has no endpoints: what would match is named.
  expect(stuck['web-v2']!.message).toBe(
    '0 Pods in refwatch-example match app=web-v2; 1 Pod has app=web: did you mean app=web?',
  );
  expect(stuck['web-v2']!.fix).toContain('app=web');
  // The cert-manager + External Secrets scene: --packs auto turned both packs on from their CRDs.
  expect(stuck.storefront!.message).toBe(
    'ClusterIssuer.cert-manager.io//letsencrypt-prd not found; did you mean letsencrypt-prod?',
  );
  expect(stuck.storefront!.fix).toBe(
    'set spec.issuerRef.name to letsencrypt-prod, or create ClusterIssuer.cert-manager.io//letsencrypt-prd',
  );
  expect(stuck['payments-db']!.message).toBe('SecretStore.external-secrets.io/refwatch-example/vault not found');
  // Pod web's ServiceAccount, ConfigMap and Secret all resolve: it is never stuck.
  expect(stuck.web).toBeUndefined();
  await vi.waitFor(
    () => expect(rt.changelog.get('referrer', 'rules/Pod|Pod/refwatch-example/web')?.state).toBe('Resolved'),
    { timeout: 10_000 },
  );
});

it(`App shop resolves by itself once Database orders turns Ready (${clusterKind})`, async () => {
  const key = `${example.controllers[0]}|App.demo.refwatch.dev/refwatch-example/shop`;
  await vi.waitFor(() => expect(rt.changelog.get('referrer', key)?.state).toBe('Resolved'), {
    timeout: 20_000,
    interval: 200,
  });
  const stuck = await stuckInExample();
  expect(stuck.shop).toBeUndefined();
  expect(Object.keys(stuck).sort()).toEqual([
    'analytics',
    'checkout',
    'payments-db',
    'reporter',
    'storefront',
    'web-v2',
    'worker',
  ]);
});
