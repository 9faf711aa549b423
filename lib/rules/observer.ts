import {
  conditionReadiness,
  defaultReadiness,
  existsReadiness,
  type Controller,
  type Manager,
  type ReadinessPredicate,
  type ReferenceNote,
} from '../engine';
import {
  formatKey,
  groupOfApiVersion,
  kindKey,
  kindOfKey,
  namespaceOfKey,
  parseKindKey,
  type CachedObject,
  type GroupKind,
  type ObjectKey,
  type Reference,
} from '../model';
import { ProducerIndex, registerProducers } from '../diagnose/producers';
import { isRecord } from './field-path';
import { GATEWAY_GROUP } from './packs/gateway';
import { grantAllows, grantRequest, notPermitted, REFERENCE_GRANT, type GrantRequest } from './reference-grant';
import { evaluate, predicateFor } from './readiness';
import { namespaceFieldOf, referrerKinds, scanReferences } from './extract';
import { referenceNote } from './impact';
import { extractSelectors } from './selectors';
import { extractLookups } from './lookups';
import { noReadyEndpoints, wakeOnEndpoints } from './service-endpoints';
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
  /** The rule set in force: reconciles, explanations and readiness read it afresh each time. */
  readonly ruleSet: RuleSet;
  /**
   * update puts another rule set in force (ReferenceRules objects changed). Each
   * referrer is judged by it from its next reconcile; referent readiness from the
   * next event. Controllers are not added or removed here: see attach.
   */
  update(next: RuleSet): void;
  /** Readiness of a referent kind: the rules' predicate, or the demo's Ready condition. */
  readiness(kind: string): ReadinessPredicate | undefined;
  /** attach adds one controller per referrer kind the rules name (or per kind of `kinds`, narrowed to `namespace`). */
  attach(manager: Manager, scope?: ObserveScope): void;
  controllers(): string[];
  /** Who produces which referent, as the rules' `produces` references say; diagnosis over the Manager reads it. */
  producers: ProducerIndex;
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

/**
 * loadRuleSet compiles the built-in packs, the rules files and then `extra` (the cluster's ReferenceRules) into
 * one rule set; a bad file rejects with its RulesError.
 */
export async function loadRuleSet(
  packs: readonly PackName[],
  files: readonly string[],
  extra: readonly RulesDocument[] = [],
): Promise<RuleSet> {
  const docs: RulesDocument[] = [];
  for (const file of files) {
    const r = await loadRulesFile(file);
    if (!r.ok) throw r.error;
    docs.push(r.value);
  }
  return builtinRuleSet(packs, [...docs, ...extra]);
}

