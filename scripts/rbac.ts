// The read-only RBAC refwatch needs, derived from the rule packs: one rule per
// resource a pack watches (referrer kinds, the referent kinds its references
// name, and its `kinds` table), with get/list/watch only.
//
//   npx tsx scripts/rbac.ts            # rewrites the generated files below
//   npx tsx scripts/rbac.ts --check    # exits 1 if they are stale
//   npx tsx scripts/rbac.ts --print core,gateway   # a ClusterRole's rules for those packs, as YAML
//
// Discovery (/api, /apis) and /version need no rule: Kubernetes grants them to
// every authenticated user (system:discovery, system:public-info-viewer).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { builtinPacks, PACK_NAMES, type PackName, type RulesDocument } from '../lib/rules';

export const READ_VERBS = ['get', 'list', 'watch'] as const;

/** The REST resource of every kind a built-in pack names. A pack that names a kind missing here fails generation. */
export const RESOURCES: Readonly<Record<string, string>> = {
  Pod: 'pods',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  ServiceAccount: 'serviceaccounts',
  Service: 'services',
  Namespace: 'namespaces',
  'PodDisruptionBudget.policy': 'poddisruptionbudgets',
  'NetworkPolicy.networking.k8s.io': 'networkpolicies',
  PersistentVolume: 'persistentvolumes',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  ReplicationController: 'replicationcontrollers',
  Node: 'nodes',
  'Deployment.apps': 'deployments',
  'StatefulSet.apps': 'statefulsets',
  'DaemonSet.apps': 'daemonsets',
  'ReplicaSet.apps': 'replicasets',
  'Job.batch': 'jobs',
  'CronJob.batch': 'cronjobs',
  'PriorityClass.scheduling.k8s.io': 'priorityclasses',
  'RuntimeClass.node.k8s.io': 'runtimeclasses',
  'ValidatingWebhookConfiguration.admissionregistration.k8s.io': 'validatingwebhookconfigurations',
  'MutatingWebhookConfiguration.admissionregistration.k8s.io': 'mutatingwebhookconfigurations',
  'APIService.apiregistration.k8s.io': 'apiservices',
  'CustomResourceDefinition.apiextensions.k8s.io': 'customresourcedefinitions',
  'ReferenceGrant.gateway.networking.k8s.io': 'referencegrants',
  'HorizontalPodAutoscaler.autoscaling': 'horizontalpodautoscalers',
  'Ingress.networking.k8s.io': 'ingresses',
  'IngressClass.networking.k8s.io': 'ingressclasses',
  'Role.rbac.authorization.k8s.io': 'roles',
  'ClusterRole.rbac.authorization.k8s.io': 'clusterroles',
  'RoleBinding.rbac.authorization.k8s.io': 'rolebindings',
  'ClusterRoleBinding.rbac.authorization.k8s.io': 'clusterrolebindings',
  'StorageClass.storage.k8s.io': 'storageclasses',
  'Gateway.gateway.networking.k8s.io': 'gateways',
  'GatewayClass.gateway.networking.k8s.io': 'gatewayclasses',
  'HTTPRoute.gateway.networking.k8s.io': 'httproutes',
  'GRPCRoute.gateway.networking.k8s.io': 'grpcroutes',
  'TCPRoute.gateway.networking.k8s.io': 'tcproutes',
  'TLSRoute.gateway.networking.k8s.io': 'tlsroutes',
  'UDPRoute.gateway.networking.k8s.io': 'udproutes',
  'Composition.apiextensions.crossplane.io': 'compositions',
  'CompositionRevision.apiextensions.crossplane.io': 'compositionrevisions',
  'Certificate.cert-manager.io': 'certificates',
  'CertificateRequest.cert-manager.io': 'certificaterequests',
  'Issuer.cert-manager.io': 'issuers',
  'ClusterIssuer.cert-manager.io': 'clusterissuers',
  'Order.acme.cert-manager.io': 'orders',
  'ExternalSecret.external-secrets.io': 'externalsecrets',
  'ClusterExternalSecret.external-secrets.io': 'clusterexternalsecrets',
  'SecretStore.external-secrets.io': 'secretstores',
  'ClusterSecretStore.external-secrets.io': 'clustersecretstores',
  'PushSecret.external-secrets.io': 'pushsecrets',
  'Password.generators.external-secrets.io': 'passwords',
  'Kustomization.kustomize.toolkit.fluxcd.io': 'kustomizations',
  'HelmRelease.helm.toolkit.fluxcd.io': 'helmreleases',
  'GitRepository.source.toolkit.fluxcd.io': 'gitrepositories',
  'OCIRepository.source.toolkit.fluxcd.io': 'ocirepositories',
  'HelmRepository.source.toolkit.fluxcd.io': 'helmrepositories',
  'HelmChart.source.toolkit.fluxcd.io': 'helmcharts',
  'Bucket.source.toolkit.fluxcd.io': 'buckets',
  'Alert.notification.toolkit.fluxcd.io': 'alerts',
  'Provider.notification.toolkit.fluxcd.io': 'providers',
  'Receiver.notification.toolkit.fluxcd.io': 'receivers',
  'Application.argoproj.io': 'applications',
  'ApplicationSet.argoproj.io': 'applicationsets',
  'AppProject.argoproj.io': 'appprojects',
  'ScaledObject.keda.sh': 'scaledobjects',
  'ScaledJob.keda.sh': 'scaledjobs',
  'TriggerAuthentication.keda.sh': 'triggerauthentications',
  'ClusterTriggerAuthentication.keda.sh': 'clustertriggerauthentications',
  'Prometheus.monitoring.coreos.com': 'prometheuses',
  'Alertmanager.monitoring.coreos.com': 'alertmanagers',
  'AlertmanagerConfig.monitoring.coreos.com': 'alertmanagerconfigs',
  'ServiceMonitor.monitoring.coreos.com': 'servicemonitors',
  'PodMonitor.monitoring.coreos.com': 'podmonitors',
  'Probe.monitoring.coreos.com': 'probes',
  'PrometheusRule.monitoring.coreos.com': 'prometheusrules',
};

