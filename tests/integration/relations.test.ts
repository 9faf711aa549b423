import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { stuck } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { observeWithRules } from '@/server/observer';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * The relations a real cluster breaks on, observed by the core and gateway
 * packs as the runtime runs them: a workload template naming a missing
 * ServiceAccount, a webhook whose Service was deleted, and a cross-namespace
 * HTTPRoute without a ReferenceGrant. Runs against the embedded server and
 * kube-apiserver alike.
 */

const clusterKind = inject('refwatchCluster').kind;
const GATEWAY = 'gateway.networking.k8s.io';
let cluster: TestCluster;
let client: KubeClient;
const managers: Manager[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

/** Bare Gateway API CRDs for the two kinds the grant test writes: enough to discover, store and watch them. */
function gatewayCrd(kind: string, plural: string, version: string): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // *.k8s.io groups are protected: the Gateway API's own CRDs carry this approval.
    metadata: {
      name: `${plural}.${GATEWAY}`,
      annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/gateway-api/pull/1538' },
    },
    spec: {
      group: GATEWAY,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  // Left installed afterwards: other test files may use the same CRDs on a shared cluster.
  for (const crd of [
    gatewayCrd('HTTPRoute', 'httproutes', 'v1'),
    gatewayCrd('ReferenceGrant', 'referencegrants', 'v1beta1'),
  ])
    await client
      .request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })
      .catch((e: { status?: number }) => {
        if (e.status !== 409) throw e;
      });
  await vi.waitFor(
    async () => {
      const v1 = await client.getJSON<{ resources: { kind: string }[] }>(`/apis/${GATEWAY}/v1`);
      const v1beta1 = await client.getJSON<{ resources: { kind: string }[] }>(`/apis/${GATEWAY}/v1beta1`);
      expect(v1.resources.map((r) => r.kind)).toContain('HTTPRoute');
      expect(v1beta1.resources.map((r) => r.kind)).toContain('ReferenceGrant');
    },
    { timeout: 30_000, interval: 250 },
  );
}, 60_000);

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  client?.close();
});

async function observe(): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core', 'gateway'], rulesFiles: [] });
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

async function create(path: string, body: object): Promise<void> {
  await client.request('POST', path, { body });
}

const stateOf = (m: Manager, controller: string, key: string) =>
  m.changelog.get('referrer', `${controller}|${key}`)?.state;
const stuckEntry = (m: Manager, key: string) => stuck(m, { olderThan: 0 }).find((e) => e.key === key);

