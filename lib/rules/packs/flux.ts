import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const FLUX_SOURCE_GROUP = 'source.toolkit.fluxcd.io';
export const FLUX_KUSTOMIZE_GROUP = 'kustomize.toolkit.fluxcd.io';
export const FLUX_HELM_GROUP = 'helm.toolkit.fluxcd.io';
const FLUX_NOTIFICATION_GROUP = 'notification.toolkit.fluxcd.io';

/** Flux cross-object refs carry kind, namespace and sometimes apiVersion next to the name. */
const sourceRef = (path: string, kind: string): ReferenceInput => ({
  path,
  referent: { group: FLUX_SOURCE_GROUP, kind },
  kindField: 'kind',
  namespaceField: 'namespace',
  apiVersionField: 'apiVersion',
});

const secret = (path: string): ReferenceInput => ({ path, referent: { kind: 'Secret' } });

/** substituteFrom and valuesFrom name a ConfigMap or a Secret by kind, and may be optional. */
const configOrSecret = (path: string): ReferenceInput => ({
  path,
  referent: { kind: 'ConfigMap' },
  kindField: 'kind',
  optionalField: 'optional',
});

const sourceSecrets = (extra: string[] = []) => [
  secret('spec.secretRef.name'),
  secret('spec.proxySecretRef.name'),
  ...extra.map(secret),
];

/**
 * flux: Kustomizations and HelmReleases to their sources, dependencies,
 * Secrets and values; sources to their credentials; notification Alerts to
 * their Providers.
 */
export const fluxPack = definePack('flux', {
  rules: [
    {
      referrer: { group: FLUX_KUSTOMIZE_GROUP, kind: 'Kustomization' },
      references: [
        sourceRef('spec.sourceRef.name', 'GitRepository'),
        {
          path: 'spec.dependsOn[*].name',
          referent: { group: FLUX_KUSTOMIZE_GROUP, kind: 'Kustomization' },
          namespaceField: 'namespace',
        },
        secret('spec.decryption.secretRef.name'),
        secret('spec.kubeConfig.secretRef.name'),
        configOrSecret('spec.postBuild.substituteFrom[*].name'),
        { path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
      ],
    },
    {
      referrer: { group: FLUX_HELM_GROUP, kind: 'HelmRelease' },
      references: [
        sourceRef('spec.chart.spec.sourceRef.name', 'HelmRepository'),
        sourceRef('spec.chartRef.name', 'OCIRepository'),
        {
          path: 'spec.dependsOn[*].name',
          referent: { group: FLUX_HELM_GROUP, kind: 'HelmRelease' },
          namespaceField: 'namespace',
        },
        configOrSecret('spec.valuesFrom[*].name'),
        secret('spec.kubeConfig.secretRef.name'),
        { path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
      ],
    },
    {
      referrer: { group: FLUX_SOURCE_GROUP, kind: 'GitRepository' },
      references: sourceSecrets(['spec.verify.secretRef.name']),
    },
    {
      referrer: { group: FLUX_SOURCE_GROUP, kind: 'OCIRepository' },
      references: [
        ...sourceSecrets(['spec.certSecretRef.name', 'spec.verify.secretRef.name']),
        { path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
      ],
    },
    {
      referrer: { group: FLUX_SOURCE_GROUP, kind: 'HelmRepository' },
      references: sourceSecrets(['spec.certSecretRef.name']),
    },
    { referrer: { group: FLUX_SOURCE_GROUP, kind: 'Bucket' }, references: sourceSecrets(['spec.certSecretRef.name']) },
    {
      referrer: { group: FLUX_SOURCE_GROUP, kind: 'HelmChart' },
      references: [sourceRef('spec.sourceRef.name', 'HelmRepository'), secret('spec.verify.secretRef.name')],
    },
    {
      referrer: { group: FLUX_NOTIFICATION_GROUP, kind: 'Alert' },
      references: [{ path: 'spec.providerRef.name', referent: { group: FLUX_NOTIFICATION_GROUP, kind: 'Provider' } }],
    },
    {
      referrer: { group: FLUX_NOTIFICATION_GROUP, kind: 'Provider' },
      references: [secret('spec.secretRef.name'), secret('spec.certSecretRef.name')],
    },
    { referrer: { group: FLUX_NOTIFICATION_GROUP, kind: 'Receiver' }, references: [secret('spec.secretRef.name')] },
  ],
  kinds: [
    { group: FLUX_SOURCE_GROUP, kind: 'GitRepository', ready: { condition: 'Ready' } },
    { group: FLUX_SOURCE_GROUP, kind: 'OCIRepository', ready: { condition: 'Ready' } },
    { group: FLUX_SOURCE_GROUP, kind: 'HelmRepository', ready: { condition: 'Ready' } },
    { group: FLUX_SOURCE_GROUP, kind: 'HelmChart', ready: { condition: 'Ready' } },
    { group: FLUX_SOURCE_GROUP, kind: 'Bucket', ready: { condition: 'Ready' } },
    { group: FLUX_KUSTOMIZE_GROUP, kind: 'Kustomization', ready: { condition: 'Ready' } },
    { group: FLUX_HELM_GROUP, kind: 'HelmRelease', ready: { condition: 'Ready' } },
    { group: FLUX_NOTIFICATION_GROUP, kind: 'Provider', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
    { kind: 'ConfigMap', ready: 'exists' },
    { kind: 'ServiceAccount', ready: 'exists' },
  ],
});
