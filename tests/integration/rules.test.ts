import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReferrerEntity } from '@/lib/changelog';
import { explain } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { observeWithRules } from '@/server/observer';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * The built-in core pack observing a cluster whose controllers are not ours:
 * one engine controller per referrer kind the pack names, as the runtime runs
 * it. Runs against the embedded server and kube-apiserver alike.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let client: KubeClient;
const managers: Manager[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

async function observeCore(): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core'], rulesFiles: [] });
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    grace: 1_000,
    statsIntervalMs: 0,
    readiness: (kind) => observer.readiness(kind),
  });
  observer.attach(manager);
  managers.push(manager);
  manager.start();
  return manager;
}

const POD = 'rules/Pod';
const INGRESS = 'rules/Ingress.networking.k8s.io';

async function create(path: string, body: object): Promise<void> {
  await client.request('POST', path, { body });
}

/**
 * A Pod kube-apiserver accepts with no controller manager: a container with an
 * image, and no service account token (nothing creates the default ServiceAccount).
 */
function pod(name: string, configMap: string, secret: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'web',
          image: 'registry.k8s.io/pause:3.10',
          envFrom: [{ secretRef: { name: secret } }],
          volumeMounts: [{ name: 'config', mountPath: '/etc/web' }],
        },
      ],
      volumes: [{ name: 'config', configMap: { name: configMap } }],
    },
  };
}

function referrer(manager: Manager, controller: string, key: string): ReferrerEntity | undefined {
  return manager.changelog.get('referrer', `${controller}|${key}`);
}

describe(`core rule pack on the ${clusterKind} cluster`, () => {
  it('sees a Pod reference its ConfigMap volume and its envFrom Secret, and resolves it', async () => {
    const ns = await cluster.newNamespace('rules-pod');
    await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'web-config' }, data: { mode: 'fast' } });
    await create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'web-secrets' }, stringData: { token: 'x' } });
    const manager = await observeCore();
    await create(`/api/v1/namespaces/${ns}/pods`, pod('web', 'web-config', 'web-secrets'));

    const key = `Pod/${ns}/web`;
    await expect.poll(() => referrer(manager, POD, key)?.state, { timeout: 20_000 }).toBe('Resolved');
    expect(
      manager.registry
        .referencesOf(POD, key)
        .map((r) => [r.referent, r.fieldPath])
        .sort(),
    ).toEqual([
      [`ConfigMap/${ns}/web-config`, 'spec.volumes[0].configMap.name'],
      [`Secret/${ns}/web-secrets`, 'spec.containers[0].envFrom[0].secretRef.name'],
    ]);
    const explained = explain(manager, key);
    expect(explained.ok && explained.value.controllers[0]!.references.map((r) => r.state)).toEqual(['Ready', 'Ready']);
  });

  it('sees an Ingress reference its backend Service', async () => {
    const ns = await cluster.newNamespace('rules-ingress');
    await create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'storefront' },
      spec: { selector: { app: 'storefront' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const manager = await observeCore();
    await create(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      metadata: { name: 'shop' },
      spec: {
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                { path: '/', pathType: 'Prefix', backend: { service: { name: 'storefront', port: { number: 80 } } } },
              ],
            },
          },
        ],
      },
    });

    const key = `Ingress.networking.k8s.io/${ns}/shop`;
    await expect.poll(() => referrer(manager, INGRESS, key)?.state, { timeout: 20_000 }).toBe('Resolved');
    expect(manager.registry.referencesOf(INGRESS, key)).toEqual([
      { referent: `Service/${ns}/storefront`, fieldPath: 'spec.rules[0].http.paths[0].backend.service.name' },
    ]);
  });

  it('explains a missing ConfigMap as NotFound, then resolves the Pod through the watch once it is created', async () => {
    const ns = await cluster.newNamespace('rules-missing');
    await create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'api-secrets' }, stringData: { token: 'x' } });
    const manager = await observeCore();
    await create(`/api/v1/namespaces/${ns}/pods`, pod('api', 'api-config', 'api-secrets'));

    const key = `Pod/${ns}/api`;
    await expect.poll(() => referrer(manager, POD, key)?.state, { timeout: 20_000 }).toBe('NotFound');
    const r = explain(manager, key);
    if (!r.ok) throw r.error;
    const missing = r.value.controllers[0]!.references.find((x) => x.referent === `ConfigMap/${ns}/api-config`);
    expect(missing).toMatchObject({ state: 'NotFound', fieldPath: 'spec.volumes[0].configMap.name' });
    expect(missing!.fix).toContain(`create ConfigMap/${ns}/api-config`);
    const reconcilesBefore = referrer(manager, POD, key)!.reconciles;

    // The Pod is not touched: only the ConfigMap's watch event can queue it again.
    await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'api-config' } });
    await expect.poll(() => referrer(manager, POD, key)?.state, { timeout: 20_000 }).toBe('Resolved');
    expect(referrer(manager, POD, key)!.reconciles).toBeGreaterThan(reconcilesBefore);
    const after = explain(manager, key);
    expect(after.ok && after.value.controllers[0]!.references.every((x) => x.state === 'Ready')).toBe(true);
  });

  it('drops a deleted Pod’s references', async () => {
    const ns = await cluster.newNamespace('rules-delete');
    const manager = await observeCore();
    await create(`/api/v1/namespaces/${ns}/pods`, pod('gone', 'gone-config', 'gone-secrets'));
    const key = `Pod/${ns}/gone`;
    await expect.poll(() => manager.registry.referencesOf(POD, key).length, { timeout: 20_000 }).toBe(2);

    // No kubelet holds an unscheduled Pod: it is deleted at once.
    await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/gone`, { query: { gracePeriodSeconds: 0 } });
    await expect.poll(() => manager.registry.referencesOf(POD, key).length, { timeout: 20_000 }).toBe(0);
    expect(referrer(manager, POD, key)).toBeUndefined();
    expect(manager.registry.referrersOf(`ConfigMap/${ns}/gone-config`)).toEqual([]);
  });

  it('leaves no watch running once the manager stops', async () => {
    const manager = await observeCore();
    await expect
      .poll(() => manager.source.watches().filter((w) => w.primed).length, { timeout: 20_000 })
      .toBeGreaterThan(0);
    managers.splice(managers.indexOf(manager), 1);
    await manager.stop();
    expect(manager.source.watches()).toEqual([]);
  });
});
