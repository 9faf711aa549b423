import { describe, expect, it } from 'vitest';
import { builtinRuleSet, extractReferences, readinessOf, referrerKinds } from '@/lib/rules';
import { validateReference, type KubeObject } from '@/lib/model';

const rs = builtinRuleSet(['core']);

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-7d4b9c-x2k8p', namespace: 'shop', labels: { app: 'web' } },
  spec: {
    serviceAccountName: 'web',
    imagePullSecrets: [{ name: 'registry-creds' }],
    initContainers: [{ name: 'migrate', image: 'shop/migrate:1.4', envFrom: [{ secretRef: { name: 'db-password' } }] }],
    containers: [
      {
        name: 'web',
        image: 'shop/web:1.4',
        envFrom: [{ configMapRef: { name: 'web-env' } }, { secretRef: { name: 'web-secrets', optional: true } }],
        env: [
          { name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: 'logging', key: 'level' } } },
          { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db-password', key: 'password' } } },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'PLAIN', value: 'x' },
        ],
        volumeMounts: [{ name: 'config', mountPath: '/etc/web' }],
      },
    ],
    volumes: [
      { name: 'config', configMap: { name: 'web-config' } },
      { name: 'tls', secret: { secretName: 'web-tls', optional: false } },
      { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
      { name: 'scratch', emptyDir: {} },
      {
        name: 'bundle',
        projected: {
          sources: [
            { configMap: { name: 'ca-bundle' } },
            { secret: { name: 'client-cert', optional: true } },
            { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
            { downwardAPI: { items: [] } },
          ],
        },
      },
    ],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

describe('core pack: Pod', () => {
  const refs = extractReferences(rs, pod);

  it('finds every ConfigMap, Secret, PVC and ServiceAccount the Pod needs', () => {
    expect(refs).toEqual([
      { referent: 'ConfigMap/shop/web-config', fieldPath: 'spec.volumes[0].configMap.name' },
      { referent: 'ConfigMap/shop/ca-bundle', fieldPath: 'spec.volumes[4].projected.sources[0].configMap.name' },
      { referent: 'Secret/shop/web-tls', fieldPath: 'spec.volumes[1].secret.secretName' },
      {
        referent: 'Secret/shop/client-cert',
        fieldPath: 'spec.volumes[4].projected.sources[1].secret.name',
        optional: true,
      },
      { referent: 'PersistentVolumeClaim/shop/web-data', fieldPath: 'spec.volumes[2].persistentVolumeClaim.claimName' },
      { referent: 'ConfigMap/shop/web-env', fieldPath: 'spec.containers[0].envFrom[0].configMapRef.name' },
      { referent: 'ConfigMap/shop/logging', fieldPath: 'spec.containers[0].env[0].valueFrom.configMapKeyRef.name' },
      {
        referent: 'Secret/shop/web-secrets',
        fieldPath: 'spec.containers[0].envFrom[1].secretRef.name',
        optional: true,
      },
      { referent: 'Secret/shop/db-password', fieldPath: 'spec.containers[0].env[1].valueFrom.secretKeyRef.name' },
      { referent: 'Secret/shop/db-password', fieldPath: 'spec.initContainers[0].envFrom[0].secretRef.name' },
      { referent: 'Secret/shop/registry-creds', fieldPath: 'spec.imagePullSecrets[0].name' },
      { referent: 'ServiceAccount/shop/web', fieldPath: 'spec.serviceAccountName' },
    ]);
  });

  it('returns valid references only', () => {
    for (const r of refs) expect(validateReference(r).ok).toBe(true);
  });

  it('finds nothing in a bare Pod', () => {
    expect(
      extractReferences(rs, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'shop' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      }),
    ).toEqual([]);
  });

  it('Pod readiness is its Ready condition', () => {
    expect(readinessOf(rs, pod)).toEqual({ ready: true });
    const notReady = {
      ...pod,
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ContainersNotReady',
            message: 'containers with unready status: [web]',
          },
        ],
      },
    };
    expect(readinessOf(rs, notReady)).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [web]',
    });
  });
});

describe('core pack: Ingress', () => {
  const ingress: KubeObject = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'shop', namespace: 'shop' },
    spec: {
      ingressClassName: 'nginx',
      defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }, { hosts: ['api.example.com'] }],
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
              { path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { name: 'http' } } } },
            ],
          },
        },
      ],
    },
  };

  it('finds the backends, TLS secrets and the ingress class', () => {
    expect(extractReferences(rs, ingress)).toEqual([
      { referent: 'Service/shop/fallback', fieldPath: 'spec.defaultBackend.service.name' },
      { referent: 'Service/shop/web', fieldPath: 'spec.rules[0].http.paths[0].backend.service.name' },
      { referent: 'Service/shop/api', fieldPath: 'spec.rules[0].http.paths[1].backend.service.name' },
      { referent: 'Secret/shop/shop-tls', fieldPath: 'spec.tls[0].secretName' },
      { referent: 'IngressClass.networking.k8s.io//nginx', fieldPath: 'spec.ingressClassName' },
    ]);
  });
});

