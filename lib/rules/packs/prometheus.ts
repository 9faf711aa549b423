import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const MONITORING_GROUP = 'monitoring.coreos.com';

const secret = (path: string): ReferenceInput => ({ path, referent: { kind: 'Secret' } });

/** An endpoint's credentials: basic auth, bearer token, OAuth2 and TLS Secrets, as SecretKeySelectors. */
function endpointSecrets(list: string): ReferenceInput[] {
  return [
    secret(`${list}[*].basicAuth.username.name`),
    secret(`${list}[*].basicAuth.password.name`),
    secret(`${list}[*].bearerTokenSecret.name`),
    secret(`${list}[*].authorization.credentials.name`),
    secret(`${list}[*].oauth2.clientSecret.name`),
    secret(`${list}[*].tlsConfig.keySecret.name`),
  ];
}

/** What a Prometheus or an Alertmanager mounts: Secrets, ConfigMaps and its ServiceAccount. */
const mounts: ReferenceInput[] = [
  secret('spec.secrets[*]'),
  { path: 'spec.configMaps[*]', referent: { kind: 'ConfigMap' } },
  { path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
];

/**
 * prometheus: the Prometheus Operator's name references. Alertmanager to its
 * config Secret and AlertmanagerConfig, Prometheus to its scrape-config and
 * remote-write Secrets and its Alertmanager Services, and monitors to their
 * endpoints' credentials. The label-selector relations (ServiceMonitor →
 * Services, PodMonitor → Pods, Prometheus → monitors and rules) need selector
 * references.
 */
export const prometheusPack = definePack('prometheus', {
  rules: [
    {
      referrer: { group: MONITORING_GROUP, kind: 'Alertmanager' },
      references: [
        secret('spec.configSecret'),
        {
          path: 'spec.alertmanagerConfiguration.name',
          referent: { group: MONITORING_GROUP, kind: 'AlertmanagerConfig' },
        },
        ...mounts,
      ],
    },
    {
      referrer: { group: MONITORING_GROUP, kind: 'Prometheus' },
      references: [
        secret('spec.additionalScrapeConfigs.name'),
        secret('spec.additionalAlertManagerConfigs.name'),
        secret('spec.additionalAlertRelabelConfigs.name'),
        ...endpointSecrets('spec.remoteWrite'),
        {
          path: 'spec.alerting.alertmanagers[*].name',
          referent: { kind: 'Service' },
          namespaceField: 'namespace',
        },
        ...mounts,
      ],
    },
    { referrer: { group: MONITORING_GROUP, kind: 'ServiceMonitor' }, references: endpointSecrets('spec.endpoints') },
    {
      referrer: { group: MONITORING_GROUP, kind: 'PodMonitor' },
      references: endpointSecrets('spec.podMetricsEndpoints'),
    },
    {
      referrer: { group: MONITORING_GROUP, kind: 'Probe' },
      references: [
        secret('spec.basicAuth.username.name'),
        secret('spec.basicAuth.password.name'),
        secret('spec.bearerTokenSecret.name'),
      ],
    },
  ],
  kinds: [
    { group: MONITORING_GROUP, kind: 'AlertmanagerConfig', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
    { kind: 'ConfigMap', ready: 'exists' },
    { kind: 'ServiceAccount', ready: 'exists' },
    { kind: 'Service', ready: 'exists' },
  ],
});
