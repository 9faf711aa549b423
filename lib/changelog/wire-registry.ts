/**
 * What the wire encoder (codec.ts) keeps between messages: a Registry that
 * numbers the strings it sends and remembers each change-log row's column
 * codes, and the structures it is made of, each sized so that none holds the
 * event loop when a registry of a million strings grows.
 */

import { splitKey } from '../model';
import { ChunkedArray, ChunkedInts } from './chunked';

/** Shards of an IndexMap: a registry of a million strings rehashes a sixty-fourth of them at a time. */
const SHARDS = 64;
/** A shard's first capacity, in slots (a power of two); it doubles when half full. */
const SHARD_SLOTS = 64;

/**
 * IndexMap maps strings to their indexes in a registry's `strings`, in
 * SHARDS open-addressing tables of typed arrays picked by a hash of the
 * string. Its slots live outside the JS heap: a Map of a million strings
 * keeps its entries in the heap, where each scavenge while it grows copies
 * them and promotes them, and it rehashes all of them at once when it grows.
 * The hash reads the whole string: one of its first or last characters only
 * would put most generated names (pod-1234, orders-db-17) in a few shards.
 */
class IndexMap {
  /** Per shard: 1 + the index in each slot (0: empty). */
  readonly #slots: Int32Array[] = Array.from({ length: SHARDS }, () => new Int32Array(SHARD_SLOTS));
  /** Per shard: the hash of the string in each slot. */
  readonly #hashes: Int32Array[] = Array.from({ length: SHARDS }, () => new Int32Array(SHARD_SLOTS));
  readonly #sizes = new Int32Array(SHARDS);
  readonly #at: (i: number) => string;

  /** at: the string at an index. */
  constructor(at: (i: number) => string) {
    this.#at = at;
  }

  static #hash(s: string): number {
    let h = s.length;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return h;
  }

  /** The index of s, or -1. */
  get(s: string): number {
    const h = IndexMap.#hash(s);
    const shard = h & (SHARDS - 1);
    const slots = this.#slots[shard]!;
    const hashes = this.#hashes[shard]!;
    const mask = slots.length - 1;
    for (let i = (h >>> 6) & mask; ; i = (i + 1) & mask) {
      const slot = slots[i]!;
      if (slot === 0) return -1;
      if (hashes[i] === h && this.#at(slot - 1) === s) return slot - 1;
    }
  }

  /** Files index i for s, which get does not find. */
  add(s: string, i: number): void {
    const h = IndexMap.#hash(s);
    const shard = h & (SHARDS - 1);
    if (2 * (this.#sizes[shard]! + 1) > this.#slots[shard]!.length) this.#grow(shard);
    IndexMap.#put(this.#slots[shard]!, this.#hashes[shard]!, h, i + 1);
    this.#sizes[shard]!++;
  }

  static #put(slots: Int32Array, hashes: Int32Array, h: number, slot: number): void {
    const mask = slots.length - 1;
    let i = (h >>> 6) & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = slot;
    hashes[i] = h;
  }

  #grow(shard: number): void {
    const slots = this.#slots[shard]!;
    const hashes = this.#hashes[shard]!;
    const grownSlots = new Int32Array(2 * slots.length);
    const grownHashes = new Int32Array(2 * slots.length);
    for (let i = 0; i < slots.length; i++)
      if (slots[i] !== 0) IndexMap.#put(grownSlots, grownHashes, hashes[i]!, slots[i]!);
    this.#slots[shard] = grownSlots;
    this.#hashes[shard] = grownHashes;
  }
}

/**
 * A row's column values as the encoder takes them, worked out once per row
 * and Registry (codesOf in codec.ts). [0]: the row's extra fields, or null; then per
 * column: for str and key, the string's registry id (-1: absent, or not a
 * string); for time with a base, the difference; else the value (undefined:
 * absent, or a value the column does not carry).
 */
export type RowCodes = unknown[];

/** Rows one WeakMap of a RowCache holds, and the most WeakMaps it has. */
const CACHED_PER_MAP = 1 << 16;
const CACHE_MAPS = 4;

/**
 * RowCache keeps the RowCodes of up to CACHED_PER_MAP × CACHE_MAPS rows in
 * WeakMaps of at most CACHED_PER_MAP rows each: one WeakMap of a million rows
 * rehashes them all at once when it grows (400 ms on this project's machines,
 * holding the event loop), and a lookup that tries many maps costs more than
 * working the codes out again. Rows beyond it are worked out each time.
 */
export class RowCache {
  readonly #maps: WeakMap<object, RowCodes>[] = [new WeakMap()];
  #inLast = 0;

  get(row: object): RowCodes | undefined {
    const maps = this.#maps;
    for (let i = 0; i < maps.length; i++) {
      const codes = maps[i]!.get(row);
      if (codes !== undefined) return codes;
    }
    return undefined;
  }

