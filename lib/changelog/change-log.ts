import { RefwatchError } from '../model';
import { ChunkedArray } from './chunked';
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
  /** Case-insensitive substring of an object key the entity names: a referrer's or referent's key, either end of a reference, an event's object. */
  q?: string;
  /** Entity kinds that are in scope whatever the fields below say: the cluster-wide context of a scoped view (controllers, watches, queues). */
  always?: readonly EntityKind[];
  /** A further predicate, for scopes the fields above cannot say (one object and its neighbours, the stuck referrers). */
  where?: (entity: EntityKind, value: AnyEntity) => boolean;
  /**
   * Set when `where` can change its verdict on an entity that did not change.
   * changesSince then sends a tombstone for every changed entity outside the
   * filter that the client may hold; the caller, who knows what it sent, trims them.
   */
  dynamic?: boolean;
}

/**
 * ChangeObserver sees every put and remove as it is stored, with the value it
 * replaces (`previous`, undefined when absent) and the new one (`next`,
 * undefined when removed or expired). It keeps derived indexes current
 * without rescanning the log.
 */
export type ChangeObserver = (
  entity: EntityKind,
  id: string,
  previous: AnyEntity | undefined,
  next: AnyEntity | undefined,
) => void;

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

/** EntityRows is an EntitySnapshot whose lists are the chunks they were read into (see snapshotRowsSteps). */
export type EntityRows = {
  revision: number;
  entities: { [K in EntityKind]: ChunkedArray<EntityByKind[K]> };
};

/** Deltas since a revision, or `resnapshot` when that revision is outside the retained window. */
export type ChangesSince =
  { resnapshot: false; revision: number; changes: Change[] } | { resnapshot: true; revision: number };

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
  /** Its number in its namespace's index, in the order entries were filed there; 0 if in none. */
  filed: number;
  newer: Entry | undefined;
  older: Entry | undefined;
}

/**
 * A snapshot being built in steps, at `revision`: `cursor` is the `created` of
 * the last entry of `kind` read; while a namespace's index is read instead,
 * `filed.cursor` is the `filed` of the last entry read there, of `filed.kinds`.
 */
interface Reader {
  readonly revision: number;
  kind: EntityKind | undefined;
  cursor: number;
  filed: { readonly namespace: string; readonly kinds: ReadonlySet<EntityKind>; cursor: number } | undefined;
  readonly done: Set<EntityKind>;
  readonly saved: Map<Entry, { value: AnyEntity; removed: boolean; visited: boolean }>;
}

const NO_KINDS: ReadonlySet<EntityKind> = new Set();

/**
 * Values one chunk of a snapshot read holds. A chunk this large (256 KB) is
 * made in V8's large-object space, which scavenges do not copy: a read of a
 * million entities holds its chunks for seconds, and small ones were copied by
 * every scavenge meanwhile. The first chunk grows as values come (chunked.ts).
 */
