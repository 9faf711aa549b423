import type { InformerEvent, ObjectStore } from '../engine/informer-source';
import type { CachedObject, ObjectKey } from '../model';

/** A change the Store applied, as subscribers see it. */
export type StoreEvent = Extract<InformerEvent, { type: 'added' | 'updated' | 'deleted' }>;

/**
 * Store is the cache of one watch: object key → latest object, frozen by the
 * reflector before it enters (see deepFreeze) and handed out as is. It is
 * UID-aware: an object deleted and created again under the same name is a
 * different object, so replacing it yields `deleted` then `added`, never an
 * `updated` that would hide the recreation.
 */
export class Store implements ObjectStore {
  private readonly items = new Map<ObjectKey, CachedObject>();
  #keysVersion = 0;

  get keysVersion(): number {
    return this.#keysVersion;
  }

  get(key: ObjectKey): CachedObject | undefined {
    return this.items.get(key);
  }
  keys(): IterableIterator<ObjectKey> {
    return this.items.keys();
  }
  values(): IterableIterator<CachedObject> {
    return this.items.values();
  }
  entries(): IterableIterator<[ObjectKey, CachedObject]> {
    return this.items.entries();
  }
  get size(): number {
    return this.items.size;
  }

  /**
   * upsert applies an ADDED or MODIFIED watch event. An object whose
   * resourceVersion the store already holds yields no event, so a watch that
   * restarts and replays what the store has does not repeat itself. A caller
   * that has just read the object held under key passes it as `old`, which
   * saves looking it up again.
   */
  upsert(key: ObjectKey, obj: CachedObject, old: CachedObject | undefined = this.items.get(key)): StoreEvent[] {
    this.items.set(key, obj);
    if (!old) this.#keysVersion++;
    return change(key, old, obj);
  }

  /** remove applies a DELETED watch event; the event carries the object's final state. */
  remove(key: ObjectKey, obj: CachedObject): StoreEvent[] {
    const old = this.items.get(key);
    if (!old) return [];
    this.items.delete(key);
    this.#keysVersion++;
    return [{ type: 'deleted', key, object: sameUid(old, obj) ? obj : old, old: undefined }];
  }

  /**
   * replace swaps in a full snapshot (a list, or the initial events of a
   * WatchList) and returns what changed: objects gone since the last snapshot
   * as `deleted`, then additions and updates in snapshot order.
   */
  replace(next: Map<ObjectKey, CachedObject>): StoreEvent[] {
    const events = diffSnapshots(this.items, next);
    this.items.clear();
    for (const [k, v] of next) this.items.set(k, v);
    this.#keysVersion++;
    return events;
  }
}

function sameUid(a: CachedObject, b: CachedObject): boolean {
  const ua = a.metadata.uid;
  const ub = b.metadata.uid;
  return ua === undefined || ub === undefined || ua === ub;
}

/** change is the event that moving key from old to next means, if any. */
function change(key: ObjectKey, old: CachedObject | undefined, next: CachedObject): StoreEvent[] {
  if (!old) return [{ type: 'added', key, object: next, old: undefined }];
  if (!sameUid(old, next)) {
    return [
      { type: 'deleted', key, object: old, old: undefined },
      { type: 'added', key, object: next, old: undefined },
    ];
  }
  const rv = next.metadata.resourceVersion;
  if (rv !== undefined && rv === old.metadata.resourceVersion) return [];
  return [{ type: 'updated', key, object: next, old }];
}

/** diffSnapshots lists the events that turn snapshot prev into snapshot next. */
export function diffSnapshots(
  prev: ReadonlyMap<ObjectKey, CachedObject>,
  next: ReadonlyMap<ObjectKey, CachedObject>,
): StoreEvent[] {
  const events: StoreEvent[] = [];
  for (const [k, old] of prev) if (!next.has(k)) events.push({ type: 'deleted', key: k, object: old, old: undefined });
  for (const [k, obj] of next) {
    for (const e of change(k, prev.get(k), obj)) events.push(e);
  }
  return events;
}
