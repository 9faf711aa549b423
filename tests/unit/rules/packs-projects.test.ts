import { describe, expect, it } from 'vitest';
import { builtinPacks, builtinRuleSet, extractReferences, readinessOf, scanReferences } from '@/lib/rules';
import type { KubeObject } from '@/lib/model';

const CM = 'cert-manager.io';
const ESO = 'external-secrets.io';

describe('cert-manager pack', () => {
  const rs = builtinRuleSet(['cert-manager']);

  it('a Certificate refers to its issuer by kind and group, and produces its Secret without waiting on it', () => {
    const cert: KubeObject = {
      apiVersion: `${CM}/v1`,
      kind: 'Certificate',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        secretName: 'web-tls',
        dnsNames: ['shop.example.com'],
        issuerRef: { name: 'letsencrypt-prod', kind: 'ClusterIssuer', group: CM },
        keystores: { pkcs12: { create: true, passwordSecretRef: { name: 'p12-password', key: 'password' } } },
      },
    };
    const scan = scanReferences(rs, cert);
    expect(scan.references).toEqual([
      { referent: `ClusterIssuer.${CM}//letsencrypt-prod`, fieldPath: 'spec.issuerRef.name' },
      { referent: 'Secret/shop/p12-password', fieldPath: 'spec.keystores.pkcs12.passwordSecretRef.name' },
    ]);
    expect(scan.produced).toEqual([{ referent: 'Secret/shop/web-tls', fieldPath: 'spec.secretName' }]);
  });

  it('an issuerRef without kind names an Issuer in the Certificate namespace', () => {
    const req: KubeObject = {
      apiVersion: `${CM}/v1`,
      kind: 'CertificateRequest',
      metadata: { name: 'web-1', namespace: 'shop' },
      spec: { issuerRef: { name: 'ca' }, request: 'LS0t' },
    };
    expect(extractReferences(rs, req)).toEqual([
      { referent: `Issuer.${CM}/shop/ca`, fieldPath: 'spec.issuerRef.name' },
    ]);
  });

  it("a ClusterIssuer's Secrets live in the cluster resource namespace; an Issuer's in its own", () => {
    const acme = {
      privateKeySecretRef: { name: 'acme-account' },
      solvers: [{ dns01: { cloudflare: { apiTokenSecretRef: { name: 'cloudflare-token', key: 'token' } } } }],
    };
    const cluster: KubeObject = {
      apiVersion: `${CM}/v1`,
      kind: 'ClusterIssuer',
      metadata: { name: 'letsencrypt-prod' },
      spec: { acme },
    };
    expect(extractReferences(rs, cluster)).toEqual([
      { referent: 'Secret/cert-manager/acme-account', fieldPath: 'spec.acme.privateKeySecretRef.name' },
      {
        referent: 'Secret/cert-manager/cloudflare-token',
        fieldPath: 'spec.acme.solvers[0].dns01.cloudflare.apiTokenSecretRef.name',
      },
    ]);
    const issuer: KubeObject = {
      apiVersion: `${CM}/v1`,
      kind: 'Issuer',
      metadata: { name: 'ca', namespace: 'shop' },
      spec: { ca: { secretName: 'root-ca' } },
    };
    expect(extractReferences(rs, issuer)).toEqual([
      { referent: 'Secret/shop/root-ca', fieldPath: 'spec.ca.secretName' },
    ]);
  });

  it('judges issuers by their Ready condition', () => {
    const issuer = (status: string): KubeObject => ({
      apiVersion: `${CM}/v1`,
      kind: 'ClusterIssuer',
      metadata: { name: 'x' },
      status: { conditions: [{ type: 'Ready', status, reason: 'ErrRegisterACMEAccount', message: 'no account' }] },
    });
    expect(readinessOf(rs, issuer('True'))).toEqual({ ready: true });
    expect(readinessOf(rs, issuer('False'))).toMatchObject({ ready: false, reason: 'ErrRegisterACMEAccount' });
  });
});

