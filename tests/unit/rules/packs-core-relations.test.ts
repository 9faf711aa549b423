import { describe, expect, it } from 'vitest';
import { builtinRuleSet, extractReferences, referenceNote, webhookBlastRadius } from '@/lib/rules';
import { validateReference, type KubeObject } from '@/lib/model';

const rs = builtinRuleSet(['core']);

/** A Pod template naming one of every kind a Pod spec refers to. */
const podTemplate = {
  metadata: { labels: { app: 'web' } },
  spec: {
    serviceAccountName: 'web',
    priorityClassName: 'high',
    runtimeClassName: 'gvisor',
    imagePullSecrets: [{ name: 'registry-creds' }],
    containers: [
      {
        name: 'web',
        image: 'shop/web:1.4',
        envFrom: [{ configMapRef: { name: 'web-env' } }],
        env: [{ name: 'DB', valueFrom: { secretKeyRef: { name: 'db-password', key: 'password' } } }],
      },
    ],
    volumes: [
      { name: 'config', configMap: { name: 'web-config' } },
      { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
    ],
  },
};

/** The template's references, with paths under `prefix`. */
const templateRefs = (prefix: string) => [
  { referent: 'ConfigMap/shop/web-config', fieldPath: `${prefix}spec.volumes[0].configMap.name` },
  {
    referent: 'PersistentVolumeClaim/shop/web-data',
    fieldPath: `${prefix}spec.volumes[1].persistentVolumeClaim.claimName`,
  },
  { referent: 'ConfigMap/shop/web-env', fieldPath: `${prefix}spec.containers[0].envFrom[0].configMapRef.name` },
  { referent: 'Secret/shop/db-password', fieldPath: `${prefix}spec.containers[0].env[0].valueFrom.secretKeyRef.name` },
  { referent: 'Secret/shop/registry-creds', fieldPath: `${prefix}spec.imagePullSecrets[0].name` },
  { referent: 'ServiceAccount/shop/web', fieldPath: `${prefix}spec.serviceAccountName` },
  { referent: 'PriorityClass.scheduling.k8s.io//high', fieldPath: `${prefix}spec.priorityClassName` },
  { referent: 'RuntimeClass.node.k8s.io//gvisor', fieldPath: `${prefix}spec.runtimeClassName` },
];

const workload = (apiVersion: string, kind: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: 'web', namespace: 'shop' },
  spec,
});

describe('core pack: workload templates', () => {
  it.each([
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'DaemonSet'],
    ['apps/v1', 'ReplicaSet'],
    ['batch/v1', 'Job'],
  ])('a %s %s refers through its Pod template to what a Pod would', (apiVersion, kind) => {
    const refs = extractReferences(rs, workload(apiVersion, kind, { template: podTemplate }));
    expect(refs).toEqual(templateRefs('spec.template.'));
    for (const r of refs) expect(validateReference(r).ok).toBe(true);
  });

  it('a CronJob refers through spec.jobTemplate.spec.template', () => {
    const cron = workload('batch/v1', 'CronJob', {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: podTemplate } },
    });
    expect(extractReferences(rs, cron)).toEqual(templateRefs('spec.jobTemplate.spec.template.'));
  });

  it('a StatefulSet also refers to its headless Service and its claim templates’ StorageClasses', () => {
    const sts = workload('apps/v1', 'StatefulSet', {
      serviceName: 'web-headless',
      template: podTemplate,
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { storageClassName: 'fast-ssd', accessModes: ['ReadWriteOnce'] } },
        { metadata: { name: 'logs' }, spec: { accessModes: ['ReadWriteOnce'] } },
      ],
    });
    expect(extractReferences(rs, sts)).toEqual([
      ...templateRefs('spec.template.'),
      { referent: 'Service/shop/web-headless', fieldPath: 'spec.serviceName' },
      {
        referent: 'StorageClass.storage.k8s.io//fast-ssd',
        fieldPath: 'spec.volumeClaimTemplates[0].spec.storageClassName',
      },
    ]);
  });

  it('template rules are the Pod rules with a prefix: a Pod rule added shows up in every workload', () => {
    const podPaths = rs.rules.get('Pod')!.map((r) => r.path.source.replace(/^\./, ''));
    for (const kind of ['Deployment.apps', 'StatefulSet.apps', 'DaemonSet.apps', 'ReplicaSet.apps', 'Job.batch']) {
      const paths = rs.rules.get(kind)!.map((r) => r.path.source.replace(/^\./, ''));
      for (const p of podPaths.filter((p) => p.startsWith('spec.') && p !== 'spec.nodeName'))
        expect(paths).toContain(`spec.template.${p}`);
    }
  });
});

