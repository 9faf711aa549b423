/**
 * packs: resolution within a second of the fix, per project pack, on the
 * embedded cluster with the packs' CRDs (tests/fixtures/crds). For each pack
 * a broken setup is applied and refwatch's rules observer judges it stuck;
 * then the fix is applied through the API, and the time from sending the fix
 * to the referrer's state Resolved in the change log is measured.
 *
 *   cert-manager      a Certificate's ClusterIssuer name with a typo → the name corrected
 *   external-secrets  an ExternalSecret's missing SecretStore → the store created, Ready
 *   flux              a Kustomization's GitRepository not Ready → its Ready condition True
 *   argocd            an Application's missing AppProject → the project created
 *   keda              a ScaledObject's missing target Deployment → the Deployment created, Available
 *   prometheus        a ServiceMonitor selecting no Service → the Service labelled to match
 *
 * Figures and targets, per pack:
 *   packs.<pack>.resolve   fix sent → Resolved: <= 1000 ms (the median of ROUNDS rounds)
 *
 *   npm run bench -- packs
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Manager } from '../lib/engine';
import { SharedInformerPool, type KubeClient } from '../lib/kube';
import { builtinRuleSet, observeRuleSet, type PackName } from '../lib/rules';
import { startTestCluster } from '../lib/testing';
import { percentile, result } from './report';

const ROUNDS = Number(process.env.REFWATCH_BENCH_PACKS_ROUNDS ?? 5);
const TARGET_MS = 1000;
const GIVE_UP_MS = 20_000;
const CRDS = path.resolve(import.meta.dirname, '../tests/fixtures/crds');
const CM = 'cert-manager.io';

type Pack = Exclude<PackName, 'core' | 'gateway' | 'crossplane'>;

interface Scenario {
  pack: Pack;
  /** The referrer that is stuck until the fix: its rules controller and key. */
  controller: string;
  key: (ns: string) => string;
  broken: (c: KubeClient, ns: string) => Promise<unknown>;
  fix: (c: KubeClient, ns: string) => Promise<unknown>;
}

const post = (c: KubeClient, p: string, body: object) => c.request('POST', p, { body });
const patch = (c: KubeClient, p: string, body: object) =>
  c.request('PATCH', p, { body, contentType: 'application/merge-patch+json' });
