import {
  conditionReadiness,
  defaultReadiness,
  existsReadiness,
  type Manager,
  type ReadinessPredicate,
} from '../engine';
import { kindKey, parseKindKey, type GroupKind, type ObjectKey } from '../model';
import { evaluate, predicateFor } from './readiness';
import { extractReferences, namespaceFieldOf, referrerKinds } from './extract';
import { extractSelectors } from './selectors';
import { loadRulesFile } from './load';
import { builtinRuleSet, type PackName } from './packs';
import type { RuleSet } from './rule-set';
import type { RulesDocument } from './schema';

/**
 * RulesObserver watches the referrer kinds that reference rules name and feeds
 * the references it finds into the same registry, reference controllers and
 * change log as controllers written with lib/engine: one engine controller per
 * referrer kind, named `rules/<Kind.group>`.
 */
export interface RulesObserver {
  ruleSet: RuleSet;
  /** Readiness of a referent kind: the rules' predicate, or the demo's Ready condition. */
  readiness(kind: string): ReadinessPredicate | undefined;
  /** attach adds one controller per referrer kind the rules name (or per kind of `kinds`, narrowed to `namespace`). */
  attach(manager: Manager, scope?: ObserveScope): void;
  controllers(): string[];
}

/** ObserveScope narrows what an observer watches: a headless command watches only what its question needs. */
export interface ObserveScope {
  kinds?: readonly GroupKind[];
  /** Watch the referrers of this namespace only. */
  namespace?: string;
  /** Reconcile only these referrers (the others stay in the cache, unread). */
  only?: (key: ObjectKey) => boolean;
  /** Controller names get this suffix, so that scopes of one kind can sit side by side. */
  nameSuffix?: string;
}

const readyCondition = conditionReadiness('Ready');

/** loadRuleSet compiles the built-in packs and rules files into one rule set; a bad file rejects with its RulesError. */
export async function loadRuleSet(packs: readonly PackName[], files: readonly string[]): Promise<RuleSet> {
  const docs: RulesDocument[] = [];
  for (const file of files) {
    const r = await loadRulesFile(file);
    if (!r.ok) throw r.error;
    docs.push(r.value);
  }
  return builtinRuleSet(packs, docs);
}

export function observeRuleSet(ruleSet: RuleSet): RulesObserver {
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
        p =
          predicate.kind === 'default'
            ? defaultReadiness
            : predicate.kind === 'exists'
              ? existsReadiness
              : (obj) => evaluate(predicate, obj);
      }
      cache.set(kind, p);
      return p;
    },
    attach(manager, scope = {}) {
      const only = scope.only;
      for (const gk of scope.kinds ?? referrerKinds(ruleSet)) {
        const name = `rules/${kindKey(gk)}${scope.nameSuffix ?? ''}`;
        names.push(name);
        manager.addController({
          name,
          for: scope.namespace ? { ...gk, namespace: scope.namespace } : gk,
          workers: 1,
          namespaceFieldOf: (fieldPath) => namespaceFieldOf(ruleSet, gk, fieldPath),
          reconcile: (ctx) => {
            if (!ctx.object || (only && !only(ctx.key))) return;
            for (const ref of extractReferences(ruleSet, ctx.object))
              ctx.resolve({ referent: ref.referent, fieldPath: ref.fieldPath });
            for (const found of extractSelectors(ruleSet, ctx.object))
              ctx.select({
                kind: found.kind,
                selector: found.selector,
                form: found.form,
                empty: found.empty,
                namespaceSelector: found.namespaceSelector,
                fieldPath: found.fieldPath,
                minReady: found.minReady,
                minMatches: found.minMatches,
                onNoMatch: found.onNoMatch,
                unreadyMeans: found.unreadyMeans,
              });
          },
        });
      }
    },
    controllers: () => names.slice(),
  };
}
