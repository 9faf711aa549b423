import { loadRuleSet, observeRuleSet, type PackName, type RulesObserver } from '../lib/rules';
import type { Config } from './config';

/** Observer is the runtime's rules observer (lib/rules RulesObserver). */
export type Observer = RulesObserver;

export async function observeWithRules(config: Pick<Config, 'rulePacks' | 'rulesFiles'>): Promise<Observer> {
  return observeRuleSet(await loadRuleSet(config.rulePacks as PackName[], config.rulesFiles));
}
