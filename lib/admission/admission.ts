import type { InformerSource, ReadinessPredicate } from '../engine';
import { keyOfChecked, parseKindKey, type ObjectKey } from '../model';
import type { RuleSet } from '../rules/rule-set';
import { GraceTracker } from './grace';
import { ReferentCaches } from './referent-caches';
import { admit, reviewAdmission, type AdmissionDeps, type AdmissionReviewOut, type AdmissionVerdict } from './review';

export interface AdmissionOptions {
  source: InformerSource;
  /** The rules, or a function reading the rules in force (a server's, which ReferenceRules objects change live). */
  ruleSet: RuleSet | (() => RuleSet);
  readiness?: (kind: string) => ReadinessPredicate | undefined;
  /** How long a warned, missing referent may take to appear and count as resolved (default 30 s; 0: not tracked). */
  graceMs?: number;
  /** Told when a warning resolved itself within the grace (the server records a dashboard event). */
  onResolved?: (event: { referent: ObjectKey; referrer: string; message: string }) => void;
  onError?: (error: unknown) => void;
}

/**
 * Admission answers "does what this object names exist, and is it ready?"
 * for objects being created or updated: the rule set's references checked
 * against the shared caches, in the webhook's AdmissionReview form or as
 * the warnings of one object (the embedded API server). stop releases its
 * caches and grace timer.
 */
export class Admission {
  readonly caches: ReferentCaches;
  private readonly grace: GraceTracker;
  /** What every review reads; built again only when the rules in force change, since a review is on the webhook's hot path. */
  private deps: AdmissionDeps;
  /** The rule set prime last saw: a new one primes the referent kinds it adds. */
  private primedFor: RuleSet | undefined;

  constructor(private readonly opts: AdmissionOptions) {
    this.grace = new GraceTracker({
      graceMs: opts.graceMs ?? 30_000,
      onResolved: (e) => opts.onResolved?.(e),
    });
    this.caches = new ReferentCaches({
      source: opts.source,
      readiness: opts.readiness,
      onAdded: (key) => this.grace.appeared(key),
    });
    this.deps = {
      ruleSet: this.ruleSet(),
      lookup: this.caches,
      namespaceLabels: (ns) => this.caches.namespaceLabels(ns),
      onError: opts.onError,
      onFindings: (object, findings) => {
        const key = keyOfChecked(object);
        this.grace.warned(key.ok ? key.value : `${object.kind} ${object.metadata.name}`, findings);
      },
    };
  }

  /**
   * prime starts the Namespace cache and the caches of the referent kinds the
   * rules name, before the first review; kinds the cluster does not serve
   * are left to their first lookup, so a missing CRD costs no failing watch.
   */
  async prime(): Promise<void> {
    const ruleSet = this.ruleSet();
    this.primedFor = ruleSet;
    const kinds = new Set<string>(['Namespace']);
    for (const [, rules] of ruleSet.rules)
      for (const r of rules) {
        if (r.kind === undefined || typeof r.group !== 'string') continue;
        kinds.add(r.group === '' ? r.kind : `${r.kind}.${r.group}`);
      }
    const served = await Promise.all(
      [...kinds].map(async (kind) => {
        const gk = parseKindKey(kind);
        if (!gk.ok) return undefined;
        const namespaced = this.opts.source.namespaced ? await this.opts.source.namespaced(gk.value) : true;
        return namespaced === undefined ? undefined : kind;
      }),
    );
    this.caches.prime(served.filter((k) => k !== undefined));
  }

  /** review answers an AdmissionReview v1 body; never throws. */
  review(body: unknown): AdmissionReviewOut {
    return reviewAdmission(this.current(), body);
  }

  /** check judges one object of a create or update, as the webhook would; never throws. */
  check(operation: 'CREATE' | 'UPDATE', object: unknown, opts: { dryRun?: boolean } = {}): AdmissionVerdict {
    return admit(this.current(), { operation, object, dryRun: opts.dryRun === true });
  }

  async stop(): Promise<void> {
    this.grace.stop();
    await this.caches.stop();
  }

  private ruleSet(): RuleSet {
    const rs = this.opts.ruleSet;
    return typeof rs === 'function' ? rs() : rs;
  }

  /** current is what a review reads: the rules in force, with the referent kinds a new rule set adds primed. */
  private current(): AdmissionDeps {
    const ruleSet = this.ruleSet();
    if (ruleSet === this.deps.ruleSet) return this.deps;
    this.deps = { ...this.deps, ruleSet };
    if (this.primedFor !== undefined && ruleSet !== this.primedFor)
      this.prime().catch((e: unknown) => this.opts.onError?.(e));
    return this.deps;
  }
}
