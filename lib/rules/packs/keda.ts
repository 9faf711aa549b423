import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const KEDA_GROUP = 'keda.sh';

/** Where KEDA reads a ClusterTriggerAuthentication's Secrets: its operator's namespace, `keda` by default. */
const KEDA_NAMESPACE = 'keda';

/** A trigger's authenticationRef names a TriggerAuthentication unless its kind says ClusterTriggerAuthentication. */
const authenticationRef: ReferenceInput = {
  path: 'spec.triggers[*].authenticationRef.name',
  referent: { group: KEDA_GROUP, kind: 'TriggerAuthentication' },
  kindField: 'kind',
};

function authenticationSecrets(namespace?: string): ReferenceInput[] {
  const ns = namespace ? { namespace } : {};
  return [
    { path: 'spec.secretTargetRef[*].name', referent: { kind: 'Secret' }, ...ns },
    { path: 'spec.configMapTargetRef[*].name', referent: { kind: 'ConfigMap' }, ...ns },
    { path: 'spec.hashiCorpVault.credential.serviceAccountName', referent: { kind: 'ServiceAccount' }, ...ns },
  ];
}

/**
 * keda: ScaledObjects to their scale target (any scalable kind, by
 * apiVersion and kind) and their triggers' authentication, ScaledJobs to
 * theirs, and TriggerAuthentications to the Secrets they read.
 */
export const kedaPack = definePack('keda', {
  rules: [
    {
      referrer: { group: KEDA_GROUP, kind: 'ScaledObject' },
      references: [
        {
          path: 'spec.scaleTargetRef.name',
          referent: { group: 'apps', kind: 'Deployment' },
          kindField: 'kind',
          apiVersionField: 'apiVersion',
        },
        authenticationRef,
      ],
    },
    {
      referrer: { group: KEDA_GROUP, kind: 'ScaledJob' },
      references: [
        authenticationRef,
        { path: 'spec.jobTargetRef.template.spec.serviceAccountName', referent: { kind: 'ServiceAccount' } },
      ],
    },
    { referrer: { group: KEDA_GROUP, kind: 'TriggerAuthentication' }, references: authenticationSecrets() },
    {
      referrer: { group: KEDA_GROUP, kind: 'ClusterTriggerAuthentication' },
      references: authenticationSecrets(KEDA_NAMESPACE),
    },
  ],
  kinds: [
    { group: KEDA_GROUP, kind: 'TriggerAuthentication', ready: 'exists' },
    { group: KEDA_GROUP, kind: 'ClusterTriggerAuthentication', scope: 'Cluster', ready: 'exists' },
    { group: KEDA_GROUP, kind: 'ScaledObject', ready: { condition: 'Ready' } },
    { group: 'apps', kind: 'Deployment', ready: { condition: 'Available' } },
    { group: 'apps', kind: 'StatefulSet', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
    { kind: 'ConfigMap', ready: 'exists' },
    { kind: 'ServiceAccount', ready: 'exists' },
  ],
});
