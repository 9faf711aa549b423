import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';
import { coreSelectorRules } from './core-selectors';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

const RBAC = 'rbac.authorization.k8s.io';

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
 * core: references between built-in Kubernetes kinds. A ConfigMap or Secret
 * marked `optional: true` in the Pod yields an optional reference.
 */
export const corePack = definePack('core', {
  rules: [
    {
      referrer: { kind: 'Pod' },
      references: [
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
    { group: 'storage.k8s.io', kind: 'StorageClass', scope: 'Cluster', ready: 'exists' },
    { group: 'networking.k8s.io', kind: 'IngressClass', scope: 'Cluster', ready: 'exists' },
    { kind: 'PersistentVolume', scope: 'Cluster', ready: { field: 'status.phase', equals: 'Bound' } },
    { kind: 'PersistentVolumeClaim', ready: { field: 'status.phase', equals: 'Bound' } },
    { group: 'apps', kind: 'Deployment', ready: { condition: 'Available' } },
    { kind: 'Pod', ready: { condition: 'Ready' } },
  ],
});