/** A resource refwatch reads: its API group ('' is core), plural name, and the kind it serves. */
export interface Grant {
  apiGroup: string;
  resource: string;
  kind: string;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const grantId = (g: Grant) => `${g.apiGroup}/${g.resource}`;

/**
 * packGrants lists the resources one pack makes refwatch watch. Kinds a pack
 * names only as "any group" (Crossplane's ProviderConfig) or whose group comes
 * from the referrer cannot be listed without a wildcard: they are left to
 * the chart's rbac.extraRules, and so are kinds read from the object itself
 * (an HPA's scaleTargetRef beyond Deployment, Crossplane's resourceRef).
 */
export function packGrants(doc: RulesDocument): Grant[] {
  const kinds = new Map<string, Grant>();
  const add = (group: unknown, kind: string | undefined) => {
    if (kind === undefined || typeof group !== 'string' || group === '*') return;
    const id = group === '' ? kind : `${kind}.${group}`;
    const resource = RESOURCES[id];
    if (!resource)
      throw new Error(`pack ${doc.name}: kind ${id} has no REST resource in scripts/rbac.ts RESOURCES; add it there`);
    kinds.set(id, { apiGroup: group, resource, kind });
  };
  for (const rule of doc.rules) {
    add(rule.referrer.group, rule.referrer.kind);
    for (const ref of rule.references) {
      if ('lookup' in ref) add(ref.lookup.referent.group, ref.lookup.referent.kind);
      else add(ref.referent?.group, ref.referent?.kind);
      // A namespace selector in label form reads the Namespaces' labels.
      if ('namespaceSelector' in ref && ref.namespaceSelector !== undefined) add('', 'Namespace');
    }
  }
  for (const c of doc.conventions) for (const f of c.fields) add(f.referent?.group, f.referent?.kind);
  for (const k of doc.kinds) add(k.group, k.kind);
  return [...kinds.values()].sort((a, b) => grantId(a).localeCompare(grantId(b)));
}

/** grantsFor is the union of the packs' grants, each resource once, sorted. */
export function grantsFor(packs: readonly PackName[]): Grant[] {
  const all = new Map<string, Grant>();
  for (const p of packs) for (const g of packGrants(builtinPacks[p])) all.set(grantId(g), g);
  return [...all.values()].sort((a, b) => grantId(a).localeCompare(grantId(b)));
}

/** clusterRoleRules groups grants by API group: one PolicyRule per group, read verbs only. */
export function clusterRoleRules(grants: readonly Grant[]): PolicyRule[] {
  const byGroup = new Map<string, string[]>();
  for (const g of grants) byGroup.set(g.apiGroup, [...(byGroup.get(g.apiGroup) ?? []), g.resource]);
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: resources.sort(), verbs: [...READ_VERBS] }));
}

/**
 * Rules the server needs whatever the packs: the details panel lists each object's core Events, and
 * ReferenceRules objects add rules live (a cluster without them answers Forbidden, shown as a warning).
 */
export const SERVER_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['events'], verbs: ['list'] },
  { apiGroups: ['refwatch.dev'], resources: ['referencerules'], verbs: [...READ_VERBS] },
];

