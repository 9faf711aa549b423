import { definePack } from '../rule-set';

export const ARGOCD_GROUP = 'argoproj.io';

/**
 * argocd: Applications to their AppProject and to the ApplicationSet that
 * generated them (its ownerReference), ApplicationSets to the project of the
 * Applications they generate. An Application is ready when Argo CD reports
 * it Healthy and Synced; it has no Ready condition.
 */
export const argocdPack = definePack('argocd', {
  rules: [
    {
      referrer: { group: ARGOCD_GROUP, kind: 'Application' },
      references: [
        { path: 'spec.project', referent: { group: ARGOCD_GROUP, kind: 'AppProject' } },
        {
          path: 'metadata.ownerReferences[*].name',
          referent: { group: ARGOCD_GROUP, kind: 'ApplicationSet' },
          kindField: 'kind',
          apiVersionField: 'apiVersion',
        },
      ],
    },
    {
      referrer: { group: ARGOCD_GROUP, kind: 'ApplicationSet' },
      references: [{ path: 'spec.template.spec.project', referent: { group: ARGOCD_GROUP, kind: 'AppProject' } }],
    },
  ],
  kinds: [
    { group: ARGOCD_GROUP, kind: 'AppProject', ready: 'exists' },
    { group: ARGOCD_GROUP, kind: 'ApplicationSet', ready: 'default' },
    {
      group: ARGOCD_GROUP,
      kind: 'Application',
      ready: {
        all: [
          { field: 'status.health.status', equals: 'Healthy' },
          { field: 'status.sync.status', equals: 'Synced' },
        ],
      },
    },
  ],
});
