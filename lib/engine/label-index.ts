import {
  isPositive,
  matchesSelector,
  requirementMatches,
  type Labels,
  type ObjectKey,
  type Requirement,
  type Selector,
} from '../model';

const NO_LABELS: Labels = Object.freeze({});

interface NamespaceLabels {
  readonly name: string;
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
  // Each entry keeps its namespace's sets, so a relabel reaches them without looking the namespace up.
  private readonly labelsOf = new Map<ObjectKey, { readonly ns: NamespaceLabels; labels: Labels }>();

  get size(): number {
    return this.labelsOf.size;
  }

  /** set indexes an object under its labels, replacing what was indexed for its key, and returns those labels. */
  set(key: ObjectKey, namespace: string, labels: Labels | undefined): Labels | undefined {
    const next = labels ?? NO_LABELS;
    const prev = this.labelsOf.get(key);
    if (prev && prev.labels === next && prev.ns.name === namespace) return next;
    if (prev && prev.ns.name === namespace) {
      // A relabel touches only the pairs that changed, and keeps the entry: nothing is allocated for it.
      const ns = prev.ns;
      const was = prev.labels;
      for (const k in was) if (next[k] !== was[k]) this.unlink(ns, key, k, was[k]!);
      for (const k in next) if (was[k] !== next[k]) this.link(ns, key, k, next[k]!);
      prev.labels = next;
      return was;
    }
    if (prev) this.delete(key);
    let ns = this.namespaces.get(namespace);
    if (!ns) this.namespaces.set(namespace, (ns = { name: namespace, all: new Set(), byLabel: new Map() }));
    ns.all.add(key);
    for (const k in next) this.link(ns, key, k, next[k]!);
    this.labelsOf.set(key, { ns, labels: next });
    return prev?.labels;
  }

  /** delete drops an object from the index and returns the labels it was indexed under. */
  delete(key: ObjectKey): Labels | undefined {
    const prev = this.labelsOf.get(key);
    if (!prev) return undefined;
    this.labelsOf.delete(key);
    const ns = prev.ns;
    ns.all.delete(key);
    for (const k in prev.labels) this.unlink(ns, key, k, prev.labels[k]!);
    if (ns.all.size === 0) this.namespaces.delete(ns.name);
    return prev.labels;
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
    let bestTerm: Requirement | undefined;
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
        bestTerm = r;
        bestSize = size;
      }
    }
    const terms = selector.requirements;
    if (best === undefined) {
      for (const key of ns.all) if (matchesSelector(selector, this.labelsOf.get(key)!.labels)) out.push(key);
      return;
    }
    // Every candidate satisfies the term its set was taken from: a one-term selector (a Service's, a
    // matchLabels of one pair) reads no labels at all, and others check only their remaining terms.
    if (terms.length === 1) {
      for (const set of best) for (const key of set) out.push(key);
      return;
    }
    for (const set of best)
      for (const key of set) if (matchesOthers(terms, bestTerm!, this.labelsOf.get(key)!.labels)) out.push(key);
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

/** matchesOthers is matchesSelector for labels already known to satisfy the term `known`. */
function matchesOthers(terms: readonly Requirement[], known: Requirement, labels: Labels): boolean {
  for (const r of terms) if (r !== known && !requirementMatches(r, labels)) return false;
  return true;
}

/** SelectorWatch is one registered selector: who to wake, where it looks and what it selects. */
export interface SelectorWatch {
  readonly controller: string;
  readonly referrer: ObjectKey;
  /** The namespace it looks in; undefined: every namespace. */
  readonly namespace: string | undefined;
  readonly selector: Selector;
}

/** WatchEntry is one registered selector and the pass (of changed or matching) that last visited it. */
interface WatchEntry {
  readonly watch: SelectorWatch;
  /**
   * The selector is one In term of one value (`app=web`): it matches exactly the objects of that pair, so
   * every change that reaches it through that pair changes its answer, and no label needs reading.
   */
  readonly flips: boolean;
  visited: number;
}

interface WatchBucket {
  /**
   * label key → value → the selectors whose In term on that key lists the
   * value: a change of the key between two values neither term lists leaves
   * such a selector's answer as it was (false both times).
   */
  byValue: Map<string, Map<string, Set<WatchEntry>>>;
  /** label key → the selectors naming it with NotIn, Exists or DoesNotExist: any change of the key may change their answer. */
  byKey: Map<string, Set<WatchEntry>>;
  /** Selectors that can match an object carrying none of their keys: empty, or only NotIn and DoesNotExist terms. */
  keyless: Set<WatchEntry>;
}

const ALL_NAMESPACES = '\u0000*';

/**
 * SelectorWatches indexes registered selectors by the label keys they name,
 * and In terms by their values too, so a label change re-checks only the
 * selectors whose answer it can change: those naming a changed key, and of
 * those with an In term on it only the ones listing the old or the new
 * value. An object's creation or deletion re-checks those naming one of its
 * labels plus the keyless ones (which may match an object without any of
 * their keys). A pass allocates nothing: entries carry the pass that last
 * visited them, so one selector reached through two keys is visited once.
 */
export class SelectorWatches {
  private readonly buckets = new Map<string, WatchBucket>();
  private readonly entries = new Map<SelectorWatch, WatchEntry>();
  private pass = 0;
  /** How many selectors passes have re-checked (matched against labels) so far: what a change costs, for tests and benchmarks. */
  rechecks = 0;