export function observeRuleSet(initial: RuleSet): RulesObserver {
  let ruleSet = initial;
  const names: string[] = [];
  const cache = new Map<string, ReadinessPredicate>();
  const producers = new ProducerIndex();
  const registered = new WeakSet<Manager>();
  // Controllers whose references wait on a Service's endpoints, and the managers that wake them.
  const endpointWaiters = new Set<string>();
  const wakingEndpoints = new WeakSet<Manager>();
  return {
    get ruleSet() {
      return ruleSet;
    },
    update(next) {
      ruleSet = next;
      cache.clear();
    },
    producers,
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
      // One producer source per Manager, however many times kinds are attached to it.
      if (!registered.has(manager)) {
        registered.add(manager);
        registerProducers(manager.referenceControllers, {
          // A deleted referrer is dropped by the engine without a reconcile: its production ends with it.
          producersOf: (referent) =>
            producers.producersOf(referent).filter((p) => {
              if (manager.changelog.get('referrer', `${p.controller}|${p.producer}`)) return true;
              producers.set(p.controller, p.producer, []);
              return false;
            }),
          referencesOf: (controller, referrer) => manager.registry.referencesOf(controller, referrer),
          namespaceFieldOf: (controller, fieldPath) => manager.controller(controller)?.namespaceFieldOf(fieldPath),
        });
      }
      const kinds = scope.kinds ?? referrerKinds(ruleSet);
      const grants = kinds.some((gk) => needsGrants(ruleSet, gk))
        ? attachGrants(manager, `rules/${REFERENCE_GRANT}${scope.nameSuffix ?? ''}`, names)
        : undefined;
      const services = `rules/${kindKey({ group: '', kind: 'Service' })}${scope.nameSuffix ?? ''}`;
      for (const gk of kinds) {
        const name = `rules/${kindKey(gk)}${scope.nameSuffix ?? ''}`;
        names.push(name);
        if (needsEndpoints(ruleSet, gk)) {
          endpointWaiters.add(name);
          if (!wakingEndpoints.has(manager)) {
            wakingEndpoints.add(manager);
            wakeOnEndpoints(manager, endpointWaiters);
          }
        }
        const endpoints = (ref: Reference) => {
          const object = manager.referenceControllers.cached(ref.referent);
          return object ? noReadyEndpoints(manager.changelog, services, ref.referent) : undefined;
        };
        manager.addController({
          name,
          for: scope.namespace ? { ...gk, namespace: scope.namespace } : gk,
          workers: 1,
          namespaceFieldOf: (fieldPath) => namespaceFieldOf(ruleSet, gk, fieldPath),
          describeReference: (referrer, ref, state) =>
            grantOverride(grants, referrer, ref) ??
            endpointsOverride(ruleSet, referrer, ref, state, endpoints) ??
            referenceNote(ruleSet, referrer, ref.fieldPath, state),
          reconcile: (ctx) => {
            if (!ctx.object || (only && !only(ctx.key))) {
              producers.set(name, ctx.key, []);
              return;
            }
            let waitForGrants = false;
            const scan = scanReferences(ruleSet, ctx.object);
            producers.set(name, ctx.key, scan.produced ?? []);
            for (const ref of scan.references) {
              const reference = { referent: ref.referent, fieldPath: ref.fieldPath };
              const req = ref.needsGrant ? grantRequest(ctx.object, ref.referent) : undefined;
              if (!req) {
                // A Service that exists but has no Ready Pod behind its selector answers no call.
                const deny = ref.readyEndpoints ? endpoints(reference) : undefined;
                ctx.resolve(
                  reference,
                  ref.severity === 'warn'
                    ? { blocking: false }
                    : deny
                      ? { deny: { reason: deny.reason, message: deny.message } }
                      : undefined,
                );
                continue;
              }
              const found = grantFor(grants, req);
              if (found.grant) {
                // Watched, so that deleting the grant wakes the referrer; the backend is what it waits on.
                ctx.resolve(keyOf(found.grant), ref.fieldPath, { blocking: false });
                ctx.resolve(reference);
              } else if (found.primed) {
                ctx.resolve(reference, {
                  deny: { reason: 'RefNotPermitted', message: notPermitted(req, ctx.object.metadata.name).message },
                });
              } else {
                waitForGrants = true;
                ctx.resolve(reference, {
                  deny: {
                    reason: 'NotPrimed',
                    message: 'the ReferenceGrant cache is still loading its initial snapshot',
                  },
                });
              }
            }
            for (const found of extractSelectors(ruleSet, ctx.object))
              ctx.select({
                kind: found.kind,
                selector: found.selector,
                form: found.form,
                empty: found.empty,
                namespaceSelector: found.namespaceSelector,
                namespaceSelectorForm: found.namespaceSelectorForm,
                namespaceSelectorPath: found.namespaceSelectorPath,
                fieldPath: found.fieldPath,
                minReady: found.minReady,
                minMatches: found.minMatches,
                onNoMatch: found.onNoMatch,
                unreadyMeans: found.unreadyMeans,
              });
            for (const found of extractLookups(ruleSet, ctx.object))
              ctx.lookup({
                kind: found.kind,
                namespace: found.namespace,
                labelSelector: found.labelSelector,
                field: found.field,
                decode: found.decode,
                equals: found.value,
                fieldPath: found.fieldPath,
                noun: found.noun,
                by: found.by,
              });
            // A grant cache that primes with no grant wakes nobody: look again shortly.
            return waitForGrants ? { requeueAfter: GRANT_PRIMING_RETRY_MS } : undefined;
          },
        });
      }
    },
    controllers: () => names.slice(),
  };
}

/** How often a referrer whose references need a grant looks again while the ReferenceGrant cache primes. */
const GRANT_PRIMING_RETRY_MS = 1000;

