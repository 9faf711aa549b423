import { compileRuleSet, type RuleSet } from '../rule-set';
import type { RulesDocument } from '../schema';
import { argocdPack } from './argocd';
import { certManagerPack } from './cert-manager';
import { corePack } from './core';
import { crossplanePack } from './crossplane';
import { externalSecretsPack } from './external-secrets';
import { fluxPack } from './flux';
import { gatewayPack } from './gateway';
import { kedaPack } from './keda';
import { prometheusPack } from './prometheus';
import { PACK_NAMES, type PackName } from './names';

export { PACK_GROUPS, PACK_NAMES, type PackName } from './names';

export { corePack, gatewayPack, crossplanePack };
export { certManagerPack, externalSecretsPack, fluxPack, argocdPack, kedaPack, prometheusPack };

/** The built-in packs by name, validated at load. */
export const builtinPacks: Readonly<Record<PackName, RulesDocument>> = {
  core: corePack,
  gateway: gatewayPack,
  crossplane: crossplanePack,
  'cert-manager': certManagerPack,
  'external-secrets': externalSecretsPack,
  flux: fluxPack,
  argocd: argocdPack,
  keda: kedaPack,
  prometheus: prometheusPack,
};

/** builtinRuleSet compiles the named packs (all by default), then any extra documents, which may override kinds. */
export function builtinRuleSet(packs: readonly PackName[] = PACK_NAMES, extra: readonly RulesDocument[] = []): RuleSet {
  return compileRuleSet([...packs.map((p) => builtinPacks[p]), ...extra]);
}
