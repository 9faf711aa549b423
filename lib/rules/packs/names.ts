/** The built-in packs' names, apart from the packs themselves so that config parsing loads no rules. */
export const PACK_NAMES = [
  'core',
  'gateway',
  'crossplane',
  'cert-manager',
  'external-secrets',
  'flux',
  'argocd',
  'keda',
  'prometheus',
] as const;

export type PackName = (typeof PACK_NAMES)[number];

/**
 * The API groups whose being served turns a pack on under `--packs auto`:
 * any one of them served is enough. core has none: it is always on.
 */
export const PACK_GROUPS: Readonly<Record<Exclude<PackName, 'core'>, readonly string[]>> = {
  gateway: ['gateway.networking.k8s.io'],
  crossplane: ['apiextensions.crossplane.io'],
  'cert-manager': ['cert-manager.io'],
  'external-secrets': ['external-secrets.io'],
  flux: [
    'source.toolkit.fluxcd.io',
    'kustomize.toolkit.fluxcd.io',
    'helm.toolkit.fluxcd.io',
    'notification.toolkit.fluxcd.io',
  ],
  argocd: ['argoproj.io'],
  keda: ['keda.sh'],
  prometheus: ['monitoring.coreos.com'],
};
