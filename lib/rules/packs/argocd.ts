import { definePack } from '../rule-set';

export const ARGOCD_GROUP = 'argoproj.io';

/** The label that makes a Secret an Argo CD cluster (declarative setup). */
export const ARGOCD_CLUSTER_LABEL = 'argocd.argoproj.io/secret-type=cluster';

/**
 * The destination Argo CD knows built in, with no Secret: no reference. A
 * cluster Secret may still override it; refwatch then does not follow it.
 */
const IN_CLUSTER = { server: 'https://kubernetes.default.svc', name: 'in-cluster' };

/** An Application's destination cluster: the cluster Secret whose decoded data.<field> equals the value. */
function destination(path: string, field: 'name' | 'server', by: string) {
  return {
    path,
    lookup: {
      referent: { group: '', kind: 'Secret' },
      labelSelector: ARGOCD_CLUSTER_LABEL,
      field: `data.${field}`,
      decode: 'base64' as const,
      noun: 'Argo CD cluster',
      by,
    },
    skip: [IN_CLUSTER[field]],
  };
}

/**
 * argocd: Applications to their AppProject, to the ApplicationSet that
 * generated them (its ownerReference) and to their destination cluster's
 * Secret (by spec.destination.name or .server, among the Secrets labelled
 * argocd.argoproj.io/secret-type=cluster in the Application's namespace,
 * which is Argo CD's own in the default setup); ApplicationSets to the
 * project of the Applications they generate. An Application is ready when
 * Argo CD reports it Healthy and Synced; it has no Ready condition.
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
        destination('spec.destination.name', 'name', 'named'),
        destination('spec.destination.server', 'server', 'with server'),
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
