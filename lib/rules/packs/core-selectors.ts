import type { RulesDocumentInput } from '../schema';

type RuleInput = NonNullable<RulesDocumentInput['rules']>[number];

/**
 * The core pack's selector references: kinds that pick Pods by their labels.
 * A Service without a selector is no reference (its endpoints are managed by
 * hand); an empty PDB selector or NetworkPolicy podSelector selects every Pod
 * of the namespace, as the API says.
 */
export const coreSelectorRules: RuleInput[] = [
  {
    referrer: { kind: 'Service' },
    references: [
      {
        selector: 'spec.selector',
        form: 'map',
        referent: { kind: 'Pod' },
        empty: 'none',
        minReady: 1,
        unreadyMeans: 'the Service has no ready endpoints',
      },
    ],
  },
  {
    referrer: { group: 'policy', kind: 'PodDisruptionBudget' },
    references: [
      { selector: 'spec.selector', referent: { kind: 'Pod' }, empty: 'all', minMatchesField: 'spec.minAvailable' },
    ],
  },
  {
    // A policy that selects no Pod isolates nothing: worth a look, but nothing waits on it.
    referrer: { group: 'networking.k8s.io', kind: 'NetworkPolicy' },
    references: [{ selector: 'spec.podSelector', referent: { kind: 'Pod' }, empty: 'all', onNoMatch: 'warn' }],
  },
];