/** serverRules is the ClusterRole's rules for a set of packs: theirs, then the server's own. */
export function serverRules(packs: readonly PackName[]): PolicyRule[] {
  return [
    ...clusterRoleRules(grantsFor(packs)),
    ...SERVER_RULES.map((r) => ({ apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] })),
  ];
}

const GENERATED =
  '# Generated by scripts/rbac.ts from the rule packs; do not edit. Regenerate with `npx tsx scripts/rbac.ts`.';

/** The kustomize base's ClusterRole: the core pack, which is refwatch's default. */
function kustomizeClusterRole(): string {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'refwatch-read', labels: { 'app.kubernetes.io/name': 'refwatch' } },
    rules: serverRules(['core']),
  };
  return `${GENERATED}\n# Rules for the core pack (REFWATCH_RULE_PACKS=core); for other packs use the Helm chart or \`npx tsx scripts/rbac.ts --print core,gateway\`.\n${stringify(role)}`;
}

/** The chart's ClusterRole: one rule per resource, rendered when any enabled pack needs it. */
function helmClusterRole(): string {
  const needs = new Map<string, { grant: Grant; packs: PackName[] }>();
  for (const p of PACK_NAMES) {
    for (const g of packGrants(builtinPacks[p])) {
      const e = needs.get(grantId(g)) ?? { grant: g, packs: [] };
      e.packs.push(p);
      needs.set(grantId(g), e);
    }
  }
  const blocks = [...needs.values()]
    .sort((a, b) => grantId(a.grant).localeCompare(grantId(b.grant)))
    .map(({ grant, packs }) => {
      const cond =
        packs.length === 1 ? `has "${packs[0]}" $packs` : `or ${packs.map((p) => `(has "${p}" $packs)`).join(' ')}`;
      return [
        `  {{- if ${cond} }}`,
        `  - apiGroups: [${JSON.stringify(grant.apiGroup)}]`,
        `    resources: [${JSON.stringify(grant.resource)}]`,
        `    verbs: [${READ_VERBS.map((v) => JSON.stringify(v)).join(', ')}]`,
        '  {{- end }}',
      ].join('\n');
    });
  return [
    `{{- /* ${GENERATED.slice(2)} */}}`,
    '{{- if .Values.rbac.create }}',
    '{{- $packs := .Values.rulePacks }}',
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRole',
    'metadata:',
    '  name: {{ include "refwatch.fullname" . }}-read',
    '  labels:',
    '    {{- include "refwatch.labels" . | nindent 4 }}',
    'rules:',
    ...blocks,
    ...SERVER_RULES.map((r) =>
      [
        `  - apiGroups: [${r.apiGroups.map((g) => JSON.stringify(g)).join(', ')}]`,
        `    resources: [${r.resources.map((x) => JSON.stringify(x)).join(', ')}]`,
        `    verbs: [${r.verbs.map((v) => JSON.stringify(v)).join(', ')}]`,
      ].join('\n'),
    ),
    '  {{- with .Values.rbac.extraRules }}',
    '  {{- toYaml . | nindent 2 }}',
    '  {{- end }}',
    '{{- end }}',
    '',
  ].join('\n');
}

const ROOT = path.resolve(import.meta.dirname, '..');

/** The generated files, by path from the repository root. */
export function generatedFiles(): Record<string, string> {
  return {
    'deploy/kubernetes/base/clusterrole.yaml': kustomizeClusterRole(),
    'deploy/helm/refwatch/templates/clusterrole.yaml': helmClusterRole(),
  };
}

function main(argv: string[]): number {
  if (argv[0] === '--print') {
    const packs = (argv[1] ?? 'core').split(',').map((p) => p.trim());
    const unknown = packs.filter((p) => !PACK_NAMES.includes(p as PackName));
    if (unknown.length > 0) {
      console.error(`rbac: unknown pack ${unknown.join(', ')}; packs are ${PACK_NAMES.join(', ')}`);
      return 2;
    }
    process.stdout.write(stringify({ rules: serverRules(packs as PackName[]) }));
    return 0;
  }
  const check = argv[0] === '--check';
  let stale = 0;
  for (const [file, text] of Object.entries(generatedFiles())) {
    const abs = path.join(ROOT, file);
    let current = '';
    try {
      current = readFileSync(abs, 'utf8');
    } catch {
      // Missing: stale, or written below.
    }
    if (current === text) continue;
    stale++;
    if (check) console.error(`rbac: ${file} is stale; run npx tsx scripts/rbac.ts`);
    else {
      writeFileSync(abs, text);
      console.log(`rbac: wrote ${file}`);
    }
  }
  return check && stale > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename))
  process.exit(main(process.argv.slice(2)));
