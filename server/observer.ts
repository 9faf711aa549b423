import { conditionReadiness, defaultReadiness, existsReadiness, type Manager, type ReadinessPredicate } from '../lib/engine';
import { kindKey, parseKindKey } from '../lib/model';
import { builtinRuleSet, evaluate, extractReferences, loadRulesFile, predicateFor, referrerKinds, type PackName, type RuleSet, type RulesDocument } from '../lib/rules';
import type { Config } from './config';

/**
 * Observer watches the referrer kinds that reference rules name and feeds the
 * references it finds into the same registry, reference controllers and change
 * log as controllers written with lib/engine: one engine controller per
 * referrer kind, named `rules/<Kind.group>`.
 */
export interface Observer {
  ruleSet: RuleSet;
  /** Readiness of a referent kind: the rules' predicate, or the demo's Ready condition. */
  readiness(kind: string): ReadinessPredicate | undefined;
  attach(manager: Manager): void;
  controllers(): string[];
}

const readyCondition = conditionReadiness('Ready');

export async function observeWithRules(config: Pick<Config, 'rulePacks' | 'rulesFiles'>): Promise<Observer> {
  const docs: RulesDocument[] = [];
  for (const file of config.rulesFiles) {
    const r = await loadRulesFile(file);
    if (!r.ok) throw r.error;
    docs.push(r.value);
  }
  const ruleSet = builtinRuleSet(config.rulePacks as PackName[], docs);
  const names: string[] = [];
  const cache = new Map<string, ReadinessPredicate>();
  return {
    ruleSet,
    readiness(kind) {
      let p = cache.get(kind);
      if (p) return p;
      const gk = parseKindKey(kind);
      if (!gk.ok) return undefined;
      // The demo's kinds are judged by their Ready condition.
      if (gk.value.group === 'demo.refwatch.dev') p = readyCondition;
      else {
        const predicate = predicateFor(ruleSet, gk.value);
        // 'exists' is existsReadiness itself, so the kind is cached as metadata only.
        p = predicate.kind === 'default' ? defaultReadiness : predicate.kind === 'exists' ? existsReadiness : (obj) => evaluate(predicate, obj);
      }
      cache.set(kind, p);
      return p;
    },
    attach(manager) {
      for (const gk of referrerKinds(ruleSet)) {
        const name = `rules/${kindKey(gk)}`;
        names.push(name);
        manager.addController({
          name,
          for: gk,
          workers: 1,
          reconcile: (ctx) => {
            if (!ctx.object) return;
            for (const ref of extractReferences(ruleSet, ctx.object)) ctx.resolve({ referent: ref.referent, fieldPath: ref.fieldPath });
          },
        });
      }
    },
    controllers: () => names.slice(),
  };
}