const ready = (type = 'Ready') => ({
  status: {
    conditions: [
      { type, status: 'True', reason: 'Ready', message: 'ready', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  },
});

const scenarios: Scenario[] = [
  {
    pack: 'cert-manager',
    controller: `rules/Certificate.${CM}`,
    key: (ns) => `Certificate.${CM}/${ns}/web`,
    broken: async (c, ns) => {
      const issuer = `/apis/${CM}/v1/clusterissuers`;
      await post(c, issuer, {
        apiVersion: `${CM}/v1`,
        kind: 'ClusterIssuer',
        metadata: { name: `${ns}-ca` },
        spec: { selfSigned: {} },
      });
      await patch(c, `${issuer}/${ns}-ca/status`, ready());
      await post(c, `/apis/${CM}/v1/namespaces/${ns}/certificates`, {
        apiVersion: `${CM}/v1`,
        kind: 'Certificate',
        metadata: { name: 'web' },
        spec: {
          secretName: 'web-tls',
          dnsNames: ['shop.example.com'],
          issuerRef: { name: `${ns}-cx`, kind: 'ClusterIssuer' },
        },
      });
    },
    fix: (c, ns) =>
      patch(c, `/apis/${CM}/v1/namespaces/${ns}/certificates/web`, { spec: { issuerRef: { name: `${ns}-ca` } } }),
  },
  {
    pack: 'external-secrets',
    controller: 'rules/ExternalSecret.external-secrets.io',
    key: (ns) => `ExternalSecret.external-secrets.io/${ns}/db`,
    broken: (c, ns) =>
      post(c, `/apis/external-secrets.io/v1/namespaces/${ns}/externalsecrets`, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'db' },
        spec: {
          secretStoreRef: { name: 'vault', kind: 'SecretStore' },
          data: [{ secretKey: 'p', remoteRef: { key: 'db' } }],
        },
      }),
    fix: async (c, ns) => {
      const stores = `/apis/external-secrets.io/v1/namespaces/${ns}/secretstores`;
      await post(c, stores, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault' },
        spec: { provider: {} },
      });
      await patch(c, `${stores}/vault/status`, ready());
    },
  },
  {
    pack: 'flux',
    controller: 'rules/Kustomization.kustomize.toolkit.fluxcd.io',
    key: (ns) => `Kustomization.kustomize.toolkit.fluxcd.io/${ns}/apps`,
    broken: async (c, ns) => {
      await post(c, `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/gitrepositories`, {
        apiVersion: 'source.toolkit.fluxcd.io/v1',
        kind: 'GitRepository',
        metadata: { name: 'apps' },
        spec: { url: 'https://example.com/apps.git', interval: '1m' },
      });
      await post(c, `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations`, {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'apps' },
        spec: { interval: '5m', path: './', prune: true, sourceRef: { kind: 'GitRepository', name: 'apps' } },
      });
    },
    fix: (c, ns) => patch(c, `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/gitrepositories/apps/status`, ready()),
  },
  {
    pack: 'argocd',
    controller: 'rules/Application.argoproj.io',
    key: (ns) => `Application.argoproj.io/${ns}/guestbook`,
    broken: async (c, ns) => {
      const apps = `/apis/argoproj.io/v1alpha1/namespaces/${ns}/applications`;
      await post(c, apps, {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: 'guestbook' },
        spec: {
          project: 'team',
          destination: { server: 'https://kubernetes.default.svc', namespace: ns },
          source: { repoURL: 'https://example.com/g.git', path: '.' },
        },
      });
    },
    fix: (c, ns) =>
      post(c, `/apis/argoproj.io/v1alpha1/namespaces/${ns}/appprojects`, {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AppProject',
        metadata: { name: 'team' },
        spec: { sourceRepos: ['*'] },
      }),
  },
  {
    pack: 'keda',
    controller: 'rules/ScaledObject.keda.sh',
    key: (ns) => `ScaledObject.keda.sh/${ns}/worker`,
    broken: (c, ns) =>
      post(c, `/apis/keda.sh/v1alpha1/namespaces/${ns}/scaledobjects`, {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: 'worker' },
        spec: { scaleTargetRef: { name: 'worker' }, triggers: [{ type: 'cpu', metadata: { value: '50' } }] },
      }),
    fix: async (c, ns) => {
      const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
      await post(c, deployments, {
        metadata: { name: 'worker' },
        spec: {
          selector: { matchLabels: { app: 'worker' } },
          template: {
            metadata: { labels: { app: 'worker' } },
            spec: { containers: [{ name: 'w', image: 'busybox' }] },
          },
        },
      });
      await patch(c, `${deployments}/worker/status`, ready('Available'));
    },
  },
  {
    pack: 'prometheus',
    controller: 'rules/ServiceMonitor.monitoring.coreos.com',
    key: (ns) => `ServiceMonitor.monitoring.coreos.com/${ns}/web`,
    broken: async (c, ns) => {
      await post(c, `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: { ports: [{ name: 'metrics', port: 9090 }] },
      });
      await post(c, `/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`, {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web-metrics' } }, endpoints: [{ port: 'metrics' }] },
      });
    },
    fix: (c, ns) => patch(c, `/api/v1/namespaces/${ns}/services/web`, { metadata: { labels: { app: 'web-metrics' } } }),
  },
];

/** until polls the change log every millisecond: the referrer's state, as the dashboard would see it. */
async function until(manager: Manager, id: string, want: (state: string | undefined) => boolean): Promise<void> {
  const deadline = performance.now() + GIVE_UP_MS;
  while (!want(manager.changelog.get('referrer', id)?.state)) {
    if (performance.now() > deadline)
      throw new Error(`${id} is ${manager.changelog.get('referrer', id)?.state ?? 'not seen'} after ${GIVE_UP_MS} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

const crds = scenarios.flatMap((s) =>
  parseAllDocuments(readFileSync(path.join(CRDS, `${s.pack}.yaml`), 'utf8')).map((d) => d.toJS() as object),
);
const cluster = await startTestCluster({ mode: 'embedded', crds });
const observer = observeRuleSet(builtinRuleSet(['core', ...scenarios.map((s) => s.pack)]));
const manager = new Manager({
  source: new SharedInformerPool({ client: cluster.client }),
  statsIntervalMs: 0,
  readiness: (kind) => observer.readiness(kind),
});
observer.attach(manager);
manager.start();
try {
  for (const s of scenarios) {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ns = `bench-${s.pack}-${round}`;
      await post(cluster.client, '/api/v1/namespaces', { metadata: { name: ns } });
      await s.broken(cluster.client, ns);
      const id = `${s.controller}|${s.key(ns)}`;
      await until(manager, id, (state) => state !== undefined && state !== 'Resolved');
      const t0 = performance.now();
      await s.fix(cluster.client, ns);
      await until(manager, id, (state) => state === 'Resolved');
      times.push(performance.now() - t0);
    }
    result(
      `packs.${s.pack}.resolve`,
      Math.round(
        percentile(
          times.sort((a, b) => a - b),
          50,
        ) * 10,
      ) / 10,
      'ms',
      '<=',
      TARGET_MS,
    );
  }
} finally {
  await manager.stop();
  await cluster.stop();
}
