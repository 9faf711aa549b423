import type { RootCause } from '../changelog';
import type { ObjectKey } from '../model';
import type { DiagnosisSource } from './source';
import type { ReferenceDiagnosis, ReferenceExplanation } from './reference-diagnosis';
import { noteOf, withNote } from './reference-note';

/** How many references a root-cause walk follows at most before it reports the chain as truncated. */
export const MAX_CHAIN_DEPTH = 8;

/** Blocker is what holds up one unresolved referrer: the controller that reconciles it and its blocking reference. */
export interface Blocker {
  controller: string;
  via: ReferenceExplanation;
}

/**
 * BlockerSource answers, for an object, whether it is an unresolved referrer
 * and which reference blocks it. Given a controller, only that controller's
 * view counts; without, the first controller that has the object unresolved.
 * Undefined: no referrer, resolved, or nothing blocks it.
 */
export interface BlockerSource {
  blockerOf(key: ObjectKey, controller?: string): Blocker | undefined;
}

/**
 * rootCause follows a referrer's blocking reference while its referent is
 * itself a blocked referrer, and returns where the chain ends. It is
 * undefined when the referrer is not blocked, and when its blocking
 * referent is not blocked by anything (the direct reference is the cause).
 * A referent already on the path ends the walk as a cycle; `maxDepth`
 * references end it as truncated.
 */
export function rootCause(
  src: BlockerSource,
  referrer: ObjectKey,
  controller?: string,
  maxDepth = MAX_CHAIN_DEPTH,
): RootCause | undefined {
  return rootCauseFrom(src, referrer, src.blockerOf(referrer, controller), maxDepth);
}

/** rootCauseFrom is rootCause from the referrer's blocker, which the caller has already looked up. */
export function rootCauseFrom(
  src: BlockerSource,
  referrer: ObjectKey,
  first: Blocker | undefined,
  maxDepth = MAX_CHAIN_DEPTH,
): RootCause | undefined {
  if (!first) return undefined;
  const path: ObjectKey[] = [referrer];
  const onPath = new Set<ObjectKey>(path);
  let last = first.via;
  for (;;) {
    const next = last.referent;
    path.push(next);
    if (onPath.has(next)) return chain(path, last, { cycle: true });
    onPath.add(next);
    const blocker = src.blockerOf(next);
    if (!blocker) break;
    if (path.length > maxDepth) return chain(path, last, { truncated: true });
    last = blocker.via;
  }
  return path.length > 2 ? chain(path, last, {}) : undefined;
}

function chain(path: ObjectKey[], cause: ReferenceExplanation, end: { cycle?: true; truncated?: true }): RootCause {
  const rc: RootCause = {
    path,
    referent: cause.referent,
    state: cause.state,
    reason: cause.reason,
    message: cause.message,
    fix: cause.fix,
  };
  if (end.cycle) rc.cycle = true;
  if (end.truncated) rc.truncated = true;
  return rc;
}

/** chainText renders a root cause on one line: "App/shop/a → Database/shop/b → Secret/shop/c: Secret/shop/c not found". */
export function chainText(rc: RootCause): string {
  const arrows = rc.path.join(' → ');
  if (rc.cycle) return `${arrows} (a cycle: each waits on the next)`;
  if (rc.truncated) return `${arrows} → … (longer than ${rc.path.length - 1} references; explain ${rc.referent})`;
  return `${arrows}: ${rc.message}`;
}

/**
 * blockingReference is the reference that holds a referrer up: its first
 * NotFound one, else its first that is not Ready, the same choice the
 * engine makes, after its controller's note (a reference that never blocks is skipped). Undefined when every reference is Ready.
 */
export function blockingReference(
  manager: DiagnosisSource,
  diagnosis: ReferenceDiagnosis,
  controller: string,
  key: ObjectKey,
): ReferenceExplanation | undefined {
  let firstNotReady: ReferenceExplanation | undefined;
  for (const ref of manager.registry.referencesOf(controller, key)) {
    const plain = diagnosis.explain(ref, manager.controller(controller)?.namespaceFieldOf(ref.fieldPath));
    const e = withNote(plain, noteOf(manager, controller, key, plain));
    if (e.blocking === false) continue;
    if (e.state === 'NotFound') return e;
    if (e.state !== 'Ready') firstNotReady ??= e;
  }
  return firstNotReady;
}

/**
 * registryBlockers answers BlockerSource from the registry, the change log's
 * referrer states and the reference controllers' caches, with no request to
 * the cluster. One instance serves one diagnosis. The answers for objects met
 * on a chain (asked with no controller) are memoized, so walking many chains
 * through the same referrers costs each referrer once; an answer for a given
 * controller is worked out each time asked: a stuck list asks it once for
 * each of up to a hundred thousand referrers, and a memo of them all lived
 * for the whole list.
 */
export function registryBlockers(manager: DiagnosisSource, diagnosis: ReferenceDiagnosis): BlockerSource {
  const memo = new Map<string, Blocker | null>();
  const work = (controller: string, key: ObjectKey, id: string): Blocker | null => {
    if (manager.changelog.get('referrer', id)?.state === 'Resolved') return null;
    const via = blockingReference(manager, diagnosis, controller, key);
    return via ? { controller, via } : null;
  };
  const one = (controller: string, key: ObjectKey): Blocker | null => {
    const id = `${controller}|${key}`;
    let b = memo.get(id);
    if (b === undefined) memo.set(id, (b = work(controller, key, id)));
    return b;
  };
  return {
    blockerOf(key, controller) {
      if (controller !== undefined) return work(controller, key, `${controller}|${key}`) ?? undefined;
      for (const name of manager.controllerNames()) {
        if (manager.registry.referencesOf(name, key).length === 0) continue;
        const b = one(name, key);
        if (b) return b;
      }
      return undefined;
    },
  };
}