const READ_CHUNK = 32_768;

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
  /** Entries (live or tombstones) by their value's namespace, so a namespaced snapshot does not scan the whole log. */
  readonly #byNamespace = new Map<string, Set<Entry>>();
  /** The last `filed` number given. */
  #filed = 0;
  readonly #observers = new Set<ChangeObserver>();
  /** Tombstones in the order they were laid, each with the revision and time it was laid at; stale once revived. */
  #tombstones: { entry: Entry; revision: number; at: number }[] = [];
  #tombstoneHead = 0;
  readonly #listeners = new Set<(revision: number) => void>();
  /** Snapshots being built in steps: each keeps the state at its revision of every entry changed since. */
  readonly #readers = new Set<Reader>();
  readonly #waiters = new Set<{ after: number; resolve: (revision: number) => void }>();
  #batchDepth = 0;
  #notifyPending = false;
  readonly #maxEvents: number;
  readonly #retainRevisions: number;
  readonly #retainMs: number;
  readonly #now: () => number;
  readonly #onListenerError: (error: unknown) => void;
  /** Kinds whose entities are not stored yet (see defer), and what stores them when someone first asks. */
  #deferred: ReadonlySet<EntityKind> = NO_KINDS;
  #materialize: (() => void) | undefined;

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

  /** Whether `event` entities are kept at all (maxEvents > 0): a writer may skip building events nobody keeps. */
  get keepsEvents(): boolean {
    return this.#maxEvents > 0;
  }

  /** Deltas are answered only for revisions at or after this one; older clients resnapshot. */
  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  /** Pending `next()` calls. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * defer tells the log that the entities of these kinds are kept elsewhere for now, by a writer that can
   * store them all at once: `materialize` is called once, the first time anything asks the log about one of
   * the kinds (a get of the kind, a snapshot or delta that includes it, a subscriber, an observer or
   * a waiter). Until then a writer may skip building their entities (`defers`), and a put or remove of them
   * is ignored. From then on the log holds them as any other kind. A Manager that was given no change log
   * defers its referrers, referents and edges this way: a controller nobody asks about does not keep a
   * second copy of its state, nor a new version of it at every reconcile.
   */
  defer(kinds: readonly EntityKind[], materialize: () => void): void {
    if (this.#materialize !== undefined) throw new Error('ChangeLog.defer: kinds are deferred already');
    for (const kind of kinds)
      if (this.#entries(kind).size > 0) throw new Error(`ChangeLog.defer: ${kind} entities are stored already`);
    this.#deferred = new Set(kinds);
    this.#materialize = materialize;
  }

  /** Whether entities of this kind are deferred (see defer): a writer may skip building them. */
  defers(entity: EntityKind): boolean {
    return this.#deferred.has(entity);
  }

  /** Calls the deferred kinds' materializer if `kinds` (all kinds when undefined) includes one of them. */
  #need(kinds: Iterable<EntityKind> | undefined): void {
    if (this.#materialize === undefined) return;
    if (kinds !== undefined) {
      let asked = false;
      for (const k of kinds) if ((asked = this.#deferred.has(k))) break;
      if (!asked) return;
    }
    const materialize = this.#materialize;
    this.#materialize = undefined;
    this.#deferred = NO_KINDS;
    materialize();
  }

  /** Stores the latest value of (entity, id) at a new revision and returns that revision. */
  put<K extends EntityKind>(entity: K, id: string, value: EntityByKind[K]): number {
    if (this.#deferred.has(entity)) return this.#revision;
    const entries = this.#entries(entity);
    const revision = ++this.#revision;
    const entry = entries.get(id);
    if (entry === undefined) {
      const created: Entry = {
        entity,
        id,
        value,
        removed: false,
        revision,
        created: revision,
        absentFrom: 0,
        absentUntil: 0,
        movedAt: 0,
        filed: 0,
        newer: undefined,
        older: undefined,
      };
      entries.set(id, created);
      this.#live.set(entity, this.#live.get(entity)! + 1);
      this.#pushNewest(created);
      this.#indexNamespace(created, undefined);
      this.#observe(entity, id, undefined, value);
    } else {
      this.#preserve(entry);
      const previous = entry.removed ? undefined : entry.value;
      if (entry.removed) {
        // Back after a removal: remember the gap, so a client that saw it gone is not told of it twice.
        entry.absentFrom = entry.revision;
        entry.absentUntil = revision;
        entry.removed = false;
        this.#live.set(entity, this.#live.get(entity)! + 1);
      }
      const before = entry.value;
      if (!sameScope(before, value)) entry.movedAt = revision;
      entry.value = value;
      this.#indexNamespace(entry, before);
      entry.revision = revision;
      this.#moveToNewest(entry);
      // Keep ephemeral kinds in revision order, so the first one is the oldest.
      if (EPHEMERAL.has(entity)) {
        entries.delete(id);
        entries.set(id, entry);
      }
      this.#observe(entity, id, previous, value);
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
    if (this.#deferred.has(entity)) return undefined;
    const entry = this.#entries(entity).get(id);
    if (entry === undefined || entry.removed) return undefined;
    if (EPHEMERAL.has(entity)) {
      this.#drop(entry);
      return this.#revision;
    }
    this.#preserve(entry);
    const revision = ++this.#revision;
    entry.removed = true;
    entry.revision = revision;
    this.#live.set(entity, this.#live.get(entity)! - 1);
    this.#moveToNewest(entry);
    this.#tombstones.push({ entry, revision, at: this.#now() });
    this.#observe(entity, id, entry.value, undefined);
    this.#compact();
    this.#changed();
    return revision;
  }

  get<K extends EntityKind>(entity: K, id: string): EntityByKind[K] | undefined {
    if (this.#deferred.has(entity)) this.#need([entity]);
    const entry = this.#entries(entity).get(id);
    if (entry === undefined || entry.removed) return undefined;
    return entry.value as EntityByKind[K];
  }

  /** Live entities of one kind, or of all kinds; tombstones are not counted, nor a deferred kind's (see defer), which the log does not hold. */
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
    const steps = this.snapshotSteps(filter, Infinity);
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
    }
  }

  /**
   * snapshotSteps builds the same snapshot as `snapshot(filter)` at the
   * revision of its first step, `step` entries per step, so a caller can yield
   * the event loop between steps while the log keeps changing: an entry changed
   * meanwhile is read as it was at that revision (one removed and compacted
   * meanwhile, or moved out of the namespace read, comes at the end of its
   * kind). A namespace is read from its index, the kinds in `always` and
   * ephemeral kinds from their own lists; ephemeral kinds in one step. Run it to
   * the end or call `return()`; until then the log keeps the old state of every
   * entry changed.
   */
  *snapshotSteps(filter: ChangeFilter = {}, step = 10_000): Generator<void, EntitySnapshot> {
    const { revision, entities: rows } = yield* this.snapshotRowsSteps(filter, step);
    const entities: Partial<Record<EntityKind, AnyEntity[]>> = {};
    for (const kind of ENTITY_KINDS) entities[kind] = yield* rows[kind].toArray();
    return { revision, entities: entities as EntitySnapshot['entities'] };
  }

  /**
   * snapshotRowsSteps is snapshotSteps without the last copy: each kind's
   * entities in the chunks they were read into, which a reader that only
   * iterates (an encoder) takes as they are.
   */
  *snapshotRowsSteps(filter: ChangeFilter = {}, step = 10_000): Generator<void, EntityRows> {
    this.#need(filter.entities);
    // Each kind read in chunks, never copied as it grows: see chunked.ts.
    const gathered = Object.fromEntries(
      ENTITY_KINDS.map((k) => [k, new ChunkedArray<AnyEntity>(READ_CHUNK)]),
    ) as Record<EntityKind, ChunkedArray<AnyEntity>>;
    const reader: Reader = {
      revision: this.#revision,
      kind: undefined,
      cursor: 0,
      filed: undefined,
      done: new Set(),
      saved: new Map(),
    };
    this.#readers.add(reader);
    try {
      let kinds = filter.entities ?? ENTITY_KINDS;
      if (filter.namespace !== undefined) {
        // That namespace's entries only, in the order filed there: for an entry never moved, the order first stored.
        const filed = {
          namespace: filter.namespace,
          kinds: new Set(kinds.filter((k) => !filter.always?.includes(k) && !EPHEMERAL.has(k))),
          cursor: 0,
        };
        reader.filed = filed;
        let n = 0;
        for (const entry of this.#byNamespace.get(filter.namespace) ?? []) {
          const at = entry.filed; // refiled with a new number if it moves out and back while this step waits
          if (++n % step === 0) yield;
          if (filed.kinds.has(entry.entity)) this.#read(reader, entry, filter, gathered[entry.entity]);
          filed.cursor = at;
        }
        for (const kind of filed.kinds) this.#readDropped(reader, kind, filter, gathered[kind]);
        reader.filed = undefined;
        kinds = kinds.filter((k) => !filed.kinds.has(k));
      }
      for (const kind of kinds) {
        reader.kind = kind;
        reader.cursor = 0;
        let n = 0;
        for (const entry of this.#entries(kind).values()) {
          if (++n % step === 0 && !EPHEMERAL.has(kind)) yield;
          this.#read(reader, entry, filter, gathered[kind]);
          reader.cursor = entry.created;
        }
        this.#readDropped(reader, kind, filter, gathered[kind]);
      }
      return { revision: reader.revision, entities: gathered as EntityRows['entities'] };
    } finally {
      this.#readers.delete(reader);
    }
  }

  /** Reads an entry into `values` as it was at the reader's revision, once. */
  #read(reader: Reader, entry: Entry, filter: ChangeFilter, values: ChunkedArray<AnyEntity>): void {
    const saved = reader.saved.get(entry);
    if (saved !== undefined) {
      if (saved.visited) return;
      saved.visited = true;
      if (!saved.removed && matches(entry.entity, saved.value, filter)) values.push(saved.value);
    } else if (entry.revision <= reader.revision && !entry.removed && matches(entry.entity, entry.value, filter)) {
      values.push(entry.value); // unchanged since the reader's revision
    }
  }

  /** Reads the entries of `kind` that left the list being walked (dropped, or moved out of the namespace) before it reached them; the kind is then done. */
  #readDropped(reader: Reader, kind: EntityKind, filter: ChangeFilter, values: ChunkedArray<AnyEntity>): void {
    for (const [entry, saved] of reader.saved) {
      if (entry.entity !== kind || saved.visited) continue;
      saved.visited = true;
      if (!saved.removed && matches(kind, saved.value, filter)) values.push(saved.value);
    }
    reader.done.add(kind);
  }

  /**
   * The changes a client that has applied everything up to `rev` needs to reach
   * the latest revision: one per entity (its latest state or a tombstone), oldest
   * first. Costs O(entities changed since rev).
   */
  changesSince(rev: number, filter: ChangeFilter = {}): ChangesSince {
    this.#need(filter.entities);
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
      const inFilter = matches(e.entity, e.value, filter);
      if (!e.removed && inFilter) {
        changes.push({ entity: e.entity, id: e.id, revision: e.revision, removed: false, value: e.value } as Change);
        continue;
      }
      // Out of the client's view now: send a tombstone only if the client may hold it.
      if (e.created > rev) continue; // created since rev: the client never saw it
      if (e.absentFrom <= rev && rev < e.absentUntil) continue; // absent at rev, put again since: the client does not hold it
      if (!inFilter && e.movedAt <= rev && !filter.dynamic) continue; // outside the filter at rev as well
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
    this.#need(undefined);
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

  /** Calls `observer` synchronously for each put and remove from now on (see ChangeObserver). Returns the unsubscribe. */
  observe(observer: ChangeObserver): () => void {
    this.#need(undefined);
    this.#observers.add(observer);
    return () => {
      this.#observers.delete(observer);
    };
  }

  /** Calls `listener` with the new revision after each change (once per transaction). Returns the unsubscribe. */
  subscribe(listener: (revision: number) => void): () => void {
    this.#need(undefined);
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
      throw new RefwatchError(
        'changelog.entity',
        `unknown entity kind "${String(entity)}"; use one of ${ENTITY_KINDS.join(', ')}`,
        {
          field: 'entity',
        },
      );
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

  /** Keeps the state of an entry about to change, for each snapshot reader at an earlier revision that has not read it yet. */
  #preserve(entry: Entry): void {
    for (const reader of this.#readers) {
      // Past the reader's revision already: changed since, so saved at that first change, or created since.
      if (entry.revision > reader.revision || reader.saved.has(entry)) continue;
      // Map order is creation order, except for ephemeral kinds, which are read in one step; an index's order is filing order.
      const visited =
        reader.done.has(entry.entity) ||
        (reader.kind === entry.entity && entry.created <= reader.cursor) ||
        this.#passed(reader, entry);
      reader.saved.set(entry, { value: entry.value, removed: entry.removed, visited });
    }
  }

  /** Whether the reader's walk of a namespace's index is past the entry (one of another namespace fails the filter whatever this says). */
  #passed(reader: Reader, entry: Entry): boolean {
    const filed = reader.filed;
    return filed !== undefined && filed.kinds.has(entry.entity) && entry.filed <= filed.cursor;
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
    this.#preserve(entry);
    this.#entries(entry.entity).delete(entry.id);
    if (!entry.removed) {
      this.#live.set(entry.entity, this.#live.get(entry.entity)! - 1);
      this.#observe(entry.entity, entry.id, entry.value, undefined);
    }
    this.#unlink(entry);
    this.#unindexNamespace(entry, entry.value);
  }

  /** Files an entry under its value's namespace, moving it from the one `before` had. */
  #indexNamespace(entry: Entry, before: AnyEntity | undefined): void {
    const ns = namespaceOf(entry.value);
    if (before !== undefined) {
      if (namespaceOf(before) === ns) return;
      this.#unindexNamespace(entry, before);
    }
    if (ns === undefined) return;
    let set = this.#byNamespace.get(ns);
    if (set === undefined) this.#byNamespace.set(ns, (set = new Set()));
    entry.filed = ++this.#filed;
    set.add(entry);
  }

  #unindexNamespace(entry: Entry, value: AnyEntity): void {
    const ns = namespaceOf(value);
    if (ns === undefined) return;
    const set = this.#byNamespace.get(ns);
    if (set === undefined) return;
    set.delete(entry);
    if (set.size === 0) this.#byNamespace.delete(ns);
  }

  #observe(entity: EntityKind, id: string, previous: AnyEntity | undefined, next: AnyEntity | undefined): void {
    for (const observer of this.#observers) {
      try {
        observer(entity, id, previous, next);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
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

function matches(entity: EntityKind, value: AnyEntity, filter: ChangeFilter): boolean {
  if (filter.always?.includes(entity)) return true;
  if (filter.kind !== undefined && (value as Scope).kind !== filter.kind) return false;
  if (filter.namespace !== undefined && (value as Scope).namespace !== filter.namespace) return false;
  if (
    filter.q !== undefined &&
    filter.q !== '' &&
    !objectKeysOf(entity, value).some((k) => k.toLowerCase().includes(filter.q!.toLowerCase()))
  )
    return false;
  if (filter.where !== undefined && !filter.where(entity, value)) return false;
  return true;
}

/** The object keys an entity names, for `q`: none for controllers, watches and queues. */
export function objectKeysOf(entity: EntityKind, value: AnyEntity): string[] {
  switch (entity) {
    case 'referrer':
    case 'referent':
      return [(value as { key: string }).key];
    case 'reference':
      return [(value as { referrer: string }).referrer, (value as { referent: string }).referent];
    case 'event':
      return (value as { key?: string }).key !== undefined ? [(value as { key: string }).key] : [];
    default:
      return [];
  }
}

function namespaceOf(value: AnyEntity): string | undefined {
  const ns = (value as Scope).namespace;
  return typeof ns === 'string' ? ns : undefined;
}

function sameScope(a: AnyEntity, b: AnyEntity): boolean {
  return (a as Scope).kind === (b as Scope).kind && (a as Scope).namespace === (b as Scope).namespace;
}

function nonNegativeInteger(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RefwatchError(
      'changelog.options',
      `ChangeLog option ${field} must be a non-negative integer, got ${value}`,
      {
        field,
        example: `new ChangeLog({ ${field}: 1000 })`,
      },
    );
  }
  return value;
}

function abortError(): DOMException {
  return new DOMException('waiting for the next change log revision was aborted', 'AbortError');
}