  get size(): number {
    return this.entries.size;
  }

  add(w: SelectorWatch): void {
    if (this.entries.has(w)) return;
    const terms = w.selector.requirements;
    const flips = terms.length === 1 && terms[0]!.operator === 'In' && terms[0]!.values.length === 1;
    const entry: WatchEntry = { watch: w, flips, visited: 0 };
    this.entries.set(w, entry);
    const id = w.namespace ?? ALL_NAMESPACES;
    let b = this.buckets.get(id);
    if (!b) this.buckets.set(id, (b = { byKey: new Map(), byValue: new Map(), keyless: new Set() }));
    if (!w.selector.requirements.some(isPositive)) b.keyless.add(entry);
    for (const r of w.selector.requirements) {
      if (r.operator !== 'In') {
        addTo(b.byKey, r.key, entry);
        continue;
      }
      let values = b.byValue.get(r.key);
      if (!values) b.byValue.set(r.key, (values = new Map()));
      for (const v of r.values) addTo(values, v, entry);
    }
  }

  delete(w: SelectorWatch): void {
    const entry = this.entries.get(w);
    if (!entry) return;
    this.entries.delete(w);
    const id = w.namespace ?? ALL_NAMESPACES;
    const b = this.buckets.get(id)!;
    b.keyless.delete(entry);
    for (const r of w.selector.requirements) {
      if (r.operator !== 'In') {
        deleteFrom(b.byKey, r.key, entry);
        continue;
      }
      const values = b.byValue.get(r.key);
      if (!values) continue;
      for (const v of r.values) deleteFrom(values, v, entry);
      if (values.size === 0) b.byValue.delete(r.key);
    }
    if (b.keyless.size === 0 && b.byKey.size === 0 && b.byValue.size === 0) this.buckets.delete(id);
  }

  /** forEachWatch visits every registered selector once. */
  forEachWatch(visit: (w: SelectorWatch) => void): void {
    for (const w of this.entries.keys()) visit(w);
  }

  /**
   * changed visits each selector whose answer the change of one object's
   * labels changes: it matched before and not after, or the other way round.
   * `old` undefined is a creation, `next` undefined a deletion.
   */
  changed(namespace: string, old: Labels | undefined, next: Labels | undefined, visit: (w: SelectorWatch) => void) {
    const pass = ++this.pass;
    const own = this.buckets.get(namespace);
    if (own) this.changedIn(own, pass, old, next, visit);
    const all = this.buckets.get(ALL_NAMESPACES);
    if (all) this.changedIn(all, pass, old, next, visit);
  }

  /** matching visits each selector that matches the labels: whose matched object this is. */
  matching(namespace: string, labels: Labels | undefined, visit: (w: SelectorWatch) => void): void {
    this.changed(namespace, undefined, labels, visit);
  }

  private changedIn(
    b: WatchBucket,
    pass: number,
    old: Labels | undefined,
    next: Labels | undefined,
    visit: (w: SelectorWatch) => void,
  ): void {
    if (old === undefined || next === undefined) {
      // Created or deleted: any selector naming one of its labels, and the keyless ones.
      const labels = old ?? next ?? NO_LABELS;
      for (const k in labels) {
        this.check(b.byValue.get(k)?.get(labels[k]!), pass, old, next, visit);
        this.check(b.byKey.get(k), pass, old, next, visit);
      }
      this.check(b.keyless, pass, old, next, visit);
      return;
    }
    for (const k in old) {
      const was = old[k]!;
      const now = Object.hasOwn(next, k) ? next[k] : undefined;
      if (was === now) continue;
      const values = b.byValue.get(k);
      if (values) {
        this.check(values.get(was), pass, old, next, visit);
        if (now !== undefined) this.check(values.get(now), pass, old, next, visit);
      }
      this.check(b.byKey.get(k), pass, old, next, visit);
    }
    for (const k in next) {
      if (Object.hasOwn(old, k)) continue;
      this.check(b.byValue.get(k)?.get(next[k]!), pass, old, next, visit);
      this.check(b.byKey.get(k), pass, old, next, visit);
    }
  }

  /** check visits the entries whose answer differs between the two label sets, each once per pass; a method, so a pass creates no closure. */
  private check(
    entries: Set<WatchEntry> | undefined,
    pass: number,
    old: Labels | undefined,
    next: Labels | undefined,
    visit: (w: SelectorWatch) => void,
  ): void {
    if (!entries) return;
    for (const e of entries) {
      if (e.visited === pass) continue;
      e.visited = pass;
      this.rechecks++;
      // A one-pair selector is reached only through its pair, which one side carries and the other does not.
      const s = e.watch.selector;
      if (e.flips || matchesOrAbsent(s, old) !== matchesOrAbsent(s, next)) visit(e.watch);
    }
  }
}

function addTo<K>(m: Map<K, Set<WatchEntry>>, k: K, entry: WatchEntry): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(entry);
}

function deleteFrom<K>(m: Map<K, Set<WatchEntry>>, k: K, entry: WatchEntry): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(entry);
  if (s.size === 0) m.delete(k);
}

function matchesOrAbsent(selector: Selector, labels: Labels | undefined): boolean {
  return labels !== undefined && matchesSelector(selector, labels);
}
