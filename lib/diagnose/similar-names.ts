import { splitKey } from '../model';
import { editDistance } from './edit-distance';
import { keepFirst } from './ranked';

/** At most this many keys of one cache are indexed; beyond it suggestions may miss names. */
export const MAX_INDEXED_KEYS = 200_000;
/** At most this many names are compared per lookup, unless the caller gives a smaller limit. */
export const MAX_COMPARISONS_PER_LOOKUP = 5_000;
/** The typo budget: names further apart, or whose lengths differ more, are never suggested. */
const MAX_LENGTH_DIFFERENCE = 3;
const MAX_SUGGESTIONS = 3;

/** Similar is one close name in the referent's own namespace. */
export interface Similar {
  name: string;
  distance: number;
}

/**
 * SimilarNames indexes one kind's cached object keys by namespace and name
 * length, to answer "did you mean…?" (close names in the same namespace) and
 * "it exists in namespace …" (the same name elsewhere) for a missing referent.
 * Built once per diagnosis and per kind, so many missing referents of one
 * kind cost one pass over its cache.
 */
export class SimilarNames {
  // namespace -> name length -> names
  private readonly byNamespace = new Map<string, Map<number, string[]>>();
  // name -> namespaces holding it ('' for cluster-scoped)
  private readonly namespacesOf = new Map<string, string[]>();
  /** Whether the cache held more keys than were indexed. */
  readonly truncated: boolean;

  constructor(keys: Iterable<string>, limit = MAX_INDEXED_KEYS) {
    const steps = this.#index(keys, limit, Infinity);
    let r = steps.next();
    while (!r.done) r = steps.next();
    this.truncated = r.value;
  }

  /** build indexes the keys as the constructor does, `step` keys between steps, so a caller can yield the event loop. */
  static *build(keys: Iterable<string>, step: number, limit = MAX_INDEXED_KEYS): Generator<void, SimilarNames> {
    const index = new SimilarNames([], limit);
    (index as { truncated: boolean }).truncated = yield* index.#index(keys, limit, step);
    return index;
  }

  /** Adds the keys to the index; returns whether some were left out at the limit. */
  *#index(keys: Iterable<string>, limit: number, step: number): Generator<void, boolean> {
    let n = 0;
    for (const key of keys) {
      if (n++ >= limit) return true;
      if (n % step === 0) yield;
      const parts = splitKey(key);
      if (!parts) continue;
      const { namespace, name } = parts;
      let lengths = this.byNamespace.get(namespace);
      if (!lengths) this.byNamespace.set(namespace, (lengths = new Map()));
      const bucket = lengths.get(name.length);
      if (bucket) bucket.push(name);
      else lengths.set(name.length, [name]);
      const where = this.namespacesOf.get(name);
      if (where) where.push(namespace);
      else this.namespacesOf.set(name, [namespace]);
    }
    return false;
  }

  /**
   * similarIn finds up to 3 names in the namespace closest to name, nearest
   * first, within maxDistanceFor(name). It compares at most `limit` names;
   * `complete` is false when it stopped there or the index was truncated.
   */
  similarIn(
    namespace: string,
    name: string,
    limit = MAX_COMPARISONS_PER_LOOKUP,
  ): { matches: Similar[]; compared: number; complete: boolean } {
    const lengths = this.byNamespace.get(namespace);
    const found: Similar[] = [];
    let compared = 0;
    if (!lengths) return { matches: found, compared, complete: !this.truncated };
    const max = maxDistanceFor(name);
    const best = new Nearest(MAX_SUGGESTIONS);
    for (let delta = 0; delta <= max; delta++) {
      for (const len of delta === 0 ? [name.length] : [name.length - delta, name.length + delta]) {
        for (const candidate of lengths.get(len) ?? []) {
          if (candidate === name) continue;
          if (compared === limit) return { matches: best.list(), compared, complete: false };
          compared++;
          // Once three are found, a name further than the furthest of them cannot displace it: the band narrows.
          const bound = best.bound(max);
          const distance = editDistance(name, candidate, bound);
          if (distance <= bound) best.offer(candidate, distance);
        }
      }
    }
    return { matches: best.list(), compared, complete: !this.truncated };
  }

  /** namespacesWith lists the other namespaces holding an object of this name, sorted; '' means cluster-scoped. */
  namespacesWith(name: string, except: string): string[] {
    return (this.namespacesOf.get(name) ?? []).filter((ns) => ns !== except).sort();
  }
}

/** maxDistanceFor scales the typo budget with the name: one edit for short names, up to three for long ones. */
export function maxDistanceFor(name: string): number {
  return Math.max(1, Math.min(MAX_LENGTH_DIFFERENCE, Math.floor(name.length / 4)));
}

/** Nearest keeps the `size` nearest names offered, ordered by distance, then name. */
class Nearest {
  readonly #found: Similar[] = [];

  constructor(private readonly size: number) {}

  /** The largest distance a name may have and still be kept: max, or the furthest kept once full. */
  bound(max: number): number {
    return this.#found.length < this.size ? max : Math.min(max, this.#found[this.size - 1]!.distance);
  }

  offer(name: string, distance: number): void {
    keepFirst(this.#found, { name, distance }, this.size, nearer);
  }

  list(): Similar[] {
    return this.#found;
  }
}

const nearer = (a: Similar, b: Similar): number =>
  a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