describe('core pack: RBAC', () => {
  const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', roleKind: string, roleName: string): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: kind === 'RoleBinding' ? { name: 'b', namespace: 'shop' } : { name: 'b' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: 'shop' }],
  });

  it('a RoleBinding refers to a Role in its namespace, and to its ServiceAccount subjects', () => {
    expect(extractReferences(rs, binding('RoleBinding', 'Role', 'pod-reader'))).toEqual([
      { referent: 'Role.rbac.authorization.k8s.io/shop/pod-reader', fieldPath: 'roleRef.name' },
      { referent: 'ServiceAccount/shop/web', fieldPath: 'subjects[0].name' },
    ]);
  });

  it('a RoleBinding to a ClusterRole refers to the cluster-scoped role, colons and all', () => {
    expect(extractReferences(rs, binding('RoleBinding', 'ClusterRole', 'system:aggregate-to-view'))).toEqual([
      { referent: 'ClusterRole.rbac.authorization.k8s.io//system:aggregate-to-view', fieldPath: 'roleRef.name' },
      { referent: 'ServiceAccount/shop/web', fieldPath: 'subjects[0].name' },
    ]);
  });

  it('a ClusterRoleBinding refers to a ClusterRole', () => {
    expect(extractReferences(rs, binding('ClusterRoleBinding', 'ClusterRole', 'view'))).toEqual([
      { referent: 'ClusterRole.rbac.authorization.k8s.io//view', fieldPath: 'roleRef.name' },
      { referent: 'ServiceAccount/shop/web', fieldPath: 'subjects[0].name' },
    ]);
  });

  it('roles are ready as soon as they exist', () => {
    expect(
      readinessOf(rs, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'view' } }),
    ).toEqual({ ready: true });
  });
});

describe('core pack: PersistentVolumeClaim', () => {
  const pvc = (phase: string, volumeName?: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'web-data', namespace: 'shop' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'fast-ssd',
      resources: { requests: { storage: '10Gi' } },
      volumeName,
    },
    status: { phase },
  });

  it('refers to its cluster-scoped StorageClass, and to its volume once bound', () => {
    expect(extractReferences(rs, pvc('Pending'))).toEqual([
      { referent: 'StorageClass.storage.k8s.io//fast-ssd', fieldPath: 'spec.storageClassName' },
    ]);
    expect(extractReferences(rs, pvc('Bound', 'pvc-0b1c'))).toContainEqual({
      referent: 'PersistentVolume//pvc-0b1c',
      fieldPath: 'spec.volumeName',
    });
  });

  it('is ready when Bound', () => {
    expect(readinessOf(rs, pvc('Bound'))).toEqual({ ready: true });
    expect(readinessOf(rs, pvc('Pending'))).toEqual({
      ready: false,
      reason: 'FieldMismatch',
      field: 'status.phase',
      message: 'status.phase is "Pending"; ready when it is "Bound"',
    });
  });

  it('StorageClass is ready when it exists', () => {
    expect(
      readinessOf(rs, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast-ssd' } }),
    ).toEqual({ ready: true });
  });
});

describe('core pack: HorizontalPodAutoscaler', () => {
  const hpa = (target: Record<string, string>): KubeObject => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      scaleTargetRef: target,
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
    },
  });

  it('refers to its scale target, group taken from apiVersion', () => {
    expect(extractReferences(rs, hpa({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }))).toEqual([
      { referent: 'Deployment.apps/shop/web', fieldPath: 'spec.scaleTargetRef.name' },
    ]);
    expect(extractReferences(rs, hpa({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' }))).toEqual([
      { referent: 'StatefulSet.apps/shop/db', fieldPath: 'spec.scaleTargetRef.name' },
    ]);
    expect(extractReferences(rs, hpa({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'web' }))).toEqual([
      { referent: 'Rollout.argoproj.io/shop/web', fieldPath: 'spec.scaleTargetRef.name' },
    ]);
  });

  it('a Deployment target is ready when Available', () => {
    const dep = (status: string): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      status: {
        conditions: [
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
          {
            type: 'Available',
            status,
            reason: 'MinimumReplicasUnavailable',
            message: 'Deployment does not have minimum availability.',
          },
        ],
      },
    });
    expect(readinessOf(rs, dep('True'))).toEqual({ ready: true });
    expect(readinessOf(rs, dep('False'))).toMatchObject({
      ready: false,
      condition: 'Available',
      reason: 'MinimumReplicasUnavailable',
    });
  });
});

describe('core pack: kinds', () => {
  it('watches the referrer kinds it has rules for', () => {
    expect(referrerKinds(rs)).toEqual([
      { group: '', kind: 'Pod' },
      { group: 'apps', kind: 'Deployment' },
      { group: 'apps', kind: 'StatefulSet' },
      { group: 'apps', kind: 'DaemonSet' },
      { group: 'apps', kind: 'ReplicaSet' },
      { group: 'batch', kind: 'Job' },
      { group: 'batch', kind: 'CronJob' },
      { group: '', kind: 'ServiceAccount' },
      { group: 'networking.k8s.io', kind: 'Ingress' },
      { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' },
      { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration' },
      { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration' },
      { group: 'apiregistration.k8s.io', kind: 'APIService' },
      { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
      { group: '', kind: 'PersistentVolume' },
      { group: '', kind: 'PersistentVolumeClaim' },
      { group: 'autoscaling', kind: 'HorizontalPodAutoscaler' },
      { group: '', kind: 'Service' },
      { group: 'policy', kind: 'PodDisruptionBudget' },
      { group: 'networking.k8s.io', kind: 'NetworkPolicy' },
    ]);
  });

  it.each(['Secret', 'ConfigMap', 'ServiceAccount', 'Service'])('%s is ready when it exists', (kind) => {
    expect(
      readinessOf(rs, {
        apiVersion: 'v1',
        kind,
        metadata: { name: 'x', namespace: 'shop' },
        status: { conditions: [{ type: 'Ready', status: 'False' }] },
      }),
    ).toEqual({ ready: true });
  });
});
