import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { explain, stuck } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { observeWithRules } from '@/server/observer';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { installCrds, packCrds } from '../setup/crds';

/*
 * The argocd pack's destination clusters on a cluster that serves Argo CD's
 * kinds through the CRDs written by this project (tests/fixtures/crds): an
 * Application naming a cluster nobody registered is stuck with the reason; the
 * cluster Secret created resolves it through the label-selected watch, a rename
 * makes it stuck again, and the in-cluster destination is no reference. The
 * Secrets' credentials never reach what refwatch keeps or serves.
 */

const clusterKind = inject('refwatchCluster').kind;
const CONTROLLER = 'rules/Application.argoproj.io';
const LABEL = 'argocd.argoproj.io/secret-type';
const TOKEN = 'refwatch-test-bearer-token-never-shown';
const b64 = (s: string) => Buffer.from(s).toString('base64');

let cluster: TestCluster;
let client: KubeClient;
const managers: Manager[] = [];
const crdNames: string[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  crdNames.push(...(await installCrds(client, packCrds('argocd'))));
}, 120_000);
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});
afterAll(async () => {
  for (const name of crdNames.splice(0))
    await client
      ?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
      .catch(() => undefined);
});

async function observe(): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core', 'argocd'], rulesFiles: [] });
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

function clusterSecret(name: string, clusterName: string, server: string) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, labels: { [LABEL]: 'cluster' } },
    type: 'Opaque',
    data: {
      name: b64(clusterName),
      server: b64(server),
      config: b64(JSON.stringify({ bearerToken: TOKEN, tlsClientConfig: { insecure: false } })),
    },
  };
}

const POLL = { timeout: 20_000 };

describe(`argocd destination clusters on the ${clusterKind} cluster`, () => {
  it('an Application naming an unregistered cluster is stuck, resolves when its Secret is created, is stuck again once renamed, and in-cluster is no reference', async () => {
    const ns = await cluster.newNamespace('argo-clusters');
    const manager = await observe();
    const apps = `/apis/argoproj.io/v1alpha1/namespaces/${ns}/applications`;
    await client.request('POST', `/apis/argoproj.io/v1alpha1/namespaces/${ns}/appprojects`, {
      body: { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: 'default' }, spec: {} },
    });
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: clusterSecret('cluster-prod-eu1', 'prod-eu1', 'https://prod-eu1.example.com'),
    });
    await client.request('POST', apps, {
      body: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: 'guestbook' },
        spec: {
          project: 'default',
          source: { repoURL: 'https://github.com/argoproj/argocd-example-apps', path: 'guestbook' },
          destination: { name: 'prod-eu', namespace: 'guestbook' },
        },
      },
    });
    const appKey = `Application.argoproj.io/${ns}/guestbook`;
    const referrer = () => manager.changelog.get('referrer', `${CONTROLLER}|${appKey}`);
    const message = `no Argo CD cluster named "prod-eu" is registered (Secrets labelled ${LABEL}=cluster in ${ns}); did you mean "prod-eu1"?`;
    await expect
      .poll(
        () =>
          stuck(manager, { olderThan: 0 })
            .filter((e) => e.key === appKey)
            .map(({ reason, message, fix }) => ({ reason, message, fix })),
        POLL,
      )
      .toEqual([
        {
          reason: 'NoMatch',
          message,
          fix: `set spec.destination.name to "prod-eu1", or create a Secret in ${ns} labelled ${LABEL}=cluster whose data.name decodes to "prod-eu"`,
        },
      ]);
    // Only the labelled Secrets are watched for the match, and only their name is kept.
    expect(manager.source.watches().map((w) => w.target)).toContainEqual({
      group: '',
      kind: 'Secret',
      namespace: ns,
      labelSelector: `${LABEL}=cluster`,
      fields: ['data.name'],
    });

    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: clusterSecret('cluster-prod-eu', 'prod-eu', 'https://prod-eu.example.com'),
    });
    await expect.poll(() => referrer()?.state, POLL).toBe('Resolved');
    // Woken by the watch, never retried: waiting is not failing.
    expect(manager.controller(CONTROLLER)!.queue.numRequeues(appKey)).toBe(0);
    expect(manager.registry.referencesOf(CONTROLLER, appKey)).toContainEqual({
      referent: `Secret/${ns}/cluster-prod-eu`,
      fieldPath: 'spec.destination.name',
    });
    const served = JSON.stringify([manager.changelog.snapshot(), explain(manager, appKey)]);
    expect(served).not.toContain(TOKEN);
    expect(served).not.toContain(b64(JSON.stringify({ bearerToken: TOKEN, tlsClientConfig: { insecure: false } })));

    await client.request('PATCH', `/api/v1/namespaces/${ns}/secrets/cluster-prod-eu`, {
      body: { data: { name: b64('prod-eu2') } },
      contentType: 'application/merge-patch+json',
    });
    await expect.poll(() => referrer()?.state, POLL).toBe('NoMatch');
    expect(referrer()?.message).toMatch(/^no Argo CD cluster named "prod-eu" is registered/);

    await client.request('PATCH', `${apps}/guestbook`, {
      body: { spec: { destination: { name: null, server: 'https://kubernetes.default.svc' } } },
      contentType: 'application/merge-patch+json',
    });
    await expect.poll(() => referrer()?.state, POLL).toBe('Resolved');
    expect(manager.registry.referencesOf(CONTROLLER, appKey).map((r) => r.fieldPath)).toEqual(['spec.project']);
    await expect
      .poll(() => manager.source.watches().some((w) => w.target.labelSelector === `${LABEL}=cluster`), POLL)
      .toBe(false);
  });
});
