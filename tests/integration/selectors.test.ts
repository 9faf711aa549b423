import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReferrerEntity } from '@/lib/changelog';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { observeWithRules } from '@/server/observer';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * Selector references of the core pack (Service → Pods, PodDisruptionBudget →
 * Pods) on a cluster: Pods' labels are edited to move them in and out of the
 * selectors, and each edit is seen. Runs against the embedded server and
 * kube-apiserver alike.
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

const SERVICE = 'rules/Service';
const PDB = 'rules/PodDisruptionBudget.policy';

async function observeCore(): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core'], rulesFiles: [] });
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    grace: 1_000,
    statsIntervalMs: 0,
    readiness: (kind) => observer.readiness(kind),
  });
  observer.attach(manager, {
    kinds: [
      { group: '', kind: 'Service' },
      { group: 'policy', kind: 'PodDisruptionBudget' },
    ],
  });
  managers.push(manager);
  manager.start();
  return manager;
}

/** A Pod kube-apiserver accepts with no controller manager, and no kubelet to make it Ready. */
function pod(name: string, labels: Record<string, string>): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10' }],
    },
  };
}

async function relabel(ns: string, name: string, labels: Record<string, string | null>): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/${name}`, {
    body: { metadata: { labels } },
    contentType: 'application/merge-patch+json',
  });
}

async function makeReady(ns: string, name: string): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
    body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    contentType: 'application/merge-patch+json',
  });
}

function referrer(manager: Manager, controller: string, key: string): ReferrerEntity | undefined {
  return manager.changelog.get('referrer', `${controller}|${key}`);
}

/** matched lists the referrer's matched Pods, by name. */
function matched(manager: Manager, controller: string, key: string): string[] {
  return manager.registry
    .referencesOf(controller, key)
    .map((r) => r.referent.slice(r.referent.lastIndexOf('/') + 1))
    .sort();
}

describe(`selector references on the ${clusterKind} cluster`, () => {
  it('sees each label edit move a Pod in and out of a Service and a PDB', async () => {
    const ns = await cluster.newNamespace('selectors');
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod('web-1', { app: 'web' }) });
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod('web-2', { app: 'web' }) });
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: pod('api-1', { app: 'api' }) });
    const manager = await observeCore();
    await client.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
    });
    await client.request('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 3 } },
    });
    const svc = `Service/${ns}/web`;
    const pdb = `PodDisruptionBudget.policy/${ns}/web`;
    const poll = { timeout: 20_000 };

    await expect.poll(() => matched(manager, SERVICE, svc), poll).toEqual(['web-1', 'web-2']);
    // No kubelet: no Pod is Ready, so the Service has no ready endpoints.
    expect(referrer(manager, SERVICE, svc)).toMatchObject({
      state: 'Waiting',
      message: 'selects 2 Pods, 0 Ready: the Service has no ready endpoints',
    });
    await expect
      .poll(() => referrer(manager, PDB, pdb)?.message, poll)
      .toBe('selects 2 Pods, fewer than the 3 it needs');

    // In: a relabelled Pod joins both.
    await relabel(ns, 'api-1', { app: 'web' });
    await expect.poll(() => matched(manager, SERVICE, svc), poll).toEqual(['api-1', 'web-1', 'web-2']);
    await expect.poll(() => referrer(manager, PDB, pdb)?.state, poll).toBe('Resolved');

    // Out: two Pods leave, one by a new value and one by losing the key.
    await relabel(ns, 'web-1', { app: 'web-old' });
    await relabel(ns, 'web-2', { app: null });
    await expect.poll(() => matched(manager, SERVICE, svc), poll).toEqual(['api-1']);
    await expect.poll(() => matched(manager, PDB, pdb), poll).toEqual(['api-1']);
    expect(referrer(manager, PDB, pdb)!.state).toBe('Waiting');

    // A matched Pod turning Ready wakes the Service.
    await makeReady(ns, 'api-1');
    await expect.poll(() => referrer(manager, SERVICE, svc)?.state, poll).toBe('Resolved');

    // Out again, until nothing matches: NoMatch, with the nearest label set named.
    await relabel(ns, 'api-1', { app: 'api' });
    await expect.poll(() => referrer(manager, SERVICE, svc)?.state, poll).toBe('NoMatch');
    expect(referrer(manager, SERVICE, svc)!.message).toMatch(
      new RegExp(
        `^0 Pods in ${ns} match app=web; \\d Pods? ha(s|ve) app=(api|web-old): did you mean app=(api|web-old)\\?$`,
      ),
    );
    expect(matched(manager, SERVICE, svc)).toEqual([]);
    // The Pod watch stays while the selector matches nothing.
    expect(manager.referenceControllers.state('Pod')).toBe('Active');
  });
});