describe('external-secrets pack', () => {
  const rs = builtinRuleSet(['external-secrets']);

  it('an ExternalSecret refers to its store (SecretStore by default) and produces its target Secret', () => {
    const es: KubeObject = {
      apiVersion: `${ESO}/v1`,
      kind: 'ExternalSecret',
      metadata: { name: 'db', namespace: 'shop' },
      spec: {
        secretStoreRef: { name: 'vault', kind: 'SecretStore' },
        target: { name: 'db-credentials' },
        data: [
          {
            secretKey: 'password',
            remoteRef: { key: 'db' },
            sourceRef: { storeRef: { name: 'aws', kind: 'ClusterSecretStore' } },
          },
        ],
      },
    };
    const scan = scanReferences(rs, es);
    expect(scan.references).toEqual([
      { referent: `SecretStore.${ESO}/shop/vault`, fieldPath: 'spec.secretStoreRef.name' },
      { referent: `ClusterSecretStore.${ESO}//aws`, fieldPath: 'spec.data[0].sourceRef.storeRef.name' },
    ]);
    expect(scan.produced).toEqual([{ referent: 'Secret/shop/db-credentials', fieldPath: 'spec.target.name' }]);
  });

  it("a ClusterSecretStore's auth Secrets name their namespace; a PushSecret its Secret and stores", () => {
    const store: KubeObject = {
      apiVersion: `${ESO}/v1`,
      kind: 'ClusterSecretStore',
      metadata: { name: 'vault' },
      spec: {
        provider: { vault: { auth: { tokenSecretRef: { name: 'vault-token', key: 'token', namespace: 'ops' } } } },
      },
    };
    expect(extractReferences(rs, store)).toEqual([
      { referent: 'Secret/ops/vault-token', fieldPath: 'spec.provider.vault.auth.tokenSecretRef.name' },
    ]);
    const push: KubeObject = {
      apiVersion: `${ESO}/v1alpha1`,
      kind: 'PushSecret',
      metadata: { name: 'push', namespace: 'shop' },
      spec: { secretStoreRefs: [{ name: 'vault', kind: 'ClusterSecretStore' }], selector: { secret: { name: 'app' } } },
    };
    expect(extractReferences(rs, push)).toEqual([
      { referent: `ClusterSecretStore.${ESO}//vault`, fieldPath: 'spec.secretStoreRefs[0].name' },
      { referent: 'Secret/shop/app', fieldPath: 'spec.selector.secret.name' },
    ]);
  });
});

describe('flux pack', () => {
  const rs = builtinRuleSet(['flux']);

  it('a Kustomization refers to its source, dependencies, decryption Secret and substitutions', () => {
    const ks: KubeObject = {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'apps', namespace: 'flux-system' },
      spec: {
        sourceRef: { kind: 'GitRepository', name: 'fleet' },
        dependsOn: [{ name: 'infra' }, { name: 'crds', namespace: 'platform' }],
        decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
        postBuild: {
          substituteFrom: [
            { kind: 'ConfigMap', name: 'vars' },
            { kind: 'Secret', name: 'secret-vars', optional: true },
          ],
        },
      },
    };
    expect(scanReferences(rs, ks).references).toEqual([
      { referent: 'GitRepository.source.toolkit.fluxcd.io/flux-system/fleet', fieldPath: 'spec.sourceRef.name' },
      { referent: 'Kustomization.kustomize.toolkit.fluxcd.io/flux-system/infra', fieldPath: 'spec.dependsOn[0].name' },
      { referent: 'Kustomization.kustomize.toolkit.fluxcd.io/platform/crds', fieldPath: 'spec.dependsOn[1].name' },
      { referent: 'Secret/flux-system/sops-age', fieldPath: 'spec.decryption.secretRef.name' },
      { referent: 'ConfigMap/flux-system/vars', fieldPath: 'spec.postBuild.substituteFrom[0].name' },
      {
        referent: 'Secret/flux-system/secret-vars',
        fieldPath: 'spec.postBuild.substituteFrom[1].name',
        optional: true,
      },
    ]);
  });

  it('a HelmRelease refers to its chart source or chartRef, and its valuesFrom', () => {
    const hr: KubeObject = {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'podinfo', namespace: 'apps' },
      spec: {
        chart: {
          spec: { chart: 'podinfo', sourceRef: { kind: 'HelmRepository', name: 'podinfo', namespace: 'flux-system' } },
        },
        valuesFrom: [{ kind: 'Secret', name: 'podinfo-values' }],
      },
    };
    expect(extractReferences(rs, hr)).toEqual([
      {
        referent: 'HelmRepository.source.toolkit.fluxcd.io/flux-system/podinfo',
        fieldPath: 'spec.chart.spec.sourceRef.name',
      },
      { referent: 'Secret/apps/podinfo-values', fieldPath: 'spec.valuesFrom[0].name' },
    ]);
    const oci: KubeObject = { ...hr, spec: { chartRef: { kind: 'OCIRepository', name: 'podinfo' } } };
    expect(extractReferences(rs, oci)).toEqual([
      { referent: 'OCIRepository.source.toolkit.fluxcd.io/apps/podinfo', fieldPath: 'spec.chartRef.name' },
    ]);
  });
});

