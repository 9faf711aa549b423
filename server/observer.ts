import {
  builtinRuleSet,
  loadRuleSet,
  observeRuleSet,
  PACK_NAMES,
  referrerKinds,
  type PackName,
  type RulesDocument,
  type RulesObserver,
} from '../lib/rules';
import { loadRulesFile } from '../lib/rules/load';
import type { GroupKind } from '../lib/model';
import type { RuleSet } from '../lib/rules/rule-set';
import type { Config } from './config';

/** Observer is the runtime's rules observer (lib/rules RulesObserver). */
export type Observer = RulesObserver;

export async function observeWithRules(config: Pick<Config, 'rulePacks' | 'rulesFiles'>): Promise<Observer> {
  return observeRuleSet(await loadRuleSet(config.rulePacks as PackName[], config.rulesFiles));
}

/** AutoObserver is the observer under `--packs auto`: every pack's rules, and the kinds attached whatever the packs. */
export interface AutoObserver {
  observer: Observer;
  /** Referrer kinds of the always-on packs and the rules files. */
  alwaysOn: GroupKind[];
  /** The packs a PackSwitch turns on and off. */
  switched: Exclude<PackName, 'core'>[];
}

export async function observeAuto(config: Pick<Config, 'rulePacks' | 'rulesFiles'>): Promise<AutoObserver> {
  const files: RulesDocument[] = [];
  for (const file of config.rulesFiles) {
    const r = await loadRulesFile(file);
    if (!r.ok) throw r.error;
    files.push(r.value);
  }
  const always = config.rulePacks as PackName[];
  return {
    observer: observeRuleSet(builtinRuleSet(PACK_NAMES, files)),
    alwaysOn: referrerKinds(builtinRuleSet(always, files)),
    switched: PACK_NAMES.filter((p): p is Exclude<PackName, 'core'> => p !== 'core' && !always.includes(p)),
  };
}

/** ClusterRulesBase is what ReferenceRules objects join: the observer's packs and rules files, compiled before them. */
export interface ClusterRulesBase {
  compile: (objects: readonly RulesDocument[]) => RuleSet;
  /** The referrer kinds the packs and files name: startup and the pack switch attach them, never ReferenceRules. */
  managed: GroupKind[];
}

export async function clusterRulesBase(
  config: Pick<Config, 'rulePacks' | 'rulesFiles' | 'packsAuto'>,
): Promise<ClusterRulesBase> {
  const files: RulesDocument[] = [];
  for (const file of config.rulesFiles) {
    const r = await loadRulesFile(file);
    if (!r.ok) throw r.error;
    files.push(r.value);
  }
  // Under auto the observer holds every pack's rules and a PackSwitch attaches them; otherwise the listed packs.
  const packs = config.packsAuto ? PACK_NAMES : (config.rulePacks as PackName[]);
  return {
    compile: (objects) => builtinRuleSet(packs, [...files, ...objects]),
    managed: referrerKinds(builtinRuleSet(packs, files)),
  };
}