  /** Keeps the codes of a row get does not find, if there is room. */
  add(row: object, codes: RowCodes): void {
    if (this.#inLast === CACHED_PER_MAP) {
      if (this.#maps.length === CACHE_MAPS) return;
      this.#maps.push(new WeakMap());
      this.#inLast = 0;
    }
    this.#maps[this.#maps.length - 1]!.set(row, codes);
    this.#inLast++;
  }
}

/**
 * Rows a message may send and still use the registry kept between messages.
 * A larger one (a snapshot of a million references) works its rows' codes out
 * in a registry of its own, dropped with it: most of its rows are beyond what
 * a RowCache keeps, and the kept registry would hold its million strings
 * (over 100 MB) between messages for little gain.
 */
export const SHARED_ROWS = CACHED_PER_MAP * CACHE_MAPS;

/** A registry of more strings than this many times the most one snapshot sent (plus RESET_SLACK) is dropped for a new one. */
const RESET_FACTOR = 2;
const RESET_SLACK = 50_000;

/**
 * Registry numbers the strings the encoder sends (ids), splits each key once,
 * and remembers each change-log row's RowCodes. A snapshot sends mostly the
 * rows the last one sent: it reads each from one array and finds its strings
 * by number, not by hashing them again. It outlives messages; once it holds
 * far more strings than a snapshot sends (entities removed, messages
 * changed), the next message starts a new one and the old is garbage.
 */
export class Registry {
  readonly strings = new ChunkedArray<string>();
  /** Per id, for a key: its kind's and namespace's ids (-1: the key is a name alone; NOT_SPLIT until sent as a key), and where its name starts. */
  readonly keyKind = new ChunkedInts();
  readonly keyNamespace = new ChunkedInts();
  readonly keyNameAt = new ChunkedInts();
  /** Per table schema, the RowCodes of rows sent (entity values are immutable). */
  readonly rows = new Map<object, RowCache>();
  /** The most strings and keys one snapshot sent (Interner.notePeak in codec.ts). */
  peak = 0;
  readonly #ids = new IndexMap((i) => this.strings.at(i));

  id(s: string): number {
    let id = this.#ids.get(s);
    if (id < 0) {
      id = this.strings.push(s) - 1;
      this.keyKind.push(NOT_SPLIT);
      this.keyNamespace.push(NOT_SPLIT);
      this.keyNameAt.push(0);
      this.#ids.add(s, id);
    }
    return id;
  }

  /** Splits the key with this id into kind, namespace and name, once. */
  split(id: number): void {
    if (this.keyKind.at(id) !== NOT_SPLIT) return;
    const k = this.strings.at(id);
    const parts = splitKey(k);
    this.keyKind.set(id, parts ? this.id(parts.kind) : -1);
    this.keyNamespace.set(id, parts ? this.id(parts.namespace) : -1);
    this.keyNameAt.set(id, parts ? k.length - parts.name.length : 0);
  }

  /** The name of the key with this id, once split. */
  keyName(id: number): string {
    const at = this.keyNameAt.at(id);
    const k = this.strings.at(id);
    return at === 0 ? k : k.slice(at);
  }

  /** Whether it holds so many more strings than a snapshot sends that a new one should start. */
  bloated(): boolean {
    return this.strings.length > RESET_FACTOR * this.peak + RESET_SLACK;
  }
}

const NOT_SPLIT = -2;

let registry = new Registry();

/** The registry a new message encodes with: the current one, or a new one if it is bloated. */
export function currentRegistry(): Registry {
  if (registry.bloated()) registry = new Registry();
  return registry;
}

/** The strings the encoder holds between messages (its registry), to check that it forgets those no snapshot sends. */
export const wireStringsHeld = (): number => registry.strings.length;

/** Ids a chunk of a dense Refs covers: 256 KB, made in V8's large-object space, and only once an id in it is set. */
const REFS_CHUNK = 1 << 16;

/**
 * Refs maps registry ids to a message's references (1 + index; 0: not in the
 * message yet): chunks over every id for a snapshot, which sends most of
 * them; a Map for a delta, which sends few. The chunks are never regrown: a
 * single array over a million ids, doubled as they came, copied megabytes at
 * once into memory the process had to fault in, and held the event loop.
 */
export class Refs {
  readonly #dense: (Int32Array | undefined)[] | undefined;
  readonly #sparse: Map<number, number> | undefined;

  constructor(dense: boolean) {
    if (dense) this.#dense = [];
    else this.#sparse = new Map();
  }

  get(id: number): number {
    const dense = this.#dense;
    if (dense === undefined) return this.#sparse!.get(id) ?? 0;
    const chunk = dense[Math.floor(id / REFS_CHUNK)];
    return chunk === undefined ? 0 : chunk[id % REFS_CHUNK]!;
  }

  set(id: number, ref: number): void {
    const dense = this.#dense;
    if (dense === undefined) {
      this.#sparse!.set(id, ref);
      return;
    }
    const c = Math.floor(id / REFS_CHUNK);
    while (dense.length <= c) dense.push(undefined);
    (dense[c] ??= new Int32Array(REFS_CHUNK))[id % REFS_CHUNK] = ref;
  }
}