describe('core pack: Pod scheduling and owners', () => {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-7d4b9c-x2k8p',
      namespace: 'shop',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c', uid: 'u1', controller: true }],
    },
    spec: { nodeName: 'node-a', priorityClassName: 'high', runtimeClassName: 'gvisor', containers: [] },
  };

  it('refers to its PriorityClass, RuntimeClass, Node and owner', () => {
    expect(extractReferences(rs, pod)).toEqual([
      { referent: 'PriorityClass.scheduling.k8s.io//high', fieldPath: 'spec.priorityClassName' },
      { referent: 'RuntimeClass.node.k8s.io//gvisor', fieldPath: 'spec.runtimeClassName' },
      { referent: 'Node//node-a', fieldPath: 'spec.nodeName' },
      { referent: 'ReplicaSet.apps/shop/web-7d4b9c', fieldPath: 'metadata.ownerReferences[0].name', severity: 'warn' },
    ]);
  });

  it('an owner of another kind is read from the ownerReference (a StatefulSet, a Job)', () => {
    const owned = (apiVersion: string, kind: string): KubeObject => ({
      ...pod,
      metadata: { name: 'p', namespace: 'shop', ownerReferences: [{ apiVersion, kind, name: 'o', uid: 'u' }] },
      spec: {},
    });
    expect(extractReferences(rs, owned('apps/v1', 'StatefulSet'))[0]?.referent).toBe('StatefulSet.apps/shop/o');
    expect(extractReferences(rs, owned('batch/v1', 'Job'))[0]?.referent).toBe('Job.batch/shop/o');
  });

  it('a controller owner that is gone leaves the Pod orphaned, visible but not blocking', () => {
    expect(referenceNote(rs, pod, 'metadata.ownerReferences[0].name', 'NotFound')).toEqual({
      blocking: false,
      label: 'orphaned',
      impact: expect.stringContaining('its controller ReplicaSet is gone'),
    });
    // A reference of severity block says nothing more.
    expect(referenceNote(rs, pod, 'spec.nodeName', 'NotFound')).toBeUndefined();
  });

  it('a ReplicaSet refers to its Deployment, a Job to its CronJob, as owners', () => {
    const rsObj: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-7d4b9c',
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u', controller: true }],
      },
      spec: {},
    };
    expect(extractReferences(rs, rsObj)).toEqual([
      { referent: 'Deployment.apps/shop/web', fieldPath: 'metadata.ownerReferences[0].name', severity: 'warn' },
    ]);
  });
});

describe('core pack: ServiceAccounts and binding subjects', () => {
  it('a ServiceAccount refers to its secrets and imagePullSecrets', () => {
    const sa: KubeObject = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'web', namespace: 'shop' },
      secrets: [{ name: 'web-token' }],
      imagePullSecrets: [{ name: 'registry-creds' }],
    };
    expect(extractReferences(rs, sa)).toEqual([
      { referent: 'Secret/shop/web-token', fieldPath: 'secrets[0].name' },
      { referent: 'Secret/shop/registry-creds', fieldPath: 'imagePullSecrets[0].name' },
    ]);
  });

  it('binding subjects of kind ServiceAccount refer to it, in the subject’s namespace; Users and Groups do not', () => {
    const subjects = [
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
      { kind: 'ServiceAccount', name: 'web', namespace: 'shop' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' },
      { kind: 'ServiceAccount', name: 'ci', namespace: 'build' },
    ];
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' };
    const crb: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'viewers' },
      roleRef,
      subjects,
    };
    expect(extractReferences(rs, crb)).toEqual([
      { referent: 'ClusterRole.rbac.authorization.k8s.io//view', fieldPath: 'roleRef.name' },
      { referent: 'ServiceAccount/shop/web', fieldPath: 'subjects[1].name' },
      { referent: 'ServiceAccount/build/ci', fieldPath: 'subjects[3].name' },
    ]);
    const rb: KubeObject = { ...crb, kind: 'RoleBinding', metadata: { name: 'viewers', namespace: 'shop' } };
    expect(extractReferences(rs, rb).map((r) => r.referent)).toEqual([
      'ClusterRole.rbac.authorization.k8s.io//view',
      'ServiceAccount/shop/web',
      'ServiceAccount/build/ci',
    ]);
  });
});

