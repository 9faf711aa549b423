import { isPositive, matchesSelector, type Labels, type ObjectKey, type Selector } from '../model';

const NO_LABELS: Labels = Object.freeze({});

interface NamespaceLabels {
  /** Every indexed object of the namespace: what a selector without an In or Exists term starts from. */
  all: Set<ObjectKey>;
  /** label key → value → the objects carrying that pair. */
  byLabel: Map<string, Map<string, Set<ObjectKey>>>;
}

/**
 * LabelIndex indexes one kind's cached objects by namespace, label key and
 * value, as client-go's cache.Indexer does with a named index function, so a
 * selector is answered from the sets its In and Exists terms name instead
 * of a scan of the kind. Label objects are the cache's own frozen ones.
 */
export class LabelIndex {
  private readonly namespaces = new Map<string, NamespaceLabels>();
  private readonly labelsOf = new Map<ObjectKey, { namespace: string; labels: Labels }>();

  get size(): number {
    return this.labelsOf.size;
  }

  /** set indexes an object under its labels, replacing what was indexed for its key. */
  set(key: ObjectKey, namespace: string, labels: Labels | undefined): void {
    const next = labels ?? NO_LABELS;
    const prev = this.labelsOf.get(key);
    if (prev && prev.labels === next && prev.namespace === namespace) return;
    let ns = this.namespaces.get(namespace);
    if (!ns) this.namespaces.set(namespace, (ns = { all: new Set(), byLabel: new Map() }));
    if (prev && prev.namespace === namespace) {
      for (const [k, v] of Object.entries(prev.labels)) if (next[k] !== v) this.unlink(ns, key, k, v);
      for (const [k, v] of Object.entries(next)) if (prev.labels[k] !== v) this.link(ns, key, k, v);
    } else {
      if (prev) this.delete(key);
      ns.all.add(key);
      for (const [k, v] of Object.entries(next)) this.link(ns, key, k, v);
    }
    this.labelsOf.set(key, { namespace, labels: next });
  }

  delete(key: ObjectKey): void {
    const prev = this.labelsOf.get(key);
    if (!prev) return;
    this.labelsOf.delete(key);
    const ns = this.namespaces.get(prev.namespace)!;
    ns.all.delete(key);
    for (const [k, v] of Object.entries(prev.labels)) this.unlink(ns, key, k, v);
    if (ns.all.size === 0) this.namespaces.delete(prev.namespace);
  }

  labels(key: ObjectKey): Labels | undefined {
    return this.labelsOf.get(key)?.labels;
  }

  /** namespaceNames lists the namespaces holding at least one indexed object. */
  namespaceNames(): IterableIterator<string> {
    return this.namespaces.keys();
  }

  /** keysIn lists the indexed objects of one namespace ('' for a cluster-scoped kind). */
  keysIn(namespace: string): ReadonlySet<ObjectKey> {
    return this.namespaces.get(namespace)?.all ?? EMPTY;
  }

  /**
   * select returns the objects of the namespace (or of every namespace) that
   * match the selector. It starts from the smallest candidate set an In or
   * Exists term names and checks the other terms on those objects only; a
   * selector with no such term (empty, or only NotIn and DoesNotExist) has
   * no smaller set than the namespace.
   */
  select(namespace: string | undefined, selector: Selector): ObjectKey[] {
    const out: ObjectKey[] = [];
    if (namespace !== undefined) {
      const ns = this.namespaces.get(namespace);
      if (ns) this.selectIn(ns, selector, out);
    } else for (const ns of this.namespaces.values()) this.selectIn(ns, selector, out);
    return out;
  }

  private selectIn(ns: NamespaceLabels, selector: Selector, out: ObjectKey[]): void {
    let best: Set<ObjectKey>[] | undefined;
    let bestSize = ns.all.size;
    for (const r of selector.requirements) {
      if (!isPositive(r)) continue;
      const values = ns.byLabel.get(r.key);
      if (!values) return; // nobody carries the key: nothing matches
      const sets: Set<ObjectKey>[] = [];
      let size = 0;
      const named = r.operator === 'In' ? r.values.map((v) => values.get(v)) : values.values();
      for (const s of named) {
        if (!s) continue;
        sets.push(s);
        size += s.size;
      }
      if (size === 0) return;
      if (best === undefined || size < bestSize) {
        best = sets;
        bestSize = size;
      }
    }
    for (const set of best ?? [ns.all])
      for (const key of set) if (matchesSelector(selector, this.labelsOf.get(key)!.labels)) out.push(key);
  }

  private link(ns: NamespaceLabels, key: ObjectKey, k: string, v: string): void {
    let values = ns.byLabel.get(k);
    if (!values) ns.byLabel.set(k, (values = new Map()));
    let set = values.get(v);
    if (!set) values.set(v, (set = new Set()));
    set.add(key);
  }

  private unlink(ns: NamespaceLabels, key: ObjectKey, k: string, v: string): void {
    const values = ns.byLabel.get(k);
    const set = values?.get(v);
    if (!set) return;
    set.delete(key);
    if (set.size > 0) return;
    values!.delete(v);
    if (values!.size === 0) ns.byLabel.delete(k);
  }
}

