import { RefwatchError } from '../model';
import type { ReferrerEntity, SelectionSummary, StuckEntry } from '../changelog';
import type { DiagnosisSource } from './explain';
import { markWorkloadsSteps } from './owners';
import { ReferenceDiagnosis, type ReferenceExplanation } from './reference-diagnosis';
import { registryBlockers, rootCauseFrom } from './root-cause';
import { plural } from './selector-hints';

export interface StuckOptions {
  /** A referrer is stuck once it has been unresolved at least this long (ms). */
  olderThan: number;
  /** The instant to judge ages against (epoch ms); defaults to now. */
  now?: number;
  /** Judge only these referrers (a scoped view's), instead of every referrer in the change log. */
  referrers?: Iterable<ReferrerEntity>;
}

/** The order stuck referrers are listed in: unresolved longest first, then by id. */
export const longerStuck = (a: ReferrerEntity, b: ReferrerEntity): number =>
  a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * stuck lists the referrers unresolved for at least olderThan, oldest first,
 * each with the reason, message and fix of the reference that blocks it:
 * the first NotFound one, else the first that is not Ready, the same choice
 * the engine makes; with the root cause where that referent is itself
 * blocked, and the stuck workload that owns the referrer where one shares
 * its cause. Costs O(referrers) plus one pass over the cache of each kind
 * with a missing referent; per referrer, O(its references), and O(each
 * referrer on its chain) once per pass.
 */
export function stuck(manager: DiagnosisSource, opts: StuckOptions): StuckEntry[] {
  const steps = stuckSteps(
    manager,
    opts.referrers ?? manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer,
    opts,
    Infinity,
  );
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * stuckSteps is stuck over the given referrers (a snapshot's, whole or
 * scoped; `opts.referrers` is not read), `step` referrers between steps, so a
 * caller can yield the event loop between them.
 */
export function* stuckSteps(
  manager: DiagnosisSource,
  referrers: Iterable<ReferrerEntity>,
  opts: Omit<StuckOptions, 'referrers'>,
  step = 10_000,
): Generator<void, StuckEntry[]> {
  if (typeof opts.olderThan !== 'number' || !Number.isFinite(opts.olderThan) || opts.olderThan < 0) {
    throw new RefwatchError(
      'InvalidDuration',
      `olderThan must be a number of milliseconds from 0 up, got ${String(opts.olderThan)}`,
      { field: 'olderThan', example: '30000' },
    );
  }
  const now = opts.now ?? Date.now();
  const unresolved: ReferrerEntity[] = [];
  let n = 0;
  for (const r of referrers) {
    if (n++ % step === step - 1) yield;
    if (r.state !== 'Resolved' && now - r.since >= opts.olderThan) unresolved.push(r);
  }
  const sorted = yield* sortSteps(unresolved, longerStuck, step);
  const diagnosis = new ReferenceDiagnosis(manager.referenceControllers, now);
  const blockers = registryBlockers(manager, diagnosis);
  const entries: StuckEntry[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (i % step === step - 1) yield;
    const r = sorted[i]!;
    // A missing referent's kind is indexed for "did you mean" once, in steps, before it is explained.
    if (step !== Infinity)
      for (const ref of manager.registry.referencesOf(r.controller, r.key)) yield* diagnosis.prepare(ref, step);
    const blocker = blockers.blockerOf(r.key, r.controller);
    const e = entry(r, blocker?.via, now);
    const rc = rootCauseFrom(blockers, r.key, blocker);
    if (rc) e.rootCause = rc;
    entries.push(e);
  }
  yield* markWorkloadsSteps(manager, entries, step);
  return entries;
}

/** A stable bottom-up merge sort, about `step` comparisons between steps. */
function* sortSteps<T>(items: T[], cmp: (a: T, b: T) => number, step: number): Generator<void, T[]> {
  const run = Math.min(Math.max(1, Math.floor(step / 16)), items.length || 1);
  let a = items.slice();
  for (let i = 0; i < a.length; i += run) {
    const sorted = a.slice(i, i + run).sort(cmp);
    for (let j = 0; j < sorted.length; j++) a[i + j] = sorted[j]!;
    if (i + run < a.length) yield;
  }
  let b = new Array<T>(a.length);
  let work = 0;
  for (let width = run; width < a.length; width *= 2) {
    for (let lo = 0; lo < a.length; lo += 2 * width) {
      const mid = Math.min(lo + width, a.length);
      const hi = Math.min(lo + 2 * width, a.length);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        b[k] = i < mid && (j >= hi || cmp(a[i]!, a[j]!) <= 0) ? a[i++]! : a[j++]!;
        if (++work % step === 0) yield;
      }
    }
    [a, b] = [b, a];
  }
  return a;
}

function entry(r: ReferrerEntity, blocking: ReferenceExplanation | undefined, now: number): StuckEntry {
  if (blocking) return stuckEntry(r, now, blocking.state, blocking.message, blocking.fix, blocking.referent);
  if (r.state === 'Error') {
    return stuckEntry(
      r,
      now,
      'ReconcileError',
      r.message ?? `the reconcile of ${r.key} failed`,
      `fix what the ${r.controller} reconciler reports; it retries the referrer with backoff`,
    );
  }
  // A selector that matches nothing, or too few, holds it up with no referent to blame: the selection says why.
  const selection =
    r.state === 'Resolved' ? undefined : r.selections?.find((x) => x.state === 'NoMatch' || x.state === 'NotReady');
  if (selection) {
    const message = r.message ?? `0 ${selection.kind} in ${selection.where} match ${selection.selector}`;
    return stuckEntry(r, now, selection.state, message, selectionFix(selection, message));
  }
  // Every reference is Ready now: a referent event has queued the referrer, or its controller is behind.
  return stuckEntry(
    r,
    now,
    'Requeued',
    `every reference of ${r.key} is ready; it waits for controller ${r.controller} to reconcile it again`,
    `if it stays here, check the ${r.controller} controller's queue depth and workers`,
  );
}

/**
 * selectionFix: for a selector matching nothing, point it at what the
 * diagnosis says it likely meant ("did you mean app=web?"), or label an
 * object so that it matches; for one matching too few Ready, wait for them.
 */
function selectionFix(s: SelectionSummary, message: string): string {
  if (s.fix !== undefined) return s.fix;
  const kind = s.kind.split('.')[0]!;
  const where = s.where === 'the cluster' ? '' : ` in ${s.where}`;
  if (s.state !== 'NoMatch') return `wait for the selected ${plural(kind)} to become Ready, or change ${s.fieldPath}`;
  const meant = /did you mean (.+)\?$/.exec(message)?.[1];
  const label = `label a ${kind}${where} with ${s.selector}`;
  return meant ? `set ${s.fieldPath} to ${meant}, or ${label}` : `${label}, or change ${s.fieldPath}`;
}

/** One shape for every entry (no spread of a base object): a snapshot lists thousands. */
function stuckEntry(
  r: ReferrerEntity,
  now: number,
  reason: string,
  message: string,
  fix: string,
  referent?: string,
): StuckEntry {
  const e: StuckEntry = {
    id: r.id,
    key: r.key,
    controller: r.controller,
    state: r.state,
    since: r.since,
    ageMs: Math.max(0, now - r.since),
    reason,
    message,
    fix,
  };
  if (referent !== undefined) e.referent = referent;
  return e;
}
