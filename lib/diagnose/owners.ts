import type { StuckEntry } from '../changelog';
import { formatKey, groupOfApiVersion, namespaceOfKey, type CachedObject, type ObjectKey } from '../model';
import type { DiagnosisSource } from './source';

/** How many controller owners an owner walk climbs at most (Pod → ReplicaSet → Deployment needs two). */
const MAX_OWNER_DEPTH = 4;

/**
 * controllerOwnerOf is the key of the object's controller owner (its
 * ownerReference with `controller: true`), read from whichever cache refwatch
 * holds the object in: a controller's own, or a referent kind's. Undefined
 * when no cache holds the object or it has no controller owner.
 */
export function controllerOwnerOf(manager: DiagnosisSource, key: ObjectKey): ObjectKey | undefined {
  const object = cachedObject(manager, key);
  const owners = (object?.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  if (!Array.isArray(owners)) return undefined;
  for (const o of owners as { apiVersion?: unknown; kind?: unknown; name?: unknown; controller?: unknown }[]) {
    if (o?.controller !== true || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') continue;
    if (typeof o.name !== 'string') continue;
    // Owners are in their dependent's namespace, or cluster-scoped; a namespaced dependent's key names its own.
    return formatKey({
      group: groupOfApiVersion(o.apiVersion),
      kind: o.kind,
      namespace: namespaceOfKey(key),
      name: o.name,
    });
  }
  return undefined;
}

function cachedObject(manager: DiagnosisSource, key: ObjectKey): CachedObject | undefined {
  for (const name of manager.controllerNames()) {
    const o = manager.controller(name)?.cached(key);
    if (o) return o;
  }
  return manager.referenceControllers.inspectFor(key)?.subscription?.store.get(key);
}

/** causeOf is what blocks a stuck entry in the end: its root cause's referent, else its blocking referent. */
export function causeOf(e: StuckEntry): ObjectKey | undefined {
  return e.rootCause?.referent ?? e.referent;
}

/**
 * markWorkloads sets each entry's `workload`: the highest controller owner
 * (Pod → ReplicaSet → Deployment) that is itself in the list and blocked by
 * the same cause. Owners missing from every cache end the climb.
 */
export function markWorkloads(manager: DiagnosisSource, entries: StuckEntry[]): void {
  const steps = markWorkloadsSteps(manager, entries, Infinity);
  while (!steps.next().done);
}

/** markWorkloadsSteps is markWorkloads, `step` entries between steps, so a caller can yield the event loop. */
export function* markWorkloadsSteps(manager: DiagnosisSource, entries: StuckEntry[], step: number): Generator<void> {
  // Made when an owner is first found: a list of referrers no controller owns (Apps, most custom resources) needs none.
  let byKey: Map<ObjectKey, StuckEntry> | undefined;
  let n = 0;
  for (const e of entries) {
    if (n++ % step === step - 1) yield;
    const cause = causeOf(e);
    if (cause === undefined) continue;
    let workload: ObjectKey | undefined;
    let key = e.key;
    for (let depth = 0; depth < MAX_OWNER_DEPTH; depth++) {
      const owner = controllerOwnerOf(manager, key);
      if (owner === undefined || owner === e.key) break;
      byKey ??= yield* byKeySteps(entries, step);
      const w = byKey.get(owner);
      if (w && causeOf(w) === cause) workload = owner;
      key = owner;
    }
    if (workload !== undefined) e.workload = workload;
  }
}

/** The entries by key, the first of each key; indexing a hundred thousand at once held the event loop some 30 ms. */
function* byKeySteps(entries: StuckEntry[], step: number): Generator<void, Map<ObjectKey, StuckEntry>> {
  const byKey = new Map<ObjectKey, StuckEntry>();
  let n = 0;
  for (const e of entries) {
    if (n++ % step === step - 1) yield;
    if (!byKey.has(e.key)) byKey.set(e.key, e);
  }
  return byKey;
}
