import { definePack } from '../rule-set';

const APIEXTENSIONS = 'apiextensions.crossplane.io';

/**
 * crossplane: the `*Ref` / `*Refs` naming convention. Crossplane refs carry a
 * name but rarely a kind, so only well-known field names resolve; any other
 * `*Ref` is reported unresolved (see docs/rules.md, Limits).
 */
export const crossplanePack = definePack('crossplane', {
  conventions: [
    {
      // Crossplane v2 namespaced managed resources: ec2.aws.m.upbound.io → ProviderConfig in aws.m.upbound.io.
      name: 'crossplane-namespaced',
      referrers: { groupSuffixes: ['m.upbound.io', 'm.crossplane.io'] },
      under: ['spec', 'spec.forProvider', 'spec.initProvider'],
      fields: [
        {
          field: 'providerConfigRef',
          referent: { group: { fromReferrer: true, lastLabels: 4 }, kind: 'ProviderConfig' },
          kindField: 'kind',
        },
        { field: 'writeConnectionSecretToRef', referent: { kind: 'Secret' } },
      ],
    },
    {
      // Crossplane v1 managed resources (ec2.aws.upbound.io → ProviderConfig in aws.upbound.io), composites and claims.
      name: 'crossplane',
      referrers: { categories: ['managed', 'composite', 'claim'] },
      under: ['spec', 'spec.crossplane', 'spec.forProvider', 'spec.initProvider'],
      fields: [
        {
          field: 'providerConfigRef',
          referent: { group: { fromReferrer: true, lastLabels: 3 }, kind: 'ProviderConfig' },
          scope: 'Cluster',
        },
        { field: 'writeConnectionSecretToRef', referent: { kind: 'Secret' }, namespaceField: 'namespace' },
        { field: 'compositionRef', referent: { group: APIEXTENSIONS, kind: 'Composition' } },
        { field: 'compositionRevisionRef', referent: { group: APIEXTENSIONS, kind: 'CompositionRevision' } },
        // A claim's composite, and a composite's composed resources: kind and apiVersion are on the ref.
        { field: 'resourceRef', kindField: 'kind', apiVersionField: 'apiVersion' },
        { field: 'resourceRefs', kindField: 'kind', apiVersionField: 'apiVersion' },
      ],
      // A composite's claimRef points back at its claim, which depends on it, not the other way round.
      ignore: ['claimRef'],
    },
  ],
  kinds: [
    { group: '*', kind: 'ProviderConfig', ready: 'exists' },
    { group: '*', kind: 'ClusterProviderConfig', scope: 'Cluster', ready: 'exists' },
    { group: APIEXTENSIONS, kind: 'Composition', scope: 'Cluster', ready: 'exists' },
    { group: APIEXTENSIONS, kind: 'CompositionRevision', scope: 'Cluster', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
  ],
});
