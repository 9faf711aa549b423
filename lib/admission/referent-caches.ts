import type { InformerSource, InformerSubscription, ReadinessPredicate } from '../engine';
import { defaultReadiness } from '../engine/readiness';
import { SimilarNames } from '../diagnose/similar-names';
import { kindOfKey, parseKindKey, splitKey, type ObjectKey } from '../model';
import type { ReferentLookup, ReferentState } from './referent-lookup';

export interface ReferentCachesOptions {
  /** The engine's shared informers: a kind the engine already watches costs no new watch. */
  source: InformerSource;
  /** Readiness per referent kind key; default: Ready=True or no conditions. */
  readiness?: (kind: string) => ReadinessPredicate | undefined;
  /** Told of every referent that enters a cache, for warnings that resolve themselves. */
  onAdded?: (key: ObjectKey) => void;
}

interface KindCache {
  subscription: InformerSubscription;
  /**
   * The watch is failing (an error event not yet followed by recovery): kept from the subscription's events,
   * because its status() is a fresh copy, and a review looks up ten referents or more.
   */
  failing: boolean;
  similar?: {
    version: number | undefined;
    builtAt: number;
    index: SimilarNames;
    /** Close names found per missing referent since the index was built: a typo is often reviewed again. */
    found: Map<ObjectKey, string[]>;
  };
}

const NAMESPACE_KIND = 'Namespace';
const INDEX_MAX_AGE_MS = 5_000;
/** Up to this many objects, a cache's name index is rebuilt on every change of its keys. */
const SMALL_CACHE = 5_000;
/** Missing referents whose close names one index remembers; past it, it starts over. */
const MAX_REMEMBERED = 1_000;

/**
 * ReferentCaches answers lookups from shared informer caches, one per
 * referent kind, acquired on the first lookup of a kind (or by prime) and
 * held until stop. A lookup never makes a request: a kind whose cache is
 * not primed, or whose watch fails (Forbidden, KindUnknown), is `unknown`.
 */
export class ReferentCaches implements ReferentLookup {
  private readonly kinds = new Map<string, KindCache>();
  private stopped = false;

  constructor(private readonly opts: ReferentCachesOptions) {}

  /** prime starts the caches of these kinds now, so that the first lookups find them primed. */
  prime(kinds: Iterable<string>): void {
    for (const k of kinds) this.cacheOf(k);
  }

  lookup(referent: ObjectKey): ReferentState {
    const kind = kindOfKey(referent);
    const c = this.cacheOf(kind);
    if (!c) return { state: 'unknown' };
    const sub = c.subscription;
    if (c.failing || !sub.isPrimed()) return { state: 'unknown' };
    const object = sub.store.get(referent);
    if (object) {
      const predicate = this.opts.readiness?.(kind) ?? defaultReadiness;
      return { state: 'found', object, readiness: predicate(object) };
    }
    const parts = splitKey(referent);
    if (!parts) return { state: 'missing', similar: [] };
    const store = sub.store;
    const now = Date.now();
    // A busy large cache gains keys all the time: its index is rebuilt at most every INDEX_MAX_AGE_MS, and a
    // suggestion that has gone since is dropped, so a review never pays for indexing a large cache twice in a row.
    // A small cache is indexed again whenever its keys changed: cheap, and a name created a moment ago is suggested.
    const stale = c.similar !== undefined && c.similar.version !== store.keysVersion;
    if (!c.similar || (stale && (store.size <= SMALL_CACHE || now - c.similar.builtAt >= INDEX_MAX_AGE_MS)))
      c.similar = { version: store.keysVersion, builtAt: now, index: new SimilarNames(store.keys()), found: new Map() };
    const { index, found } = c.similar;
    let names = found.get(referent);
    if (!names) {
      // A did-you-mean search compares the name with every name of similar length in its namespace.
      names = index.similarIn(parts.namespace, parts.name).matches.map((m) => m.name);
      if (found.size >= MAX_REMEMBERED) found.clear();
      found.set(referent, names);
    }
    const prefix = referent.slice(0, referent.length - parts.name.length);
    const similar = names.filter((name) => store.get(prefix + name) !== undefined);
    return { state: 'missing', similar };
  }

  /** namespaceLabels reads a namespace's labels from the Namespace cache; undefined while it is not known. */
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined {
    const c = this.cacheOf(NAMESPACE_KIND);
    if (!c || !c.subscription.isPrimed()) return undefined;
    return c.subscription.store.get(`${NAMESPACE_KIND}//${namespace}`)?.metadata.labels ?? undefined;
  }

  /** isPrimed: is the cache of this kind primed and healthy? */
  isPrimed(kind: string): boolean {
    const c = this.kinds.get(kind);
    return c !== undefined && !c.failing && c.subscription.isPrimed();
  }

  /** stop releases every cache this lookup acquired; awaited. */
  async stop(): Promise<void> {
    this.stopped = true;
    const subs = [...this.kinds.values()].map((c) => c.subscription);
    this.kinds.clear();
    await Promise.all(subs.map((s) => s.release()));
  }

  private cacheOf(kind: string): KindCache | undefined {
    const existing = this.kinds.get(kind);
    if (existing || this.stopped) return existing;
    const gk = parseKindKey(kind);
    if (!gk.ok) return undefined;
    const predicate = kind === NAMESPACE_KIND ? undefined : (this.opts.readiness?.(kind) ?? defaultReadiness);
    const onAdded = this.opts.onAdded;
    // Filled in below; the handler may run before acquire returns.
    const c = { failing: false } as KindCache;
    const subscription = this.opts.source.acquire(
      { group: gk.value.group, kind: gk.value.kind },
      (e) => {
        if (e.type === 'added' && onAdded) onAdded(e.key);
        else if (e.type === 'error') c.failing = true;
        else if (e.type === 'recovered') c.failing = false;
      },
      // Namespaces are read for their labels only; a kind whose readiness is existence needs no more either.
      { metadataOnly: kind === NAMESPACE_KIND || predicate?.readsMetadataOnly === true },
    );
    c.subscription = subscription;
    // A shared watch that was failing before this subscription sends it no error event.
    if (subscription.status().lastError) c.failing = true;
    this.kinds.set(kind, c);
    return c;
  }
}
