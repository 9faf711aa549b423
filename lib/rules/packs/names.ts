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
