import { RefwatchError } from '../model';
import { ENTITY_KINDS, type AnyEntity, type EntityByKind, type EntityKind } from './entities';
import type { Change } from './wire';

/**
 * ChangeFilter narrows a snapshot or a delta. Every given field must match;
 * an entity without the field (a queue has no namespace) does not match it.
 */
export interface ChangeFilter {
  namespace?: string;
  kind?: string;
  entities?: readonly EntityKind[];
}

export interface ChangeLogOptions {
  /** Live `event` entities kept; the oldest expires silently beyond this. Default 1000. */
  maxEvents?: number;
  /** Tombstones are kept this many revisions, so clients that far behind still get deltas. Default 10_000. */
  retainRevisions?: number;
  /**
   * Tombstones are kept at most this long (ms), however few revisions followed,
   * so a log that went quiet after churn lets go of them at the next compact().
   * A client away longer resnapshots. Default 120_000.
   */
  retainMs?: number;
  /** Milliseconds on a monotonic clock, for retainMs. Default performance.now. */
  now?: () => number;
  /** Receives what a subscriber threw; the change itself is stored. Default: console.error. */
  onListenerError?: (error: unknown) => void;
}

export type EntitySnapshot = {
  revision: number;
  entities: { [K in EntityKind]: EntityByKind[K][] };
};

/** Deltas since a revision, or `resnapshot` when that revision is outside the retained window. */
export type ChangesSince =
  | { resnapshot: false; revision: number; changes: Change[] }
  | { resnapshot: true; revision: number };

/** Entry is one entity's latest state, linked into the log most-recent-first. */
interface Entry {
  readonly entity: EntityKind;
  readonly id: string;
  /** Its latest value; a tombstone keeps the last one so filters still match it. */
  value: AnyEntity;
  removed: boolean;
  /** The revision of its latest put or remove. */
  revision: number;
  /** The revision at which this entry first entered the log. */
  readonly created: number;
  /** Its latest absence, [absentFrom, absentUntil): removed, then put again. Empty when 0, 0. */
  absentFrom: number;
  absentUntil: number;
  /** The revision at which its kind or namespace last changed; 0 if never. */
  movedAt: number;
  newer: Entry | undefined;
  older: Entry | undefined;
}

/** Kinds whose entities expire silently: clients trim their own timelines. */
const EPHEMERAL: ReadonlySet<EntityKind> = new Set<EntityKind>(['event']);

/**
 * ChangeLog is the revision-numbered store of everything refwatch makes
 * observable. Each put or remove gets the next revision; `changesSince(rev)`
 * walks back from the most recent entry only as far as `rev`, so a client's
 * delta costs what changed since it last looked, whatever the store's size.
 *
 * Values are kept by reference: the log never mutates them and callers must
 * not either. An entity's kind and namespace are normally fixed for its id; if
 * they change, a filtered client that held it under the old ones gets a tombstone.
 */
export class ChangeLog {
  #revision = 0;
  #compactedRevision = 0;
  #newest: Entry | undefined;
  readonly #byKind = new Map<EntityKind, Map<string, Entry>>(ENTITY_KINDS.map((k) => [k, new Map()]));
  readonly #live = new Map<EntityKind, number>(ENTITY_KINDS.map((k) => [k, 0]));
  /** Tombstones in the order they were laid, each with the revision and time it was laid at; stale once revived. */
  #tombstones: { entry: Entry; revision: number; at: number }[] = [];
  #tombstoneHead = 0;
  readonly #listeners = new Set<(revision: number) => void>();
  readonly #waiters = new Set<{ after: number; resolve: (revision: number) => void }>();
  #batchDepth = 0;
  #notifyPending = false;
  readonly #maxEvents: number;
  readonly #retainRevisions: number;
  readonly #retainMs: number;
  readonly #now: () => number;
  readonly #onListenerError: (error: unknown) => void;

  constructor(options: ChangeLogOptions = {}) {
    this.#maxEvents = nonNegativeInteger('maxEvents', options.maxEvents ?? 1000);
    this.#retainRevisions = nonNegativeInteger('retainRevisions', options.retainRevisions ?? 10_000);
    this.#retainMs = nonNegativeInteger('retainMs', options.retainMs ?? 120_000);
    this.#now = options.now ?? (() => performance.now());
    this.#onListenerError = options.onListenerError ?? ((error) => console.error('ChangeLog subscriber threw:', error));
  }

  /** The latest revision; 0 before the first change. */
  get revision(): number {
    return this.#revision;
  }

