import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StuckEntry } from '@/lib/changelog';
import { stuck } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { PackSwitch, builtinRuleSet, observeRuleSet, referrerKinds, type PackName, type PackState } from '@/lib/rules';
import { observeWithRules } from '@/server/observer';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { installCrds, packCrds } from '../setup/crds';

/*
 * Each project pack on a cluster that serves its kinds through CRDs written by
 * this project (tests/fixtures/crds): a broken setup gives the exact stuck
 * list, reasons and fixes; the fix applied resolves it through the watches.
 * Runs against the embedded server and kube-apiserver alike.
 */

const clusterKind = inject('refwatchCluster').kind;
const PACKS = ['cert-manager', 'external-secrets', 'flux', 'argocd', 'keda', 'prometheus'] as const;
const CM = 'cert-manager.io';
const ESO = 'external-secrets.io';
const FLUX_SOURCE = 'source.toolkit.fluxcd.io';

let cluster: TestCluster;
let client: KubeClient;
const managers: Manager[] = [];
const crdNames: string[] = [];
const clusterObjects: string[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  crdNames.push(...(await installCrds(client, PACKS.flatMap(packCrds))));
}, 120_000);
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});
afterAll(async () => {
  for (const p of clusterObjects.splice(0)) await client?.request('DELETE', p).catch(() => undefined);
  for (const name of crdNames.splice(0))
    await client
      ?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
      .catch(() => undefined);
});

