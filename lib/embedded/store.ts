/** A stored object: raw JSON with metadata. Stored objects are never mutated; writers store new ones. */
export type StoredObject = Record<string, unknown> & { metadata: Record<string, unknown> };

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** StoreEvent is one change, numbered by the global resourceVersion it produced. */
export interface StoreEvent {
  rv: number;
  type: StoreEventType;
  /** The resource's key (`configmaps`, `databases.demo.refwatch.dev`). */
  resource: string;
  /** `namespace/name`, or `name` for cluster-scoped objects. */
  key: string;
  /** The object after the change; for DELETED, its last state stamped with the deletion's resourceVersion. */
  object: StoredObject;
  /** The object before the change (MODIFIED, DELETED). */
  prev?: StoredObject;
}

export type StoreListener = (event: StoreEvent) => void;

/**
 * ObjectStore keeps every object, one resourceVersion counter shared by all
 * resources (as etcd's revision is), and a window of recent events. A read
 * "at" an older resourceVersion is answered by rolling the window back; once
 * an event has left the window, reads and watches from before it are expired.
 */
export class ObjectStore {
  private rv = 1;
  private readonly data = new Map<string, Map<string, StoredObject>>();
  private history: StoreEvent[] = [];
  /** Watches and reads from resourceVersions below this have lost events: 410. */
  private compacted = 1;
  private readonly listeners = new Set<StoreListener>();

  constructor(private readonly retainedEvents: number) {}

  currentRv(): number {
    return this.rv;
  }

  /** oldestRv is the oldest resourceVersion a watch or continued list can start from. */
  oldestRv(): number {
    return this.compacted;
  }

  get(resource: string, key: string): StoredObject | undefined {
    return this.data.get(resource)?.get(key);
  }

  /** entries lists a resource's objects in key order, as etcd ranges them. */
  entries(resource: string): [string, StoredObject][] {
    return sortedEntries(this.data.get(resource) ?? new Map());
  }

  count(resource: string): number {
    return this.data.get(resource)?.size ?? 0;
  }

  /** put stores obj (ADDED when new, MODIFIED otherwise) and stamps the next resourceVersion on it. */
  put(resource: string, key: string, obj: StoredObject): StoredObject {
    const objects = this.data.get(resource) ?? new Map<string, StoredObject>();
    this.data.set(resource, objects);
    const prev = objects.get(key);
    const rv = ++this.rv;
    const stored = withResourceVersion(obj, rv);
    objects.set(key, stored);
    this.record({ rv, type: prev ? 'MODIFIED' : 'ADDED', resource, key, object: stored, prev });
    return stored;
  }

  /** remove deletes the object and returns its last state stamped with the deletion's resourceVersion. */
  remove(resource: string, key: string): StoredObject | undefined {
    const objects = this.data.get(resource);
    const prev = objects?.get(key);
    if (!objects || !prev) return undefined;
    objects.delete(key);
    const rv = ++this.rv;
    const gone = withResourceVersion(prev, rv);
    this.record({ rv, type: 'DELETED', resource, key, object: gone, prev });
    return gone;
  }

  /** stateAt answers a resource's objects as they were at rv; undefined when rv is older than the window. */
  stateAt(resource: string, rv: number): Map<string, StoredObject> | undefined {
    if (rv < this.compacted) return undefined;
    const state = new Map(this.data.get(resource) ?? []);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const e = this.history[i]!;
      if (e.rv <= rv) break;
      if (e.resource !== resource) continue;
      if (e.type === 'ADDED') state.delete(e.key);
      else state.set(e.key, e.prev!);
    }
    return state;
  }

  /** eventsAfter lists a resource's events after rv, oldest first; undefined when rv is older than the window. */
  eventsAfter(resource: string, rv: number): StoreEvent[] | undefined {
    if (rv < this.compacted) return undefined;
    const out: StoreEvent[] = [];
    for (let i = this.history.length - 1; i >= 0; i--) {
      const e = this.history[i]!;
      if (e.rv <= rv) break;
      if (e.resource === resource) out.push(e);
    }
    return out.reverse();
  }

  /** compact forgets every event: only the current resourceVersion stays watchable. */
  compact(): void {
    this.history = [];
    this.compacted = this.rv;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length > this.retainedEvents) {
      const dropped = this.history.splice(0, this.history.length - this.retainedEvents);
      this.compacted = dropped[dropped.length - 1]!.rv;
    }
    for (const l of this.listeners) l(event);
  }
}

export function sortedEntries(map: Map<string, StoredObject>): [string, StoredObject][] {
  return [...map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function withResourceVersion(obj: StoredObject, rv: number): StoredObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}