  /** Deltas are answered only for revisions at or after this one; older clients resnapshot. */
  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  /** Pending `next()` calls. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Stores the latest value of (entity, id) at a new revision and returns that revision. */
  put<K extends EntityKind>(entity: K, id: string, value: EntityByKind[K]): number {
    const entries = this.#entries(entity);
    const revision = ++this.#revision;
    const entry = entries.get(id);
    if (entry === undefined) {
      const created: Entry = {
        entity, id, value, removed: false, revision, created: revision,
        absentFrom: 0, absentUntil: 0, movedAt: 0, newer: undefined, older: undefined,
      };
      entries.set(id, created);
      this.#live.set(entity, this.#live.get(entity)! + 1);
      this.#pushNewest(created);
    } else {
      if (entry.removed) {
        // Back after a removal: remember the gap, so a client that saw it gone is not told of it twice.
        entry.absentFrom = entry.revision;
        entry.absentUntil = revision;
        entry.removed = false;
        this.#live.set(entity, this.#live.get(entity)! + 1);
      }
      if (!sameScope(entry.value, value)) entry.movedAt = revision;
      entry.value = value;
      entry.revision = revision;
      this.#moveToNewest(entry);
      // Keep ephemeral kinds in revision order, so the first one is the oldest.
      if (EPHEMERAL.has(entity)) {
        entries.delete(id);
        entries.set(id, entry);
      }
    }
    if (EPHEMERAL.has(entity) && this.#live.get(entity)! > this.#maxEvents) this.#expireOldest(entity);
    this.#compact();
    this.#changed();
    return revision;
  }

  /**
   * Removes (entity, id), leaving a tombstone at a new revision, and returns that
   * revision; undefined if it is absent. Ephemeral kinds leave no tombstone, and
   * the revision is unchanged since no client is told.
   */
  remove(entity: EntityKind, id: string): number | undefined {
    const entry = this.#entries(entity).get(id);
    if (entry === undefined || entry.removed) return undefined;
    if (EPHEMERAL.has(entity)) {
      this.#drop(entry);
      return this.#revision;
    }
    const revision = ++this.#revision;
    entry.removed = true;
    entry.revision = revision;
    this.#live.set(entity, this.#live.get(entity)! - 1);
    this.#moveToNewest(entry);
    this.#tombstones.push({ entry, revision, at: this.#now() });
    this.#compact();
    this.#changed();
    return revision;
  }

  get<K extends EntityKind>(entity: K, id: string): EntityByKind[K] | undefined {
    const entry = this.#entries(entity).get(id);
    if (entry === undefined || entry.removed) return undefined;
    return entry.value as EntityByKind[K];
  }

  /** Live entities of one kind, or of all kinds; tombstones are not counted. */
  size(entity?: EntityKind): number {
    if (entity !== undefined) return this.#live.get(entity) ?? 0;
    let total = 0;
    for (const n of this.#live.values()) total += n;
    return total;
  }

  /** Tombstones of one kind, or of all kinds: removed entities held so that clients behind are told; dropped by compaction. */
  tombstones(entity?: EntityKind): number {
    if (entity !== undefined) return this.#entries(entity).size - this.size(entity);
    let held = 0;
    for (const entries of this.#byKind.values()) held += entries.size;
    return held - this.size();
  }

  /** The live entities matching the filter, each kind in the order first stored (events: least recently put first). */
  snapshot(filter: ChangeFilter = {}): EntitySnapshot {
    const entities = Object.fromEntries(ENTITY_KINDS.map((k) => [k, []])) as unknown as EntitySnapshot['entities'];
    for (const kind of filter.entities ?? ENTITY_KINDS) {
      const values: AnyEntity[] = entities[kind];
      for (const entry of this.#entries(kind).values()) {
        if (!entry.removed && matches(entry.value, filter)) values.push(entry.value);
      }
    }
    return { revision: this.#revision, entities };
  }

  /**
   * The changes a client that has applied everything up to `rev` needs to reach
   * the latest revision: one per entity (its latest state or a tombstone), oldest
   * first. Costs O(entities changed since rev).
   */
  changesSince(rev: number, filter: ChangeFilter = {}): ChangesSince {
    const revision = this.#revision;
    // Not a revision this log handed out: NaN, negative, fractional.
    if (!Number.isInteger(rev) || rev < 0) return { resnapshot: true, revision };
    // Ahead of us: the client saw another process's log.
    if (rev > revision) return { resnapshot: true, revision };
    // Tombstones the client has not seen were compacted away.
    if (rev < this.#compactedRevision) return { resnapshot: true, revision };

    const kinds = filter.entities === undefined ? undefined : new Set(filter.entities);
    const changes: Change[] = [];
    for (let e = this.#newest; e !== undefined && e.revision > rev; e = e.older) {
      if (kinds !== undefined && !kinds.has(e.entity)) continue;
      const inFilter = matches(e.value, filter);
      if (!e.removed && inFilter) {
        changes.push({ entity: e.entity, id: e.id, revision: e.revision, removed: false, value: e.value } as Change);
        continue;
      }
      // Out of the client's view now: send a tombstone only if the client may hold it.
      if (e.created > rev) continue; // created since rev: the client never saw it
      if (e.absentFrom <= rev && rev < e.absentUntil) continue; // absent at rev, put again since: the client does not hold it
      if (!inFilter && e.movedAt <= rev) continue; // outside the filter at rev as well
      changes.push({ entity: e.entity, id: e.id, revision: e.revision, removed: true });
    }
    changes.reverse();
    return { resnapshot: false, revision, changes };
  }

  /**
   * Drops tombstones older than `revision - retainRevisions` or than `retainMs`;
   * returns how many. Runs inside put and remove; call it on a timer too, so a
   * quiet log lets go of tombstones by age.
   */
  compact(): number {
    return this.#compact();
  }

  /**
   * Resolves with the latest revision once it is greater than `rev` (at once if
   * it already is). Rejects with an AbortError when `signal` aborts.
   */
  next(rev: number, signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (this.#revision > rev) return Promise.resolve(this.#revision);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(abortError());
      };
      const waiter = {
        after: rev,
        resolve: (revision: number): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve(revision);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Calls `listener` with the new revision after each change (once per transaction). Returns the unsubscribe. */
  subscribe(listener: (revision: number) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Runs `fn`, telling subscribers and waiters once at the end about every change it made. */
  transaction<T>(fn: () => T): T {
    this.#batchDepth++;
    try {
      return fn();
    } finally {
      // Changes made before a throw are stored, so they are announced all the same.
      if (--this.#batchDepth === 0 && this.#notifyPending) this.#notify();
    }
  }

  #entries(entity: EntityKind): Map<string, Entry> {
    const entries = this.#byKind.get(entity);
    if (entries === undefined) {
      throw new RefwatchError('changelog.entity', `unknown entity kind "${String(entity)}"; use one of ${ENTITY_KINDS.join(', ')}`, {
        field: 'entity',
      });
    }
    return entries;
  }

  #changed(): void {
    if (this.#batchDepth > 0) this.#notifyPending = true;
    else this.#notify();
  }

  #notify(): void {
    this.#notifyPending = false;
    const revision = this.#revision;
    for (const waiter of this.#waiters) {
      if (revision > waiter.after) {
        this.#waiters.delete(waiter);
        waiter.resolve(revision);
      }
    }
    for (const listener of this.#listeners) {
      try {
        listener(revision);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Expires the oldest live entity of an ephemeral kind, without a tombstone. */
  #expireOldest(entity: EntityKind): void {
    const oldest = this.#entries(entity).values().next();
    if (!oldest.done) this.#drop(oldest.value);
  }

  #compact(): number {
    const horizon = this.#revision - this.#retainRevisions;
    const expiry = this.#now() - this.#retainMs;
    let dropped = 0;
    while (this.#tombstoneHead < this.#tombstones.length) {
      const { entry, revision, at } = this.#tombstones[this.#tombstoneHead]!;
      if (revision >= horizon && at >= expiry) break;
      this.#tombstoneHead++;
      if (!entry.removed || entry.revision !== revision) continue; // put again since: no longer this tombstone
      this.#drop(entry);
      this.#compactedRevision = revision;
      dropped++;
    }
    // Reclaim the consumed prefix once it is at least half the queue: amortised O(1) per tombstone.
    if (this.#tombstoneHead > 1024 && this.#tombstoneHead * 2 >= this.#tombstones.length) {
      this.#tombstones = this.#tombstones.slice(this.#tombstoneHead);
      this.#tombstoneHead = 0;
    }
    return dropped;
  }

  /** Forgets an entry entirely: unlinked, unindexed, uncounted. */
  #drop(entry: Entry): void {
    this.#entries(entry.entity).delete(entry.id);
    if (!entry.removed) this.#live.set(entry.entity, this.#live.get(entry.entity)! - 1);
    this.#unlink(entry);
  }

  #pushNewest(entry: Entry): void {
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = entry;
    this.#newest = entry;
  }

  #moveToNewest(entry: Entry): void {
    if (this.#newest === entry) return;
    this.#unlink(entry);
    this.#pushNewest(entry);
  }

  #unlink(entry: Entry): void {
    if (entry.newer !== undefined) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    if (entry.older !== undefined) entry.older.newer = entry.newer;
    entry.newer = undefined;
    entry.older = undefined;
  }
}

/** The fields filters match on; not every entity has them. */
type Scope = { kind?: string; namespace?: string };

function matches(value: AnyEntity, filter: ChangeFilter): boolean {
  if (filter.kind !== undefined && (value as Scope).kind !== filter.kind) return false;
  if (filter.namespace !== undefined && (value as Scope).namespace !== filter.namespace) return false;
  return true;
}

function sameScope(a: AnyEntity, b: AnyEntity): boolean {
  return (a as Scope).kind === (b as Scope).kind && (a as Scope).namespace === (b as Scope).namespace;
}

function nonNegativeInteger(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RefwatchError('changelog.options', `ChangeLog option ${field} must be a non-negative integer, got ${value}`, {
      field,
      example: `new ChangeLog({ ${field}: 1000 })`,
    });
  }
  return value;
}

function abortError(): DOMException {
  return new DOMException('waiting for the next change log revision was aborted', 'AbortError');
}
