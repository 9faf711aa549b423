import type { InformerSource, InformerSubscription, Manager, WatchError } from '../engine';
import { kindKey, keyOf, type CachedObject, type GroupKind } from '../model';
import { isRecord } from './field-path';
import type { RulesObserver } from './observer';
import { validateRules } from './parse';
import type { RuleSet } from './rule-set';
import type { RulesDocument } from './schema';

/** The kind of the custom resource that holds a rules document in its spec (deploy/kubernetes/base/referencerules-crd.yaml). */
export const REFERENCE_RULES: GroupKind = { group: 'refwatch.dev', kind: 'ReferenceRules' };

const CRD: GroupKind = { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' };
const CRD_KEY = 'CustomResourceDefinition.apiextensions.k8s.io//referencerules.refwatch.dev';

/** ReferenceRulesState says what became of one ReferenceRules object, for the Cluster panel and /readyz. */
export interface ReferenceRulesState {
  /** `namespace/name`. */
  object: string;
  /** Some version of it is in force: this one, or its last good one while this one is bad. */
  applied: boolean;
  /** One line: "ReferenceRules platform/acme: applied (generation 2): 1 rule". */
  message: string;
  /** What is wrong with it, each naming the field: "ReferenceRules platform/acme spec.rules[2].path: ...". */
  problems: string[];
}

export interface ClusterRulesOptions {
  manager: Manager;
  /** The source that watches ReferenceRules objects: the Manager's own, so the watch is shared and shown. */
  source: InformerSource;
  /** The observer whose rule set the objects' rules join. */
  observer: RulesObserver;
  /** Compiles the rule set in force from the objects' documents: packs and rules files first, these after them. */
  compile: (objects: readonly RulesDocument[]) => RuleSet;
  /** Referrer kinds that startup or a PackSwitch attach and remove: a ReferenceRules never attaches or removes them. */
  managed: readonly GroupKind[];
  /** Told whenever an object's state changes or the watch fails or recovers. */
  onChange?: (states: ReferenceRulesState[]) => void;
  /** Told when adding or removing a referrer kind's controller fails. */
  onError?: (what: string, error: unknown) => void;
}

interface Entry {
  /** The version in force, if any was ever valid. */
  good?: { doc: RulesDocument; generation: number | undefined; spec: string };
  /** Problems of the current version; empty when it is the good one. */
  problems: string[];
  generation: number | undefined;
}

/**
 * ClusterRules applies ReferenceRules objects live. It watches them through
 * the shared informer source (a watch, not a poll), validates each object's
 * spec as a rules file, and puts packs + files + objects in force on the
 * observer, in namespace/name order. A referrer kind an object names starts
 * being watched when the object appears and stops when no object names it.
 *
 * A bad version of an object never drops other rules: the object's last good
 * version stays in force (a typo in an edit keeps yesterday's rules working),
 * and an object that was never valid adds nothing. Either way its problems
 * name the field. Nothing is applied before the watch holds its initial list.
 */
export class ClusterRules {
  private started = false;
  /** The CustomResourceDefinition watch (shared with --packs auto's) that says whether ReferenceRules are served. */
  private crdSub: InformerSubscription | undefined;
  /** CRDs cannot be listed (RBAC): ReferenceRules are watched whatever, and their watch says whether they exist. */
  private crdBlind = false;
  private sub: InformerSubscription | undefined;
  private readonly entries = new Map<string, Entry>();
  /** Referrer kinds (kind keys) this attached, with their kinds. */
  private readonly attached = new Map<string, GroupKind>();
  private readonly managed: Set<string>;
  private inForce = '';
  private failing: WatchError | undefined;
  private lastPublished = '';
  private readonly removals = new Set<Promise<void>>();

  constructor(private readonly opts: ClusterRulesOptions) {
    this.managed = new Set(opts.managed.map(kindKey));
  }

  /**
   * start watches CustomResourceDefinitions, and ReferenceRules while their CRD
   * is served: a cluster without it costs no failing watch. When CRDs may not
   * be listed, ReferenceRules are watched directly.
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.crdSub = this.opts.source.acquire(CRD, (event) => {
      if (event.type === 'error' && !this.crdSub?.isPrimed()) this.crdBlind = true;
      else if (event.type === 'recovered') this.crdBlind = false;
      this.follow();
    });
    this.follow();
  }

  /** follow starts or stops the ReferenceRules watch as their CRD comes and goes. */
  private follow(): void {
    const crd = this.crdSub;
    if (!crd) return;
    const served = this.crdBlind || (crd.isPrimed() && crdServed(crd.store.get(CRD_KEY)));
    if (served && !this.sub) this.watch();
    else if (!served && this.sub && crd.isPrimed()) {
      const sub = this.sub;
      this.sub = undefined;
      this.failing = undefined;
      void sub.release();
      // Deleting the CRD deletes every object: their rules go with it.
      this.entries.clear();
      this.apply();
      this.publish();
    } else if (!served) this.publish();
  }

  private watch(): void {
    this.sub = this.opts.source.acquire(REFERENCE_RULES, (event) => {
      switch (event.type) {
        case 'error':
          this.failing = event.error;
          break;
        case 'recovered':
          this.failing = undefined;
          break;
        default:
          if (!this.sub?.isPrimed()) return;
      }
      this.evaluate();
    });
    // A source that primes or fails during acquire told the handler before this.sub was set.
    this.evaluate();
  }

  /** stop releases the CRD and ReferenceRules watches and awaits controller removals in flight; rules in force stay. */
  async stop(): Promise<void> {
    const subs = [this.sub, this.crdSub];
    this.sub = this.crdSub = undefined;
    await Promise.all(subs.map((s) => s?.release()));
    await Promise.all([...this.removals]);
  }

  /** watchState is one line on the watch itself, when it cannot list: the CRD is missing, or RBAC forbids it. */
  watchState(): string | undefined {
    if (this.crdSub?.isPrimed() && !this.sub) return NOT_INSTALLED;
    const e = this.failing;
    if (!e || this.sub?.isPrimed()) return undefined;
    if (e.reason === 'KindUnknown') return NOT_INSTALLED;
    const rule = e.missingRule
      ? `; grant apiGroups: ["${e.missingRule.apiGroup}"], resources: ["${e.missingRule.resource}"], verbs: ${JSON.stringify(e.missingRule.verbs)}`
      : '';
    return `ReferenceRules: not watched (${e.reason}): ${e.message}${rule}; the rules files and packs stay in force`;
  }

  /** states lists every ReferenceRules object, by namespace/name, with the kinds the cluster does not serve as problems. */
  states(): ReferenceRulesState[] {
    const unknown = this.unknownKinds();
    return [...this.entries.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([object, e]) => {
        const problems = [...e.problems, ...(e.good ? kindProblems(object, e.good.doc, unknown) : [])];
        const applied = e.good !== undefined;
        const count = e.good ? describeDoc(e.good.doc) : '';
        const message =
          e.problems.length === 0
            ? `ReferenceRules ${object}: applied${gen(e.good?.generation)}: ${count}`
            : applied
              ? `ReferenceRules ${object}: generation ${e.generation ?? '?'} rejected; its last good version${gen(e.good?.generation)} stays in force: ${count}`
              : `ReferenceRules ${object}: rejected, nothing of it applies`;
        return { object, applied, message, problems };
      });
  }

  /** warnings is what /readyz adds: every problem of every object, each naming its field. */
  warnings(): string[] {
    return this.states().flatMap((s) => s.problems);
  }

  private evaluate(): void {
    const sub = this.sub;
    if (!sub) return;
    if (sub.isPrimed()) {
      const seen = new Set<string>();
      for (const obj of sub.store.values()) {
        const id = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
        seen.add(id);
        this.judge(id, obj);
      }
      for (const id of [...this.entries.keys()]) if (!seen.has(id)) this.entries.delete(id);
      this.apply();
    }
    this.publish();
  }

  private judge(id: string, obj: CachedObject): void {
    const generation = typeof obj.metadata.generation === 'number' ? obj.metadata.generation : undefined;
    const prev = this.entries.get(id);
    const entry: Entry = { good: prev?.good, problems: [], generation };
    this.entries.set(id, entry);
    const spec = JSON.stringify(obj.spec);
    if (isRecord(obj.spec) && prev?.good?.spec === spec && prev.problems.length === 0) return;
    const r = readReferenceRules(id, obj.spec);
    if (r.ok) entry.good = { doc: r.doc, generation, spec };
    else entry.problems = r.problems;
  }

  /** apply puts the good documents in force and attaches or removes the referrer kinds they add. */
  private apply(): void {
    const ids = [...this.entries.keys()].sort();
    const docs = ids.flatMap((id) => {
      const good = this.entries.get(id)?.good;
      return good ? [good.doc] : [];
    });
    const fingerprint = JSON.stringify(docs);
    if (fingerprint === this.inForce) return;
    const previous = this.opts.observer.ruleSet;
    const next = this.opts.compile(docs);
    this.inForce = fingerprint;
    this.opts.observer.update(next);
    const wanted = new Map<string, GroupKind>();
    for (const doc of docs)
      for (const rule of doc.rules) {
        const key = kindKey(rule.referrer);
        if (!this.managed.has(key)) wanted.set(key, { group: rule.referrer.group, kind: rule.referrer.kind });
      }
    const added = [...wanted.entries()].filter(([key]) => !this.attached.has(key));
    for (const [key, gk] of added) {
      try {
        this.opts.observer.attach(this.opts.manager, { kinds: [gk] });
        this.attached.set(key, gk);
      } catch (e) {
        this.opts.onError?.(`watching ${key} for ReferenceRules`, e);
      }
    }
    for (const key of [...this.attached.keys()]) {
      if (wanted.has(key)) continue;
      this.attached.delete(key);
      const name = `rules/${key}`;
      const removal = this.opts.manager
        .removeController(name)
        .catch((e: unknown) => this.opts.onError?.(`removing ${name}`, e))
        .finally(() => this.removals.delete(removal));
      this.removals.add(removal);
    }
    this.requeue(previous, next, new Set(added.map(([key]) => key)));
  }

  /**
   * requeue reconciles again every referrer whose rules may have changed, so
   * a new or edited path takes effect now and a removed one lets go of its
   * references. Kinds just attached reconcile everything on their own.
   */
  private requeue(previous: RuleSet, next: RuleSet, fresh: ReadonlySet<string>): void {
    for (const name of this.opts.manager.controllerNames()) {
      if (!name.startsWith('rules/')) continue;
      const key = name.slice('rules/'.length);
      if (fresh.has(key)) continue;
      const before = JSON.stringify(previous.rules.get(key) ?? []) + JSON.stringify(previous.selectors.get(key) ?? []);
      const after = JSON.stringify(next.rules.get(key) ?? []) + JSON.stringify(next.selectors.get(key) ?? []);
      // Conventions and kind facts may touch any kind; rules only their referrer kind.
      const touched =
        before !== after ||
        JSON.stringify(previous.conventions) !== JSON.stringify(next.conventions) ||
        JSON.stringify([...previous.kinds]) !== JSON.stringify([...next.kinds]);
      if (!touched) continue;
      const controller = this.opts.manager.controller(name);
      for (const obj of controller?.ownObjects() ?? []) controller?.enqueue(keyOf(obj));
    }
  }

  /** Kind keys whose watch says the cluster does not serve them. */
  private unknownKinds(): Set<string> {
    const out = new Set<string>();
    for (const w of this.opts.source.watches()) if (w.lastError?.reason === 'KindUnknown') out.add(kindKey(w.target));
    return out;
  }

  private publish(): void {
    const states = this.states();
    const text = JSON.stringify([this.watchState(), states]);
    if (text === this.lastPublished) return;
    this.lastPublished = text;
    this.opts.onChange?.(states);
  }
}

/**
 * readReferenceRules validates one ReferenceRules object's spec (`id` is its namespace/name) as a rules file:
 * the document, named after the object, or its problems, each naming the field.
 */
export function readReferenceRules(
  id: string,
  spec: unknown,
): { ok: true; doc: RulesDocument } | { ok: false; problems: string[] } {
  const label = `ReferenceRules ${id}`;
  if (!isRecord(spec))
    return {
      ok: false,
      problems: [`${label} spec: is required; give it rules:, conventions: or kinds: as in a rules file`],
    };
  const r = validateRules(spec, label);
  if (r.ok) return { ok: true, doc: { ...r.value, name: label } };
  return {
    ok: false,
    problems: r.error.issues.map((i) => `${label} ${i.path === '' ? 'spec' : `spec.${i.path}`}: ${i.reason}`),
  };
}

const NOT_INSTALLED =
  'ReferenceRules: not watched, the cluster does not serve refwatch.dev/v1alpha1 referencerules; install the CRD (deploy/kubernetes/base/referencerules-crd.yaml, or the Helm chart) to use rules as cluster objects';

/** crdServed: the ReferenceRules CRD exists, is not being deleted, is established (or says nothing), and serves v1alpha1. */
function crdServed(crd: CachedObject | undefined): boolean {
  if (!crd || crd.metadata.deletionTimestamp || !isRecord(crd.spec)) return false;
  const conditions = isRecord(crd.status) && Array.isArray(crd.status.conditions) ? crd.status.conditions : [];
  const established = conditions.find((c) => isRecord(c) && c.type === 'Established');
  if (isRecord(established) && established.status !== 'True') return false;
  const versions = Array.isArray(crd.spec.versions) ? crd.spec.versions : [];
  return versions.some((v) => isRecord(v) && v.name === 'v1alpha1' && v.served === true);
}

function gen(g: number | undefined): string {
  return g === undefined ? '' : ` (generation ${g})`;
}

function describeDoc(doc: RulesDocument): string {
  const parts = [
    plural(doc.rules.length, 'rule'),
    doc.conventions.length > 0 ? plural(doc.conventions.length, 'convention') : '',
    doc.kinds.length > 0 ? plural(doc.kinds.length, 'kind') : '',
  ].filter((p) => p !== '');
  const kinds = doc.rules.map((r) => kindKey(r.referrer));
  return `${parts.join(', ')}${kinds.length > 0 ? ` for ${[...new Set(kinds)].join(', ')}` : ''}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** kindProblems names each field of a document whose kind the cluster does not serve. */
function kindProblems(object: string, doc: RulesDocument, unknown: ReadonlySet<string>): string[] {
  if (unknown.size === 0) return [];
  const out: string[] = [];
  const say = (field: string, gk: GroupKind) =>
    out.push(
      `ReferenceRules ${object} ${field}: the cluster does not serve ${kindKey(gk)}; install its CustomResourceDefinition or fix the kind and group`,
    );
  doc.rules.forEach((rule, r) => {
    if (unknown.has(kindKey(rule.referrer))) say(`spec.rules[${r}].referrer`, rule.referrer);
    rule.references.forEach((ref, i) => {
      const referent = 'lookup' in ref ? ref.lookup.referent : ref.referent;
      if (referent && typeof referent.group === 'string') {
        const gk = { group: referent.group, kind: referent.kind };
        if (unknown.has(kindKey(gk))) say(`spec.rules[${r}].references[${i}].referent`, gk);
      }
    });
  });
  return out;
}