function needsEndpoints(rs: RuleSet, gk: GroupKind): boolean {
  return (rs.rules.get(kindKey(gk)) ?? []).some((r) => r.readyEndpoints);
}

/**
 * endpointsOverride: a Service that exists, named by a reference that needs
 * its endpoints, explains as NotReady while it has no Ready Pod, with what
 * the referrer breaks meanwhile (a webhook's blast radius).
 */
function endpointsOverride(
  rs: RuleSet,
  referrer: CachedObject,
  ref: Reference,
  state: string,
  endpoints: (ref: Reference) => ReturnType<typeof noReadyEndpoints>,
): ReferenceNote | undefined {
  if (state !== 'Ready' || kindOfKey(ref.referent) !== 'Service') return undefined;
  const rule = (
    rs.rules.get(kindKey({ group: groupOfApiVersion(referrer.apiVersion), kind: referrer.kind })) ?? []
  ).find((r) => r.readyEndpoints && r.path.source.replace(/^\./, '') === ref.fieldPath.replace(/\[\d+\]/g, '[*]'));
  const why = rule ? endpoints(ref) : undefined;
  if (!why) return undefined;
  const impact = referenceNote(rs, referrer, ref.fieldPath, 'NotReady')?.impact;
  const message = impact ? `${why.message}; ${impact}` : why.message;
  return { override: { state: 'NotReady', reason: why.reason, message, fix: why.fix } };
}

function needsGrants(rs: RuleSet, gk: GroupKind): boolean {
  return (rs.rules.get(kindKey(gk)) ?? []).some((r) => r.needsGrant);
}

/**
 * attachGrants watches ReferenceGrants, like any referent kind, through a
 * controller of their own: each grant that appears or changes queues the
 * referrers whose references go into its namespace, so a reference it allows
 * resolves at once. A grant that goes wakes the referrers that resolved it.
 */
function attachGrants(manager: Manager, name: string, names: string[]): Controller {
  names.push(name);
  return manager.addController({
    name,
    for: { group: GATEWAY_GROUP, kind: 'ReferenceGrant' },
    workers: 1,
    reconcile: (ctx) => {
      const grant = ctx.object;
      const namespace = grant?.metadata.namespace;
      if (!grant || !namespace || !isRecord(grant.spec) || !Array.isArray(grant.spec.to)) return { forget: true };
      const queued = new Set<string>();
      for (const to of grant.spec.to) {
        if (!isRecord(to) || typeof to.kind !== 'string') continue;
        const kind = kindKey({ group: typeof to.group === 'string' ? to.group : '', kind: to.kind });
        for (const referent of manager.registry.referentsOfKind(kind)) {
          if (namespaceOfKey(referent) !== namespace) continue;
          for (const r of manager.registry.referrersOf(referent)) {
            const id = `${r.controller}|${r.key}`;
            if (queued.has(id) || namespaceOfKey(r.key) === namespace) continue;
            queued.add(id);
            manager.controller(r.controller)?.enqueue(r.key);
          }
        }
      }
      // A grant is a referent, not a referrer: it keeps no entry of its own.
      return { forget: true };
    },
  });
}

function grantFor(grants: Controller | undefined, req: GrantRequest): { primed: boolean; grant?: CachedObject } {
  const inNamespace = grants?.ownObjects(req.to.namespace);
  if (inNamespace === undefined) return { primed: false };
  return { primed: true, grant: inNamespace.find((g) => grantAllows(g, req)) };
}

/** grantOverride: a reference into another namespace that no grant allows explains as RefNotPermitted. */
function grantOverride(
  grants: Controller | undefined,
  referrer: CachedObject,
  ref: Reference,
): ReferenceNote | undefined {
  if (!grants) return undefined;
  const req = grantRequest(referrer, ref.referent);
  if (!req || kindOfKey(ref.referent) === REFERENCE_GRANT) return undefined;
  const found = grantFor(grants, req);
  if (!found.primed || found.grant) return undefined;
  const { message, fix } = notPermitted(req, referrer.metadata.name);
  return { override: { state: 'RefNotPermitted', reason: 'RefNotPermitted', message, fix } };
}

function keyOf(obj: CachedObject): string {
  return formatKey({
    group: groupOfApiVersion(obj.apiVersion),
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
  });
}