describe('core pack: webhooks, APIServices and CRD conversion', () => {
  const webhooks: KubeObject = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'policy' },
    webhooks: [
      {
        name: 'pods.policy.example.com',
        clientConfig: { service: { namespace: 'policy', name: 'policy-webhook', path: '/validate' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
      {
        name: 'deploy.policy.example.com',
        failurePolicy: 'Ignore',
        namespaceSelector: { matchLabels: { team: 'shop' } },
        clientConfig: { service: { namespace: 'policy', name: 'policy-webhook' } },
        rules: [
          { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] },
        ],
      },
      { name: 'url.example.com', clientConfig: { url: 'https://example.com/hook' } },
    ],
  };

  it('each webhook’s clientConfig.service is a Service in its own namespace; a URL is not a reference', () => {
    expect(extractReferences(rs, webhooks)).toEqual([
      {
        referent: 'Service/policy/policy-webhook',
        fieldPath: 'webhooks[0].clientConfig.service.name',
        readyEndpoints: true,
      },
      {
        referent: 'Service/policy/policy-webhook',
        fieldPath: 'webhooks[1].clientConfig.service.name',
        readyEndpoints: true,
      },
    ]);
    const mutating = { ...webhooks, kind: 'MutatingWebhookConfiguration' };
    expect(extractReferences(rs, mutating)).toHaveLength(2);
  });

  it('the explanation names the blast radius from rules, failurePolicy and namespaceSelector', () => {
    expect(referenceNote(rs, webhooks, 'webhooks[0].clientConfig.service.name', 'NotFound')).toEqual({
      impact: 'failurePolicy Fail: every CREATE of pods in all namespaces fails while this Service is missing',
    });
    expect(referenceNote(rs, webhooks, 'webhooks[1].clientConfig.service.name', 'NotReady')).toEqual({
      impact:
        'failurePolicy Ignore: CREATE and UPDATE of deployments.apps in namespaces matching team=shop goes through unchecked while this Service is not available',
    });
  });

  it('wildcards and object selectors read as words', () => {
    expect(
      webhookBlastRadius({
        rules: [{ operations: ['*'], apiGroups: ['*'], resources: ['*'] }],
        objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
      }),
    ).toBe(
      'failurePolicy Fail: every every operation of every resource in all namespaces for objects matching skip DoesNotExist fails while this Service is missing',
    );
  });

  it('an APIService and a CRD conversion webhook refer to their Service, with what breaks', () => {
    const api: KubeObject = {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io' },
      spec: {
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        service: { namespace: 'kube-system', name: 'metrics-server' },
      },
    };
    expect(extractReferences(rs, api)).toEqual([
      { referent: 'Service/kube-system/metrics-server', fieldPath: 'spec.service.name', readyEndpoints: true },
    ]);
    expect(referenceNote(rs, api, 'spec.service.name', 'NotFound')?.impact).toBe(
      'every request to metrics.k8s.io/v1beta1 fails with 503 and discovery of it is incomplete while this Service is missing',
    );
    const local = { ...api, spec: { group: 'x.example.com', version: 'v1' } };
    expect(extractReferences(rs, local)).toEqual([]);

    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', kind: 'Widget' },
        scope: 'Namespaced',
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { service: { namespace: 'widgets', name: 'converter' } },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    };
    expect(extractReferences(rs, crd)).toEqual([
      {
        referent: 'Service/widgets/converter',
        fieldPath: 'spec.conversion.webhook.clientConfig.service.name',
        readyEndpoints: true,
      },
    ]);
    expect(referenceNote(rs, crd, 'spec.conversion.webhook.clientConfig.service.name', 'NotFound')?.impact).toContain(
      'widgets.example.com',
    );
  });
});

describe('core pack: PersistentVolume', () => {
  const pv: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-0042' },
    spec: {
      storageClassName: 'fast-ssd',
      capacity: { storage: '10Gi' },
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'web-data', uid: 'u' },
    },
    status: { phase: 'Bound' },
  };

  it('refers to its StorageClass and, as a back-pointer that never blocks, to its claim in the claim’s namespace', () => {
    expect(extractReferences(rs, pv)).toEqual([
      { referent: 'StorageClass.storage.k8s.io//fast-ssd', fieldPath: 'spec.storageClassName' },
      { referent: 'PersistentVolumeClaim/shop/web-data', fieldPath: 'spec.claimRef.name', severity: 'warn' },
    ]);
    expect(referenceNote(rs, pv, 'spec.claimRef.name', 'NotFound')).toEqual({ blocking: false });
  });

  it('the crossplane convention does not read claimRef a second time', () => {
    const all = builtinRuleSet();
    expect(extractReferences(all, pv).filter((r) => r.fieldPath === 'spec.claimRef.name')).toHaveLength(1);
  });
});