const EMPTY: ReadonlySet<ObjectKey> = new Set();

/** SelectorWatch is one registered selector: who to wake, where it looks and what it selects. */
export interface SelectorWatch {
  readonly controller: string;
  readonly referrer: ObjectKey;
  /** The namespace it looks in; undefined: every namespace. */
  readonly namespace: string | undefined;
  readonly selector: Selector;
}

interface WatchBucket {
  /** label key → the selectors that name it. */
  byKey: Map<string, Set<SelectorWatch>>;
  /** Selectors that can match an object carrying none of their keys: empty, or only NotIn and DoesNotExist terms. */
  keyless: Set<SelectorWatch>;
}

const ALL_NAMESPACES = '\u0000*';

/**
 * SelectorWatches indexes registered selectors by the label keys they name,
 * so a label change re-checks only the selectors naming a changed key, and
 * an object's creation or deletion only those naming one of its keys plus
 * the keyless ones (which may match an object without any of their keys).
 */
export class SelectorWatches {
  private readonly buckets = new Map<string, WatchBucket>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(w: SelectorWatch): void {
    const id = w.namespace ?? ALL_NAMESPACES;
    let b = this.buckets.get(id);
    if (!b) this.buckets.set(id, (b = { byKey: new Map(), keyless: new Set() }));
    this.count++;
    if (!w.selector.requirements.some(isPositive)) b.keyless.add(w);
    for (const k of keysOf(w.selector)) {
      let s = b.byKey.get(k);
      if (!s) b.byKey.set(k, (s = new Set()));
      s.add(w);
    }
  }

  delete(w: SelectorWatch): void {
    const id = w.namespace ?? ALL_NAMESPACES;
    const b = this.buckets.get(id);
    if (!b) return;
    let found = b.keyless.delete(w);
    for (const k of keysOf(w.selector)) {
      const s = b.byKey.get(k);
      if (s?.delete(w)) found = true;
      if (s && s.size === 0) b.byKey.delete(k);
    }
    if (found) this.count--;
    if (b.keyless.size === 0 && b.byKey.size === 0) this.buckets.delete(id);
  }

  /** forEachWatch visits every registered selector once. */
  forEachWatch(visit: (w: SelectorWatch) => void): void {
    const seen = new Set<SelectorWatch>();
    for (const b of this.buckets.values()) {
      b.keyless.forEach((w) => seen.add(w));
      for (const set of b.byKey.values()) set.forEach((w) => seen.add(w));
    }
    seen.forEach(visit);
  }

  /** forEach visits every selector looking in the namespace (those of every namespace included). */
  forEach(namespace: string, visit: (w: SelectorWatch) => void): void {
    for (const id of [namespace, ALL_NAMESPACES]) {
      const b = this.buckets.get(id);
      if (!b) continue;
      const seen = new Set<SelectorWatch>(b.keyless);
      for (const s of b.byKey.values()) for (const w of s) seen.add(w);
      seen.forEach(visit);
    }
  }

  /**
   * changed visits each selector whose answer the change of one object's
   * labels changes: it matched before and not after, or the other way round.
   * `old` undefined is a creation, `next` undefined a deletion.
   */
  changed(namespace: string, old: Labels | undefined, next: Labels | undefined, visit: (w: SelectorWatch) => void) {
    for (const id of [namespace, ALL_NAMESPACES]) {
      const b = this.buckets.get(id);
      if (b)
        this.candidates(b, old, next, (w) => {
          if (matchesOrAbsent(w.selector, old) !== matchesOrAbsent(w.selector, next)) visit(w);
        });
    }
  }

  /** matching visits each selector that matches the labels: whose matched object this is. */
  matching(namespace: string, labels: Labels | undefined, visit: (w: SelectorWatch) => void): void {
    for (const id of [namespace, ALL_NAMESPACES]) {
      const b = this.buckets.get(id);
      if (b) this.candidates(b, undefined, labels, (w) => matchesSelector(w.selector, labels) && visit(w));
    }
  }

  private candidates(
    b: WatchBucket,
    old: Labels | undefined,
    next: Labels | undefined,
    visit: (w: SelectorWatch) => void,
  ): void {
    const seen = new Set<SelectorWatch>();
    const each = (w: SelectorWatch) => {
      if (seen.has(w)) return;
      seen.add(w);
      visit(w);
    };
    if (old === undefined || next === undefined) {
      // Created or deleted: any selector naming one of its keys, and the keyless ones.
      const labels = old ?? next ?? NO_LABELS;
      for (const k of Object.keys(labels)) b.byKey.get(k)?.forEach(each);
      b.keyless.forEach(each);
      return;
    }
    for (const k of Object.keys(old)) if (old[k] !== next[k]) b.byKey.get(k)?.forEach(each);
    for (const k of Object.keys(next)) if (!Object.hasOwn(old, k)) b.byKey.get(k)?.forEach(each);
  }
}

function keysOf(selector: Selector): Set<string> {
  return new Set(selector.requirements.map((r) => r.key));
}

function matchesOrAbsent(selector: Selector, labels: Labels | undefined): boolean {
  return labels !== undefined && matchesSelector(selector, labels);
}
