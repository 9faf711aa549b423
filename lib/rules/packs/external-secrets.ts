import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const EXTERNAL_SECRETS_GROUP = 'external-secrets.io';
const GENERATORS_GROUP = 'generators.external-secrets.io';

/** A store ref names a SecretStore unless its kind says ClusterSecretStore. */
const storeRef = (path: string): ReferenceInput => ({
  path,
  referent: { group: EXTERNAL_SECRETS_GROUP, kind: 'SecretStore' },
  kindField: 'kind',
});

/** An ExternalSecret's spec: its store, per-key stores and generators, and the Secret it produces. */
function externalSecretReferences(spec: string): ReferenceInput[] {
  return [
    storeRef(`${spec}.secretStoreRef.name`),
    storeRef(`${spec}.data[*].sourceRef.storeRef.name`),
    storeRef(`${spec}.dataFrom[*].sourceRef.storeRef.name`),
    {
      path: `${spec}.dataFrom[*].sourceRef.generatorRef.name`,
      referent: { group: GENERATORS_GROUP, kind: 'Password' },
      kindField: 'kind',
      apiVersionField: 'apiVersion',
    },
  ];
}

/** Provider credentials are SecretKeySelectors: {name, key, namespace}; namespace is for ClusterSecretStores. */
const STORE_SECRETS = [
  'aws.auth.secretRef.accessKeyIDSecretRef',
  'aws.auth.secretRef.secretAccessKeySecretRef',
  'aws.auth.secretRef.sessionTokenSecretRef',
  'azurekv.authSecretRef.clientId',
  'azurekv.authSecretRef.clientSecret',
  'gcpsm.auth.secretRef.secretAccessKeySecretRef',
  'vault.auth.tokenSecretRef',
  'vault.auth.appRole.secretRef',
  'vault.auth.kubernetes.secretRef',
  'vault.auth.ldap.secretRef',
  'vault.auth.userPass.secretRef',
  'kubernetes.auth.token.bearerToken',
  'kubernetes.auth.cert.clientCert',
  'kubernetes.auth.cert.clientKey',
  'gitlab.auth.SecretRef.accessToken',
  'akeyless.authSecretRef.secretRef.accessID',
  'doppler.auth.secretRef.dopplerToken',
  'onepassword.auth.secretRef.connectTokenSecretRef',
  'webhook.secrets[*].secretRef',
];

function storeSecrets(): ReferenceInput[] {
  return STORE_SECRETS.map((s) => ({
    path: `spec.provider.${s}.name`,
    referent: { kind: 'Secret' },
    namespaceField: 'namespace',
  }));
}

/**
 * external-secrets: ExternalSecrets to their stores and to the Secret they
 * produce, stores to their credential Secrets, and PushSecrets to the Secret
 * they push and the stores they push to.
 */
export const externalSecretsPack = definePack('external-secrets', {
  rules: [
    {
      referrer: { group: EXTERNAL_SECRETS_GROUP, kind: 'ExternalSecret' },
      references: [
        ...externalSecretReferences('spec'),
        // Without spec.target.name the Secret is named after the ExternalSecret.
        { path: 'spec.target.name', fallbackPath: 'metadata.name', referent: { kind: 'Secret' }, produces: true },
      ],
    },
    {
      referrer: { group: EXTERNAL_SECRETS_GROUP, kind: 'ClusterExternalSecret' },
      references: externalSecretReferences('spec.externalSecretSpec'),
    },
    { referrer: { group: EXTERNAL_SECRETS_GROUP, kind: 'SecretStore' }, references: storeSecrets() },
    { referrer: { group: EXTERNAL_SECRETS_GROUP, kind: 'ClusterSecretStore' }, references: storeSecrets() },
    {
      referrer: { group: EXTERNAL_SECRETS_GROUP, kind: 'PushSecret' },
      references: [
        storeRef('spec.secretStoreRefs[*].name'),
        { path: 'spec.selector.secret.name', referent: { kind: 'Secret' } },
      ],
    },
  ],
  kinds: [
    { group: EXTERNAL_SECRETS_GROUP, kind: 'SecretStore', ready: { condition: 'Ready' } },
    { group: EXTERNAL_SECRETS_GROUP, kind: 'ClusterSecretStore', scope: 'Cluster', ready: { condition: 'Ready' } },
    { group: EXTERNAL_SECRETS_GROUP, kind: 'ExternalSecret', ready: { condition: 'Ready' } },
    { group: GENERATORS_GROUP, kind: 'Password', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
  ],
});
