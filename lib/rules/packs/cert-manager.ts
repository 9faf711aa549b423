import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const CERT_MANAGER_GROUP = 'cert-manager.io';
const ACME_GROUP = 'acme.cert-manager.io';

/** Where cert-manager reads a ClusterIssuer's Secrets: its --cluster-resource-namespace, `cert-manager` by default. */
const CLUSTER_RESOURCE_NAMESPACE = 'cert-manager';

/** issuerRef names an Issuer unless its kind says ClusterIssuer; group is cert-manager.io unless an external issuer's. */
const issuerRef: ReferenceInput = {
  path: 'spec.issuerRef.name',
  referent: { group: CERT_MANAGER_GROUP, kind: 'Issuer' },
  kindField: 'kind',
  groupField: 'group',
};

/** The ACME DNS-01 solvers' credential Secrets, as the v1 API reference names them. */
const DNS01_SECRETS = [
  'cloudflare.apiTokenSecretRef',
  'cloudflare.apiKeySecretRef',
  'route53.accessKeyIDSecretRef',
  'route53.secretAccessKeySecretRef',
  'cloudDNS.serviceAccountSecretRef',
  'azureDNS.clientSecretSecretRef',
  'digitalocean.tokenSecretRef',
  'rfc2136.tsigSecretSecretRef',
  'acmeDNS.accountSecretRef',
  'akamai.clientTokenSecretRef',
  'akamai.clientSecretSecretRef',
  'akamai.accessTokenSecretRef',
];

/** An Issuer's and a ClusterIssuer's Secrets: CA, ACME account key, EAB key, solver, Vault and Venafi credentials. */
function issuerSecrets(namespace?: string): ReferenceInput[] {
  const secret = (path: string): ReferenceInput => ({
    path,
    referent: { kind: 'Secret' },
    ...(namespace ? { namespace } : {}),
  });
  return [
    secret('spec.ca.secretName'),
    secret('spec.acme.privateKeySecretRef.name'),
    secret('spec.acme.externalAccountBinding.keySecretRef.name'),
    ...DNS01_SECRETS.map((s) => secret(`spec.acme.solvers[*].dns01.${s}.name`)),
    secret('spec.vault.auth.tokenSecretRef.name'),
    secret('spec.vault.auth.appRole.secretRef.name'),
    secret('spec.vault.auth.kubernetes.secretRef.name'),
    secret('spec.vault.caBundleSecretRef.name'),
    secret('spec.venafi.tpp.credentialsRef.name'),
    secret('spec.venafi.cloud.apiTokenSecretRef.name'),
  ];
}

/**
 * cert-manager: Certificates and CertificateRequests to their issuer, the
 * Secret a Certificate produces, the issuers' credential Secrets, and
 * Ingresses to the issuer their cert-manager.io annotations name.
 */
export const certManagerPack = definePack('cert-manager', {
  rules: [
    {
      referrer: { group: CERT_MANAGER_GROUP, kind: 'Certificate' },
      references: [
        issuerRef,
        { path: 'spec.secretName', referent: { kind: 'Secret' }, produces: true },
        { path: 'spec.keystores.jks.passwordSecretRef.name', referent: { kind: 'Secret' } },
        { path: 'spec.keystores.pkcs12.passwordSecretRef.name', referent: { kind: 'Secret' } },
      ],
    },
    { referrer: { group: CERT_MANAGER_GROUP, kind: 'CertificateRequest' }, references: [issuerRef] },
    {
      // ingress-shim: an annotated Ingress gets a Certificate from this issuer; issuer-kind/-group name an external one.
      referrer: { group: 'networking.k8s.io', kind: 'Ingress' },
      references: [
        {
          path: "metadata.annotations['cert-manager.io/issuer']",
          referent: { group: CERT_MANAGER_GROUP, kind: 'Issuer' },
          kindField: "['cert-manager.io/issuer-kind']",
          groupField: "['cert-manager.io/issuer-group']",
        },
        {
          path: "metadata.annotations['cert-manager.io/cluster-issuer']",
          referent: { group: CERT_MANAGER_GROUP, kind: 'ClusterIssuer' },
        },
      ],
    },
    { referrer: { group: ACME_GROUP, kind: 'Order' }, references: [issuerRef] },
    { referrer: { group: CERT_MANAGER_GROUP, kind: 'Issuer' }, references: issuerSecrets() },
    {
      referrer: { group: CERT_MANAGER_GROUP, kind: 'ClusterIssuer' },
      references: issuerSecrets(CLUSTER_RESOURCE_NAMESPACE),
    },
  ],
  kinds: [
    { group: CERT_MANAGER_GROUP, kind: 'Issuer', ready: { condition: 'Ready' } },
    { group: CERT_MANAGER_GROUP, kind: 'ClusterIssuer', scope: 'Cluster', ready: { condition: 'Ready' } },
    { group: CERT_MANAGER_GROUP, kind: 'Certificate', ready: { condition: 'Ready' } },
    { kind: 'Secret', ready: 'exists' },
  ],
});
