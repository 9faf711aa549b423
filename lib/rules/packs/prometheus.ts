import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];
type SelectorInput = Extract<ReferenceInput, { selector: string }>;

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

/**
 * A monitor's targets: `spec.selector` over the kind, `{}` selecting every one, in the namespaces of
 * `spec.namespaceSelector` (`any: true`, `matchNames`, or else the monitor's own). Selecting nothing is
 * the Prometheus Operator's most common silent failure: nothing is scraped, so it blocks.
 */
const targets = (kind: string): SelectorInput => ({
  selector: 'spec.selector',
  referent: { kind },
  empty: 'all',
  namespaceSelector: 'spec.namespaceSelector',
  namespaceSelectorForm: 'anyOrMatchNames',
});

/**
 * What a Prometheus picks up: an absent selector picks nothing (no reference), `{}` every object; an absent
 * namespace selector means the Prometheus's own namespace, `{}` every namespace. A Prometheus without
 * monitors or rules still runs, so matching nothing is a warning.
 */
const picks = (kind: string, selector: string, namespaceSelector: string): SelectorInput => ({
  selector: `spec.${selector}`,
  referent: { group: MONITORING_GROUP, kind },
  empty: 'all',
  namespaceSelector: `spec.${namespaceSelector}`,
  namespaceSelectorForm: 'labelSelector',
  onNoMatch: 'warn',
});

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
 * endpoints' credentials; and by label selector, ServiceMonitors to their
 * Services, PodMonitors to their Pods, and Prometheus to the ServiceMonitors,
 * PodMonitors and PrometheusRules it picks up.
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
        picks('ServiceMonitor', 'serviceMonitorSelector', 'serviceMonitorNamespaceSelector'),
        picks('PodMonitor', 'podMonitorSelector', 'podMonitorNamespaceSelector'),
        picks('PrometheusRule', 'ruleSelector', 'ruleNamespaceSelector'),
      ],
    },
    {
      referrer: { group: MONITORING_GROUP, kind: 'ServiceMonitor' },
      references: [...endpointSecrets('spec.endpoints'), targets('Service')],
    },
    {
      referrer: { group: MONITORING_GROUP, kind: 'PodMonitor' },
      references: [...endpointSecrets('spec.podMetricsEndpoints'), targets('Pod')],
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
    { group: MONITORING_GROUP, kind: 'ServiceMonitor', ready: 'exists' },
    { group: MONITORING_GROUP, kind: 'PodMonitor', ready: 'exists' },
    { group: MONITORING_GROUP, kind: 'PrometheusRule', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
    { kind: 'ConfigMap', ready: 'exists' },
    { kind: 'ServiceAccount', ready: 'exists' },
    { kind: 'Service', ready: 'exists' },
  ],
});