async function observe(pack: PackName): Promise<Manager> {
  const observer = await observeWithRules({ rulePacks: ['core', pack], rulesFiles: [] });
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

async function create(p: string, body: object): Promise<void> {
  await client.request('POST', p, { body });
}

async function patch(p: string, body: object): Promise<void> {
  await client.request('PATCH', p, { body, contentType: 'application/merge-patch+json' });
}

/** setStatus writes status through the status subresource, as the project's controller would. */
async function setStatus(p: string, status: object, subresource = true): Promise<void> {
  await patch(subresource ? `${p}/status` : p, { status });
}

const ready = (status: 'True' | 'False', reason: string, message: string) => ({
  conditions: [{ type: 'Ready', status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' }],
});

type Stuck = Pick<StuckEntry, 'key' | 'reason' | 'referent' | 'message' | 'fix'>;

/** The stuck referrers of one namespace, by key. */
function stuckIn(manager: Manager, ns: string): Stuck[] {
  return stuck(manager, { olderThan: 0 })
    .filter((e) => e.key.includes(`/${ns}/`))
    .map(({ key, reason, referent, message, fix }) => ({ key, reason, referent, message, fix }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

function state(manager: Manager, controller: string, key: string): string | undefined {
  return manager.changelog.get('referrer', `${controller}|${key}`)?.state;
}

const POLL = { timeout: 20_000 };

describe(`project packs on the ${clusterKind} cluster`, () => {
  it('cert-manager: a ClusterIssuer typo blocks the Certificate, and the Ingress waiting on its Secret names both', async () => {
    const ns = await cluster.newNamespace('packs-cm');
    const issuer = `${ns}-letsencrypt-prod`;
    const typo = `${ns}-letsencrypt-prd`;
    const issuerPath = `/apis/${CM}/v1/clusterissuers/${issuer}`;
    await create(`/apis/${CM}/v1/clusterissuers`, {
      apiVersion: `${CM}/v1`,
      kind: 'ClusterIssuer',
      metadata: { name: issuer },
      spec: { selfSigned: {} },
    });
    clusterObjects.push(issuerPath);
    await setStatus(issuerPath, ready('True', 'IsReady', 'ready'));
    await create(`/api/v1/namespaces/${ns}/services`, { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } });
    const manager = await observe('cert-manager');
    await create(`/apis/${CM}/v1/namespaces/${ns}/certificates`, {
      apiVersion: `${CM}/v1`,
      kind: 'Certificate',
      metadata: { name: 'web' },
      spec: {
        secretName: 'web-tls',
        dnsNames: ['shop.example.com'],
        issuerRef: { name: typo, kind: 'ClusterIssuer', group: CM },
      },
    });
    await create(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      metadata: { name: 'web' },
      spec: {
        defaultBackend: { service: { name: 'web', port: { number: 80 } } },
        tls: [{ hosts: ['shop.example.com'], secretName: 'web-tls' }],
      },
    });

    const certKey = `Certificate.${CM}/${ns}/web`;
    const ingressKey = `Ingress.networking.k8s.io/${ns}/web`;
    const issuerMissing = `ClusterIssuer.${CM}//${typo} not found; did you mean ${issuer}?`;
    const issuerFix = `set spec.issuerRef.name to ${issuer}, or create ClusterIssuer.${CM}//${typo}`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: certKey,
          reason: 'NotFound',
          referent: `ClusterIssuer.${CM}//${typo}`,
          message: issuerMissing,
          fix: issuerFix,
        },
        {
          key: ingressKey,
          reason: 'NotFound',
          referent: `Secret/${ns}/web-tls`,
          message: `Secret/${ns}/web-tls not found: it is produced by ${certKey} (spec.secretName), which waits on ClusterIssuer.${CM}//${typo}: ${issuerMissing}`,
          fix: issuerFix,
        },
      ]);

    await patch(`/apis/${CM}/v1/namespaces/${ns}/certificates/web`, { spec: { issuerRef: { name: issuer } } });
    await expect.poll(() => state(manager, `rules/Certificate.${CM}`, certKey), POLL).toBe('Resolved');
    // cert-manager issues the Secret; the Ingress follows.
    await create(`/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'web-tls' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    await expect.poll(() => state(manager, 'rules/Ingress.networking.k8s.io', ingressKey), POLL).toBe('Resolved');
    expect(stuckIn(manager, ns)).toEqual([]);
  });

  it('external-secrets: a missing SecretStore blocks the ExternalSecret and the Pod that reads its target', async () => {
    const ns = await cluster.newNamespace('packs-eso');
    const manager = await observe('external-secrets');
    await create(`/apis/${ESO}/v1/namespaces/${ns}/externalsecrets`, {
      apiVersion: `${ESO}/v1`,
      kind: 'ExternalSecret',
      metadata: { name: 'db' },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        target: { name: 'db-credentials' },
        data: [{ secretKey: 'password', remoteRef: { key: 'shop/db', property: 'password' } }],
      },
    });
    await create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'api' },
      spec: {
        automountServiceAccountToken: false,
        containers: [
          { name: 'api', image: 'registry.k8s.io/pause:3.10', envFrom: [{ secretRef: { name: 'db-credentials' } }] },
        ],
      },
    });
    const esKey = `ExternalSecret.${ESO}/${ns}/db`;
    const storeMissing = `SecretStore.${ESO}/${ns}/vault not found`;
    const storeFix = `create SecretStore.${ESO}/${ns}/vault, or point spec.secretStoreRef.name at an existing SecretStore.${ESO} (kubectl get secretstores.${ESO} -n ${ns})`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: esKey,
          reason: 'NotFound',
          referent: `SecretStore.${ESO}/${ns}/vault`,
          message: storeMissing,
          fix: storeFix,
        },
        {
          key: `Pod/${ns}/api`,
          reason: 'NotFound',
          referent: `Secret/${ns}/db-credentials`,
          message: `Secret/${ns}/db-credentials not found: it is produced by ${esKey} (spec.target.name), which waits on SecretStore.${ESO}/${ns}/vault: ${storeMissing}`,
          fix: storeFix,
        },
      ]);

    await create(`/apis/${ESO}/v1/namespaces/${ns}/secretstores`, {
      apiVersion: `${ESO}/v1`,
      kind: 'SecretStore',
      metadata: { name: 'vault' },
      spec: { provider: { fake: { data: [{ key: 'shop/db', value: 'x' }] } } },
    });
    await setStatus(`/apis/${ESO}/v1/namespaces/${ns}/secretstores/vault`, ready('True', 'Valid', 'store validated'));
    await expect.poll(() => state(manager, `rules/ExternalSecret.${ESO}`, esKey), POLL).toBe('Resolved');
  });

  it("flux: a GitRepository that is not Ready holds its Kustomization with the source controller's reason", async () => {
    const ns = await cluster.newNamespace('packs-flux');
    const repo = `/apis/${FLUX_SOURCE}/v1/namespaces/${ns}/gitrepositories/fleet`;
    await create(`/apis/${FLUX_SOURCE}/v1/namespaces/${ns}/gitrepositories`, {
      apiVersion: `${FLUX_SOURCE}/v1`,
      kind: 'GitRepository',
      metadata: { name: 'fleet' },
      spec: { interval: '1m', url: 'https://github.com/example/fleet', ref: { branch: 'main' } },
    });
    const failure =
      "failed to checkout and determine revision: unable to clone 'https://github.com/example/fleet': authentication required";
    await setStatus(repo, ready('False', 'GitOperationFailed', failure));
    const manager = await observe('flux');
    await create(`/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations`, {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'apps' },
      spec: { interval: '10m', path: './apps', prune: true, sourceRef: { kind: 'GitRepository', name: 'fleet' } },
    });
    const ksKey = `Kustomization.kustomize.toolkit.fluxcd.io/${ns}/apps`;
    const repoKey = `GitRepository.${FLUX_SOURCE}/${ns}/fleet`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: ksKey,
          reason: 'NotReady',
          referent: repoKey,
          message: `${repoKey} is not Ready: GitOperationFailed: ${failure}`,
          fix: `wait for ${repoKey} to become Ready, or fix what its condition reports (kubectl describe gitrepositories.${FLUX_SOURCE} -n ${ns} fleet)`,
        },
      ]);
    await setStatus(repo, ready('True', 'Succeeded', "stored artifact for revision 'main@sha1:0123'"));
    await expect
      .poll(() => state(manager, 'rules/Kustomization.kustomize.toolkit.fluxcd.io', ksKey), POLL)
      .toBe('Resolved');
  });

  it('keda: a ScaledObject whose target Deployment is missing', async () => {
    const ns = await cluster.newNamespace('packs-keda');
    const manager = await observe('keda');
    await create(`/apis/keda.sh/v1alpha1/namespaces/${ns}/scaledobjects`, {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'worker' },
      spec: {
        scaleTargetRef: { name: 'worker' },
        triggers: [{ type: 'cpu', metricType: 'Utilization', metadata: { value: '60' } }],
      },
    });
    const soKey = `ScaledObject.keda.sh/${ns}/worker`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: soKey,
          reason: 'NotFound',
          referent: `Deployment.apps/${ns}/worker`,
          message: `Deployment.apps/${ns}/worker not found`,
          fix: `create Deployment.apps/${ns}/worker, or point spec.scaleTargetRef.name at an existing Deployment.apps (kubectl get deployments.apps -n ${ns})`,
        },
      ]);
    await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: 'worker' },
      spec: {
        selector: { matchLabels: { app: 'worker' } },
        template: {
          metadata: { labels: { app: 'worker' } },
          spec: {
            automountServiceAccountToken: false,
            containers: [{ name: 'worker', image: 'registry.k8s.io/pause:3.10' }],
          },
        },
      },
    });
    await setStatus(`/apis/apps/v1/namespaces/${ns}/deployments/worker`, {
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'available' }],
    });
    await expect.poll(() => state(manager, 'rules/ScaledObject.keda.sh', soKey), POLL).toBe('Resolved');
  });

  it('argocd: an Application whose AppProject is missing', async () => {
    const ns = await cluster.newNamespace('packs-argo');
    const manager = await observe('argocd');
    await create(`/apis/argoproj.io/v1alpha1/namespaces/${ns}/applications`, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'guestbook' },
      spec: {
        project: 'team-a',
        source: {
          repoURL: 'https://github.com/argoproj/argocd-example-apps',
          path: 'guestbook',
          targetRevision: 'HEAD',
        },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      },
    });
    const appKey = `Application.argoproj.io/${ns}/guestbook`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: appKey,
          reason: 'NotFound',
          referent: `AppProject.argoproj.io/${ns}/team-a`,
          message: `AppProject.argoproj.io/${ns}/team-a not found`,
          fix: `create AppProject.argoproj.io/${ns}/team-a, or point spec.project at an existing AppProject.argoproj.io (kubectl get appprojects.argoproj.io -n ${ns})`,
        },
      ]);
    await create(`/apis/argoproj.io/v1alpha1/namespaces/${ns}/appprojects`, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'team-a' },
      spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
    });
    await expect.poll(() => state(manager, 'rules/Application.argoproj.io', appKey), POLL).toBe('Resolved');
  });

  it('prometheus: an Alertmanager whose config Secret is missing', async () => {
    const ns = await cluster.newNamespace('packs-prom');
    const manager = await observe('prometheus');
    await create(`/apis/monitoring.coreos.com/v1/namespaces/${ns}/alertmanagers`, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'Alertmanager',
      metadata: { name: 'main' },
      spec: { replicas: 1, configSecret: 'alertmanager-main-config' },
    });
    const amKey = `Alertmanager.monitoring.coreos.com/${ns}/main`;
    await expect
      .poll(() => stuckIn(manager, ns), POLL)
      .toEqual([
        {
          key: amKey,
          reason: 'NotFound',
          referent: `Secret/${ns}/alertmanager-main-config`,
          message: `Secret/${ns}/alertmanager-main-config not found`,
          fix: `create Secret/${ns}/alertmanager-main-config, or point spec.configSecret at an existing Secret (kubectl get secrets -n ${ns})`,
        },
      ]);
    await create(`/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'alertmanager-main-config' },
      stringData: { 'alertmanager.yaml': 'route: {receiver: "null"}\nreceivers: [{name: "null"}]\n' },
    });
    await expect.poll(() => state(manager, 'rules/Alertmanager.monitoring.coreos.com', amKey), POLL).toBe('Resolved');
  });

  it('prometheus: a ServiceMonitor that selects no Service, explained with the nearest labels, until they are fixed', async () => {
    const ns = await cluster.newNamespace('packs-sm');
    await create(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { ports: [{ name: 'metrics', port: 9090 }] },
    });
    const manager = await observe('prometheus');
    await create(`/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web-metrics' } }, endpoints: [{ port: 'metrics' }] },
    });
    const smKey = `ServiceMonitor.monitoring.coreos.com/${ns}/web`;
    await expect.poll(() => stuckIn(manager, ns), POLL).toEqual(SM_STUCK(ns, smKey));
    await patch(`/api/v1/namespaces/${ns}/services/web`, { metadata: { labels: { app: 'web-metrics' } } });
    await expect.poll(() => state(manager, 'rules/ServiceMonitor.monitoring.coreos.com', smKey), POLL).toBe('Resolved');
    expect(stuckIn(manager, ns)).toEqual([]);
  });
});

const SM_STUCK = (ns: string, key: string) => [
  {
    key,
    reason: 'NoMatch',
    referent: undefined,
    message: `0 Services in ${ns} match app=web-metrics; 1 Service has app=web: did you mean app=web?`,
    fix: `set spec.selector to app=web, or label a Service in ${ns} with app=web-metrics`,
  },
];

describe(`--packs auto on the ${clusterKind} cluster`, () => {
  it("turns cert-manager's pack off when its CRDs are removed and on when they are installed, with no restart", async () => {
    const observer = observeRuleSet(builtinRuleSet());
    const pool = new SharedInformerPool({ client });
    const manager = new Manager({
      source: pool,
      grace: 1_000,
      statsIntervalMs: 0,
      readiness: (kind) => observer.readiness(kind),
    });
    managers.push(manager);
    const alwaysOn = referrerKinds(builtinRuleSet(['core']));
    observer.attach(manager, { kinds: alwaysOn });
    const seen: PackState[][] = [];
    const packs = new PackSwitch({
      manager,
      source: pool,
      observer,
      packs: ['cert-manager', 'keda', 'gateway'],
      alwaysOn,
      onChange: (states) => seen.push(states),
    });
    manager.start();
    packs.start();
    const certManager = () => packs.packStates().find((s) => s.pack === 'cert-manager');
    const CERT = `rules/Certificate.${CM}`;
    try {
      // Installed by this file's beforeAll: on from the first CRD list.
      await expect
        .poll(certManager, POLL)
        .toEqual({ pack: 'cert-manager', on: true, why: 'cert-manager: on, cert-manager.io/v1 served' });
      expect(packs.packStates().find((s) => s.pack === 'gateway')).toEqual({
        pack: 'gateway',
        on: false,
        why: 'gateway: off, gateway.networking.k8s.io not served',
      });
      expect(manager.controllerNames()).toContain(CERT);
      expect(manager.controllerNames()).toContain('rules/ScaledObject.keda.sh');

      const crds = packCrds('cert-manager');
      for (const crd of crds)
        await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
      await expect.poll(certManager, POLL).toEqual({
        pack: 'cert-manager',
        on: false,
        why: 'cert-manager: off, cert-manager.io not served',
      });
      await expect.poll(() => manager.controllerNames().includes(CERT), POLL).toBe(false);
      // Only cert-manager switched: core's and KEDA's controllers stay.
      expect(manager.controllerNames()).toContain('rules/Pod');
      expect(manager.controllerNames()).toContain('rules/ScaledObject.keda.sh');

      // Deleting a CRD finishes once its objects are gone; install again once it has.
      for (const crd of crds)
        await expect
          .poll(
            () =>
              client
                .request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
                .then(
                  () => 'present',
                  () => 'gone',
                ),
            { timeout: 60_000 },
          )
          .toBe('gone');
      for (const crd of crds)
        await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
      await expect.poll(certManager, POLL).toMatchObject({ on: true });
      await expect.poll(() => manager.controllerNames().includes(CERT), POLL).toBe(true);

      // The pack's controller works again: a Certificate with a missing Issuer is seen as such.
      const ns = await cluster.newNamespace('packs-auto');
      await expect
        .poll(
          () =>
            client
              .request('POST', `/apis/${CM}/v1/namespaces/${ns}/certificates`, {
                body: {
                  apiVersion: `${CM}/v1`,
                  kind: 'Certificate',
                  metadata: { name: 'web' },
                  spec: { secretName: 'web-tls', issuerRef: { name: 'ca' } },
                },
              })
              .then(
                () => true,
                () => false,
              ),
          POLL,
        )
        .toBe(true);
      await expect
        .poll(() => stuckIn(manager, ns).map((e) => [e.key, e.referent]), POLL)
        .toEqual([[`Certificate.${CM}/${ns}/web`, `Issuer.${CM}/${ns}/ca`]]);
      expect(seen.length).toBeGreaterThanOrEqual(3);
    } finally {
      await packs.stop();
    }
  }, 120_000);
});
