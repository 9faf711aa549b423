import { compileRuleSet, type RuleSet } from '../rule-set';
import type { RulesDocument } from '../schema';
import { corePack } from './core';
import { crossplanePack } from './crossplane';
import { gatewayPack } from './gateway';

export { corePack, gatewayPack, crossplanePack };

export type PackName = 'core' | 'gateway' | 'crossplane';

/** The built-in packs by name, validated at load. */
export const builtinPacks: Readonly<Record<PackName, RulesDocument>> = {
  core: corePack,
  gateway: gatewayPack,
  crossplane: crossplanePack,
};

export const PACK_NAMES: readonly PackName[] = ['core', 'gateway', 'crossplane'];

/** builtinRuleSet compiles the named packs (all by default), then any extra documents, which may override kinds. */
export function builtinRuleSet(packs: readonly PackName[] = PACK_NAMES, extra: readonly RulesDocument[] = []): RuleSet {
  return compileRuleSet([...packs.map((p) => builtinPacks[p]), ...extra]);
}
