import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';
import { coreSelectorRules } from './core-selectors';

/** A name reference as a pack writes it (selector references live in core-selectors.ts). */
type ReferenceInput = Exclude<
  NonNullable<RulesDocumentInput['rules']>[number]['references'][number],
  { selector: string }
>;

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';
const STORAGE = 'storage.k8s.io';

/** Every container list of a Pod: what envFrom and env are read from. */
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

function containerReferences(list: string): ReferenceInput[] {
  const c = `spec.${list}[*]`;
  return [
    { path: `${c}.envFrom[*].configMapRef.name`, referent: { kind: 'ConfigMap' }, optionalField: 'optional' },
    { path: `${c}.env[*].valueFrom.configMapKeyRef.name`, referent: { kind: 'ConfigMap' }, optionalField: 'optional' },
    { path: `${c}.envFrom[*].secretRef.name`, referent: { kind: 'Secret' }, optionalField: 'optional' },
    { path: `${c}.env[*].valueFrom.secretKeyRef.name`, referent: { kind: 'Secret' }, optionalField: 'optional' },
  ];
}

/**
 * What a Pod spec names, with paths from the object holding it (`spec.…`):
 * the one source for Pods and for every workload's Pod template.
 */
const POD_SPEC_REFERENCES: ReferenceInput[] = [
  { path: 'spec.volumes[*].configMap.name', referent: { kind: 'ConfigMap' }, optionalField: 'optional' },
  {
    path: 'spec.volumes[*].projected.sources[*].configMap.name',
    referent: { kind: 'ConfigMap' },
    optionalField: 'optional',
  },
  { path: 'spec.volumes[*].secret.secretName', referent: { kind: 'Secret' }, optionalField: 'optional' },
  {
    path: 'spec.volumes[*].projected.sources[*].secret.name',
    referent: { kind: 'Secret' },
    optionalField: 'optional',
  },
  { path: 'spec.volumes[*].persistentVolumeClaim.claimName', referent: { kind: 'PersistentVolumeClaim' } },
  ...CONTAINER_LISTS.flatMap(containerReferences),
  { path: 'spec.imagePullSecrets[*].name', referent: { kind: 'Secret' } },
  { path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
  { path: 'spec.priorityClassName', referent: { group: 'scheduling.k8s.io', kind: 'PriorityClass' } },
  { path: 'spec.runtimeClassName', referent: { group: 'node.k8s.io', kind: 'RuntimeClass' } },
];

/** A Pod template's references: the Pod's, under `prefix` (`spec.template.`). */
const podTemplateReferences = (prefix: string): ReferenceInput[] =>
  POD_SPEC_REFERENCES.map((r) => ({ ...r, path: `${prefix}${r.path}` }));

/**
 * An owner that is gone leaves its object orphaned: worth seeing, yet the
 * object still runs, so it never blocks (severity warn). The owner's kind and
 * group are on the reference itself.
 */
const ownerReference = (owner: { group: string; kind: string }): ReferenceInput => ({
  path: 'metadata.ownerReferences[*].name',
  referent: owner,
  kindField: 'kind',
  apiVersionField: 'apiVersion',
  severity: 'warn',
});

/**
 * A webhook's clientConfig.service, under `at`; the Service's namespace is beside its name. A
 * Service with no Ready Pod behind its selector answers no call either, so it counts as NotReady.
 */
const serviceOf = (at: string): ReferenceInput => ({
  path: `${at}.service.name`,
  referent: { kind: 'Service' },
  namespaceField: 'namespace',
  readyEndpoints: true,
});

/** The workloads whose Pod template is a referrer, and where the template sits. */
const WORKLOADS: { group: string; kind: string; template: string }[] = [
  { group: 'apps', kind: 'Deployment', template: 'spec.template.' },
  { group: 'apps', kind: 'StatefulSet', template: 'spec.template.' },
  { group: 'apps', kind: 'DaemonSet', template: 'spec.template.' },
  { group: 'apps', kind: 'ReplicaSet', template: 'spec.template.' },
  { group: 'batch', kind: 'Job', template: 'spec.template.' },
  { group: 'batch', kind: 'CronJob', template: 'spec.jobTemplate.spec.template.' },
];

/** What a workload names beyond its template. */
const WORKLOAD_EXTRAS: Record<string, ReferenceInput[]> = {
  StatefulSet: [
    // The headless Service that gives the Pods their stable network names.
    { path: 'spec.serviceName', referent: { kind: 'Service' } },
    { path: 'spec.volumeClaimTemplates[*].spec.storageClassName', referent: { group: STORAGE, kind: 'StorageClass' } },
  ],
  ReplicaSet: [ownerReference({ group: 'apps', kind: 'Deployment' })],
  Job: [ownerReference({ group: 'batch', kind: 'CronJob' })],
};

/** A binding's subjects of kind ServiceAccount; Users and Groups are not objects. */
const subjectServiceAccount: ReferenceInput = {
  path: 'subjects[*].name',
  referent: { kind: 'ServiceAccount' },
  namespaceField: 'namespace',
  when: { field: 'kind', equals: 'ServiceAccount' },
};

/**
 * core: references between built-in Kubernetes kinds. A ConfigMap or Secret
 * marked `optional: true` in the Pod yields an optional reference.
 */
export const corePack = definePack('core', {
  rules: [
    {
      referrer: { kind: 'Pod' },
      references: [
        ...POD_SPEC_REFERENCES,
        // Only the Pod itself is bound to a node; a template naming one is rare and pins every replica.
        { path: 'spec.nodeName', referent: { kind: 'Node' } },
        ownerReference({ group: 'apps', kind: 'ReplicaSet' }),
      ],
    },
    ...WORKLOADS.map((w) => ({
      referrer: { group: w.group, kind: w.kind },
      references: [...podTemplateReferences(w.template), ...(WORKLOAD_EXTRAS[w.kind] ?? [])],
    })),
    {
      referrer: { kind: 'ServiceAccount' },
      references: [
        { path: 'secrets[*].name', referent: { kind: 'Secret' } },
        { path: 'imagePullSecrets[*].name', referent: { kind: 'Secret' } },
      ],
    },
    {
      referrer: { group: 'networking.k8s.io', kind: 'Ingress' },
      references: [
        { path: 'spec.defaultBackend.service.name', referent: { kind: 'Service' } },
        { path: 'spec.rules[*].http.paths[*].backend.service.name', referent: { kind: 'Service' } },
        { path: 'spec.tls[*].secretName', referent: { kind: 'Secret' } },
        { path: 'spec.ingressClassName', referent: { group: 'networking.k8s.io', kind: 'IngressClass' } },
      ],
    },
    {
      // roleRef.kind is Role or ClusterRole; the kinds table makes ClusterRole cluster-scoped.
      referrer: { group: RBAC, kind: 'RoleBinding' },
      references: [
        { path: 'roleRef.name', referent: { group: RBAC, kind: 'Role' }, kindField: 'kind', groupField: 'apiGroup' },
        subjectServiceAccount,
      ],
    },
    {
      referrer: { group: RBAC, kind: 'ClusterRoleBinding' },
      references: [
        {
          path: 'roleRef.name',
          referent: { group: RBAC, kind: 'ClusterRole' },
          kindField: 'kind',
          groupField: 'apiGroup',
        },
        subjectServiceAccount,
      ],
    },
    {
      referrer: { group: ADMISSION, kind: 'ValidatingWebhookConfiguration' },
      references: [serviceOf('webhooks[*].clientConfig')],
    },
    {
      referrer: { group: ADMISSION, kind: 'MutatingWebhookConfiguration' },
      references: [serviceOf('webhooks[*].clientConfig')],
    },
    {
      referrer: { group: 'apiregistration.k8s.io', kind: 'APIService' },
      references: [serviceOf('spec')],
    },
    {
      referrer: { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
      references: [serviceOf('spec.conversion.webhook.clientConfig')],
    },
    {
      referrer: { kind: 'PersistentVolume' },
      references: [
        { path: 'spec.storageClassName', referent: { group: STORAGE, kind: 'StorageClass' } },
        // The claim bound to the volume points back at it (volumeName): gone, the volume is Released, not blocked.
        {
          path: 'spec.claimRef.name',
          referent: { kind: 'PersistentVolumeClaim' },
          namespaceField: 'namespace',
          severity: 'warn',
        },
      ],
    },
    {
      referrer: { kind: 'PersistentVolumeClaim' },
      references: [
        { path: 'spec.storageClassName', referent: { group: 'storage.k8s.io', kind: 'StorageClass' } },
        { path: 'spec.volumeName', referent: { kind: 'PersistentVolume' } },
      ],
    },
    {
      // scaleTargetRef says its kind, and its group through apiVersion (apps/v1).
      referrer: { group: 'autoscaling', kind: 'HorizontalPodAutoscaler' },
      references: [
        {
          path: 'spec.scaleTargetRef.name',
          referent: { group: 'apps', kind: 'Deployment' },
          kindField: 'kind',
          apiVersionField: 'apiVersion',
        },
      ],
    },
    ...coreSelectorRules,
  ],
  kinds: [
    { kind: 'Secret', ready: 'exists' },
    { kind: 'ConfigMap', ready: 'exists' },
    { kind: 'ServiceAccount', ready: 'exists' },
    { kind: 'Service', ready: 'exists' },
    { group: RBAC, kind: 'Role', ready: 'exists' },
    { group: RBAC, kind: 'ClusterRole', scope: 'Cluster', ready: 'exists' },
    { group: STORAGE, kind: 'StorageClass', scope: 'Cluster', ready: 'exists' },
    { group: 'networking.k8s.io', kind: 'IngressClass', scope: 'Cluster', ready: 'exists' },
    { kind: 'PersistentVolume', scope: 'Cluster', ready: { field: 'status.phase', equals: 'Bound' } },
    { kind: 'PersistentVolumeClaim', ready: { field: 'status.phase', equals: 'Bound' } },
    { group: 'apps', kind: 'Deployment', ready: { condition: 'Available' } },
    { kind: 'Pod', ready: { condition: 'Ready' } },
    { kind: 'Node', scope: 'Cluster', ready: { condition: 'Ready' } },
    { group: 'scheduling.k8s.io', kind: 'PriorityClass', scope: 'Cluster', ready: 'exists' },
    { group: 'node.k8s.io', kind: 'RuntimeClass', scope: 'Cluster', ready: 'exists' },
    // Owners: an ownerReference asks only that its owner exists.
    { group: 'apps', kind: 'ReplicaSet', ready: 'exists' },
    { group: 'apps', kind: 'StatefulSet', ready: 'exists' },
    { group: 'apps', kind: 'DaemonSet', ready: 'exists' },
    { group: 'batch', kind: 'Job', ready: 'exists' },
    { group: 'batch', kind: 'CronJob', ready: 'exists' },
  ],
});