describe('argocd pack', () => {
  const rs = builtinRuleSet(['argocd']);
  const app = (status?: object): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'guestbook',
      namespace: 'argocd',
      ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: 'guestbooks', uid: 'u' }],
    },
    spec: { project: 'team-a', destination: { name: 'in-cluster', namespace: 'guestbook' } },
    ...(status ? { status } : {}),
  });

  it('an Application refers to its AppProject and the ApplicationSet that generated it', () => {
    expect(extractReferences(rs, app())).toEqual([
      { referent: 'AppProject.argoproj.io/argocd/team-a', fieldPath: 'spec.project' },
      { referent: 'ApplicationSet.argoproj.io/argocd/guestbooks', fieldPath: 'metadata.ownerReferences[0].name' },
    ]);
  });

  it('an Application is ready when Healthy and Synced, and says which is not', () => {
    expect(readinessOf(rs, app({ health: { status: 'Healthy' }, sync: { status: 'Synced' } }))).toEqual({
      ready: true,
    });
    expect(readinessOf(rs, app({ health: { status: 'Healthy' }, sync: { status: 'OutOfSync' } }))).toEqual({
      ready: false,
      reason: 'FieldMismatch',
      field: 'status.sync.status',
      message: 'status.sync.status is "OutOfSync"; ready when it is "Synced"',
    });
    expect(readinessOf(rs, app({ health: { status: 'Degraded' }, sync: { status: 'Synced' } }))).toMatchObject({
      ready: false,
      field: 'status.health.status',
    });
  });
});

describe('keda pack', () => {
  const rs = builtinRuleSet(['keda']);

  it('a ScaledObject refers to its target of any scalable kind and its triggers authentication', () => {
    const so: KubeObject = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'worker', namespace: 'jobs' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'worker' },
        triggers: [
          { type: 'rabbitmq', metadata: { queueName: 'q' }, authenticationRef: { name: 'rabbit' } },
          { type: 'aws-sqs-queue', authenticationRef: { name: 'aws', kind: 'ClusterTriggerAuthentication' } },
        ],
      },
    };
    expect(extractReferences(rs, so)).toEqual([
      { referent: 'StatefulSet.apps/jobs/worker', fieldPath: 'spec.scaleTargetRef.name' },
      { referent: 'TriggerAuthentication.keda.sh/jobs/rabbit', fieldPath: 'spec.triggers[0].authenticationRef.name' },
      { referent: 'ClusterTriggerAuthentication.keda.sh//aws', fieldPath: 'spec.triggers[1].authenticationRef.name' },
    ]);
    const deploymentTarget: KubeObject = { ...so, spec: { scaleTargetRef: { name: 'web' } } };
    expect(extractReferences(rs, deploymentTarget)).toEqual([
      { referent: 'Deployment.apps/jobs/web', fieldPath: 'spec.scaleTargetRef.name' },
    ]);
  });

  it("a ClusterTriggerAuthentication's Secrets live in KEDA's namespace", () => {
    const cta: KubeObject = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ClusterTriggerAuthentication',
      metadata: { name: 'aws' },
      spec: { secretTargetRef: [{ parameter: 'awsAccessKeyID', name: 'aws-creds', key: 'id' }] },
    };
    expect(extractReferences(rs, cta)).toEqual([
      { referent: 'Secret/keda/aws-creds', fieldPath: 'spec.secretTargetRef[0].name' },
    ]);
  });
});

describe('prometheus pack', () => {
  const rs = builtinRuleSet(['prometheus']);

  it('an Alertmanager refers to its config Secret, AlertmanagerConfig and mounted Secrets', () => {
    const am: KubeObject = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'Alertmanager',
      metadata: { name: 'main', namespace: 'monitoring' },
      spec: {
        configSecret: 'alertmanager-main-config',
        alertmanagerConfiguration: { name: 'global' },
        secrets: ['smtp'],
      },
    };
    expect(extractReferences(rs, am)).toEqual([
      { referent: 'Secret/monitoring/alertmanager-main-config', fieldPath: 'spec.configSecret' },
      {
        referent: 'AlertmanagerConfig.monitoring.coreos.com/monitoring/global',
        fieldPath: 'spec.alertmanagerConfiguration.name',
      },
      { referent: 'Secret/monitoring/smtp', fieldPath: 'spec.secrets[0]' },
    ]);
  });

  it("a ServiceMonitor refers to its endpoints' credentials", () => {
    const sm: KubeObject = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        endpoints: [
          {
            port: 'metrics',
            basicAuth: { username: { name: 'scrape', key: 'u' }, password: { name: 'scrape', key: 'p' } },
          },
        ],
      },
    };
    expect(extractReferences(rs, sm)).toEqual([
      { referent: 'Secret/shop/scrape', fieldPath: 'spec.endpoints[0].basicAuth.username.name' },
      { referent: 'Secret/shop/scrape', fieldPath: 'spec.endpoints[0].basicAuth.password.name' },
    ]);
  });
});

describe('project packs', () => {
  it('hold at least 45 name relations between them', () => {
    const count = (['cert-manager', 'external-secrets', 'flux', 'argocd', 'keda', 'prometheus'] as const)
      .map((p) => builtinPacks[p].rules.reduce((n, r) => n + r.references.length, 0))
      .reduce((a, b) => a + b, 0);
    expect(count).toBeGreaterThanOrEqual(45);
  });
});