describe(`relations on the ${clusterKind} cluster`, () => {
  it('a Deployment whose ServiceAccount is missing is stuck with the fix, and resolves once it exists', async () => {
    const ns = await cluster.newNamespace('rel-deploy');
    const manager = await observe();
    await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: 'checkout' },
      spec: {
        selector: { matchLabels: { app: 'checkout' } },
        template: {
          metadata: { labels: { app: 'checkout' } },
          spec: { serviceAccountName: 'checkout', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    });
    const key = `Deployment.apps/${ns}/checkout`;
    const controller = 'rules/Deployment.apps';
    await expect.poll(() => stateOf(manager, controller, key), { timeout: 30_000 }).toBe('NotFound');
    const entry = stuckEntry(manager, key);
    expect(entry).toMatchObject({
      reason: 'NotFound',
      referent: `ServiceAccount/${ns}/checkout`,
      message: expect.stringContaining(`ServiceAccount/${ns}/checkout not found`),
      fix: expect.stringContaining(`create ServiceAccount/${ns}/checkout`),
    });

    await create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'checkout' } });
    await expect.poll(() => stateOf(manager, controller, key), { timeout: 30_000 }).toBe('Resolved');
  });

  it('a webhook configuration whose Service has no ready Pod waits on it, and once its Service is deleted is stuck, saying what fails meanwhile', async () => {
    const ns = await cluster.newNamespace('rel-webhook');
    await create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'policy-1', labels: { app: 'policy' } },
      spec: {
        automountServiceAccountToken: false,
        containers: [{ name: 'policy', image: 'registry.k8s.io/pause:3.10' }],
      },
    });
    await create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'policy' },
      spec: { selector: { app: 'policy-v2' }, ports: [{ port: 443, targetPort: 8443 }] },
    });
    const name = `${ns}-policy`;
    // Scoped to this test's own namespace label, so that nothing else on a shared cluster is refused.
    await create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      metadata: { name },
      webhooks: [
        {
          name: 'configmaps.policy.refwatch.dev',
          clientConfig: { service: { namespace: ns, name: 'policy', port: 443 } },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'refwatch.dev/webhook-test': ns } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    cleanups.push(() =>
      client.request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`),
    );
    const manager = await observe();
    const key = `ValidatingWebhookConfiguration.admissionregistration.k8s.io//${name}`;
    const controller = 'rules/ValidatingWebhookConfiguration.admissionregistration.k8s.io';
    const service = `Service/${ns}/policy`;
    const blastRadius = `failurePolicy Fail: every CREATE of configmaps in namespaces matching refwatch.dev/webhook-test=${ns} fails while this Service`;
    await expect
      .poll(() => stuckEntry(manager, key)?.message, { timeout: 30_000 })
      .toBe(
        `${service} has no ready endpoints: 0 Pods in ${ns} match app=policy-v2; 1 Pod has app=policy: did you mean app=policy?; ${blastRadius} is not available`,
      );
    expect(stateOf(manager, controller, key)).toBe('Waiting');
    expect(stuckEntry(manager, key)?.referent).toBe(service);

    await client.request('PATCH', `/api/v1/namespaces/${ns}/services/policy`, {
      body: { spec: { selector: { app: 'policy' } } },
      contentType: 'application/merge-patch+json',
    });
    await expect
      .poll(() => stuckEntry(manager, key)?.message, { timeout: 30_000 })
      .toMatch(new RegExp(`^${service} has no ready endpoints: it selects 1 Pod, 0 Ready;`));
    // Only the Pod changes; the webhook still wakes.
    await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/policy-1/status`, {
      body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      contentType: 'application/merge-patch+json',
    });
    await expect.poll(() => stateOf(manager, controller, key), { timeout: 30_000 }).toBe('Resolved');

    await client.request('DELETE', `/api/v1/namespaces/${ns}/services/policy`);
    await expect.poll(() => stateOf(manager, controller, key), { timeout: 30_000 }).toBe('NotFound');
    const entry = stuckEntry(manager, key);
    expect(entry?.referent).toBe(service);
    expect(entry?.message).toBe(`${service} not found; ${blastRadius} is missing`);
  });

  it('a cross-namespace HTTPRoute without a ReferenceGrant is RefNotPermitted, and resolves when a grant is applied', async () => {
    const routes = await cluster.newNamespace('rel-routes');
    const backend = await cluster.newNamespace('rel-backend');
    await create(`/api/v1/namespaces/${backend}/services`, {
      metadata: { name: 'api' },
      spec: { selector: { app: 'api' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const manager = await observe();
    await create(`/apis/${GATEWAY}/v1/namespaces/${routes}/httproutes`, {
      apiVersion: `${GATEWAY}/v1`,
      kind: 'HTTPRoute',
      metadata: { name: 'web' },
      spec: { rules: [{ backendRefs: [{ name: 'api', namespace: backend, port: 80 }] }] },
    });
    const key = `HTTPRoute.${GATEWAY}/${routes}/web`;
    const controller = `rules/HTTPRoute.${GATEWAY}`;
    await expect.poll(() => stuckEntry(manager, key)?.reason, { timeout: 30_000 }).toBe('RefNotPermitted');
    expect(stateOf(manager, controller, key)).toBe('Waiting');
    expect(stuckEntry(manager, key)).toMatchObject({
      referent: `Service/${backend}/api`,
      message: `RefNotPermitted: no ReferenceGrant in namespace ${backend} allows HTTPRoute ${routes}/web to refer to Service ${backend}/api`,
      fix: expect.stringContaining(`create a ReferenceGrant in namespace ${backend}`),
    });

    await create(`/apis/${GATEWAY}/v1beta1/namespaces/${backend}/referencegrants`, {
      apiVersion: `${GATEWAY}/v1beta1`,
      kind: 'ReferenceGrant',
      metadata: { name: 'routes-to-services' },
      spec: { from: [{ group: GATEWAY, kind: 'HTTPRoute', namespace: routes }], to: [{ group: '', kind: 'Service' }] },
    });
    await expect.poll(() => stateOf(manager, controller, key), { timeout: 30_000 }).toBe('Resolved');
  });
});
