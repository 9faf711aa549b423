import { RefwatchError } from '../model';
import type { ReferrerEntity, StuckEntry } from '../changelog';
import type { DiagnosisSource } from './explain';
import { ReferenceDiagnosis, type ReferenceExplanation } from './reference-diagnosis';

export interface StuckOptions {
  /** A referrer is stuck once it has been unresolved at least this long (ms). */
  olderThan: number;
  /** The instant to judge ages against (epoch ms); defaults to now. */
  now?: number;
  /** Judge only these referrers (a scoped view's), instead of every referrer in the change log. */
  referrers?: Iterable<ReferrerEntity>;
}

/**
 * stuck lists the referrers unresolved for at least olderThan, oldest first,
 * each with the reason, message and fix of the reference that blocks it:
 * the first NotFound one, else the first that is not Ready, the same choice
 * the engine makes. Costs O(referrers) plus one pass over the cache of each
 * kind with a missing referent; per referrer, O(its references).
 */
export function stuck(manager: DiagnosisSource, opts: StuckOptions): StuckEntry[] {
  if (typeof opts.olderThan !== 'number' || !Number.isFinite(opts.olderThan) || opts.olderThan < 0) {
    throw new RefwatchError('InvalidDuration', `olderThan must be a number of milliseconds from 0 up, got ${String(opts.olderThan)}`, { field: 'olderThan', example: '30000' });
  }
  const now = opts.now ?? Date.now();
  const unresolved = [...(opts.referrers ?? manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer)]
    .filter((r) => r.state !== 'Resolved' && now - r.since >= opts.olderThan)
    .sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const diagnosis = new ReferenceDiagnosis(manager.referenceControllers, now);
  return unresolved.map((r) => entry(r, blockingReference(manager, diagnosis, r), now));
}

function blockingReference(manager: DiagnosisSource, diagnosis: ReferenceDiagnosis, r: ReferrerEntity): ReferenceExplanation | undefined {
  let firstNotReady: ReferenceExplanation | undefined;
  for (const ref of manager.registry.referencesOf(r.controller, r.key)) {
    const e = diagnosis.explain(ref, manager.controller(r.controller)?.namespaceFieldOf(ref.fieldPath));
    if (e.state === 'NotFound') return e;
    if (e.state !== 'Ready') firstNotReady ??= e;
  }
  return firstNotReady;
}

function entry(r: ReferrerEntity, blocking: ReferenceExplanation | undefined, now: number): StuckEntry {
  const base = { id: r.id, key: r.key, controller: r.controller, state: r.state, since: r.since, ageMs: Math.max(0, now - r.since) };
  if (blocking) return { ...base, reason: blocking.state, message: blocking.message, fix: blocking.fix, referent: blocking.referent };
  if (r.state === 'Error') {
    return {
      ...base,
      reason: 'ReconcileError',
      message: r.message ?? `the reconcile of ${r.key} failed`,
      fix: `fix what the ${r.controller} reconciler reports; it retries the referrer with backoff`,
    };
  }
  // Every reference is Ready now: a referent event has queued the referrer, or its controller is behind.
  return {
    ...base,
    reason: 'Requeued',
    message: `every reference of ${r.key} is ready; it waits for controller ${r.controller} to reconcile it again`,
    fix: `if it stays here, check the ${r.controller} controller's queue depth and workers`,
  };
}
