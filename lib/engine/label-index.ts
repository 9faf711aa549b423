import {
  isPositive,
  matchesSelector,
  namespaceOfKey,
  requirementMatches,
  type Labels,
  type ObjectKey,
  type Requirement,
  type Selector,
} from '../model';

const NO_LABELS: Labels = Object.freeze({});

/** SelectorWatch is one registered selector: who to wake, where it looks and what it selects. */
export interface SelectorWatch {
  readonly controller: string;
  readonly referrer: ObjectKey;
  /** The namespace it looks in; undefined: every namespace. */
  readonly namespace: string | undefined;
  readonly selector: Selector;
}

/** WatchEntry is one registered selector and the pass (of a change) that last visited it. */
interface WatchEntry {
  readonly watch: SelectorWatch;
  /**
   * The selector is one In term of one value (`app=web`): it matches exactly the objects of that pair, so
   * every change that reaches it through that pair changes its answer, and no label needs reading.
   */
  readonly flips: boolean;
  visited: number;
}

/** PairNode is one label pair of a namespace: the objects carrying it and the selectors that name it. */
interface PairNode {
  readonly objects: Set<ObjectKey>;
  /**
   * The selectors whose In term on the key lists this value: a change of the key between two values
   * neither term lists leaves such a selector's answer as it was (false both times).
   */
  watches: Set<WatchEntry> | undefined;
}

/** KeyNode is one label key of a namespace: its values, and the selectors naming it otherwise than with In. */
interface KeyNode {
  readonly values: Map<string, PairNode>;
  /** The selectors naming the key with NotIn, Exists or DoesNotExist: any change of the key may change their answer. */
  watches: Set<WatchEntry> | undefined;
}

interface NamespaceNode {
  readonly name: string;
  /** Every indexed object of the namespace: what a selector without an In or Exists term starts from. */
  readonly all: Set<ObjectKey>;
  /** label key → value → the objects carrying that pair, and the selectors naming it. */
  readonly byLabel: Map<string, KeyNode>;
  /** Selectors that can match an object carrying none of their keys: empty, or only NotIn and DoesNotExist terms. */
  keyless: Set<WatchEntry> | undefined;
  /** How many selectors look in this namespace: a node is kept while it holds objects or selectors. */
  watches: number;
}

/**
 * LabelIndex indexes one kind's cached objects by namespace, label key and
 * value, as client-go's cache.Indexer does with a named index function, so a
 * selector is answered from the sets its In and Exists terms name instead
 * of a scan of the kind. Label objects are the cache's own frozen ones.
 *
 * The selectors registered on the kind hang on the same nodes: a selector's
 * In term on each pair it lists, its other terms on their keys, and one
 * with no In or Exists term on its namespace. So the walk that moves an
 * object between pairs also finds, with no lookup of its own, the selectors
 * whose answer the move can change: those naming a changed key, and of those
 * with an In term on it only the ones listing the old or the new value. A
 * creation or deletion reaches those naming one of the object's labels plus
 * the keyless ones (which may match an object without any of their keys).
 * A change allocates nothing: entries carry the pass that last visited
 * them, so one selector reached through two keys is visited once.
 *
 * The selectors outlive the objects: unload drops the objects when the
 * kind's watch ends and keeps the selectors, and load fills the index
 * again from the next watch's snapshot.
 */
export class LabelIndex {
  private namespaces = new Map<string, NamespaceNode>();
  /** Selectors that look in every namespace; it holds no objects, and is looked up by key and value on a change. */
  private anywhere = namespaceNode(ALL_NAMESPACES);
  // Each entry keeps its namespace's node, so a relabel reaches it without looking the namespace up.
  private readonly labelsOf = new Map<ObjectKey, { readonly ns: NamespaceNode; labels: Labels }>();
  private readonly entries = new Map<SelectorWatch, WatchEntry>();
  private pass = 0;
  private isLoaded = false;

  /** How many objects are indexed. */
  get size(): number {
    return this.labelsOf.size;
  }

  /** How many selectors are registered. */
  get watchCount(): number {
    return this.entries.size;
  }

  /** Whether the objects are the kind's cache: set by load, cleared by unload. */
  get loaded(): boolean {
    return this.isLoaded;
  }

  /** load replaces the indexed objects with the cache's, waking no selector: a snapshot, not a change. */
  load(keys: Iterable<ObjectKey>, labelsOf: (key: ObjectKey) => Labels | undefined): void {
    this.unload();
    for (const key of keys) this.set(key, namespaceOfKey(key), labelsOf(key));
    this.isLoaded = true;
  }

  /** unload drops every object and keeps the selectors. */
  unload(): void {
    this.labelsOf.clear();
    this.namespaces = new Map();
    this.anywhere = namespaceNode(ALL_NAMESPACES);
    const watches = [...this.entries.keys()];
    this.entries.clear();
    for (const w of watches) this.watch(w);
    this.isLoaded = false;
  }

  /**
   * set indexes an object under its labels, replacing what was indexed for
   * its key, and returns the labels it was indexed under before. Given
   * `visit`, it visits each selector whose answer this changes: it matched
   * before and not after, or the other way round.
   */
  set(key: ObjectKey, namespace: string, labels: Labels | undefined, visit?: Visit): Labels | undefined {
    const next = labels ?? NO_LABELS;
    const entry = this.labelsOf.get(key);
    if (entry !== undefined && entry.ns.name === namespace) {
      const was = entry.labels;
      if (was === next) return was;
      entry.labels = next;
      this.relabel(entry.ns, key, was, next, visit);
      return was;
    }
    const pass = visit === undefined ? 0 : ++this.pass;
    // A move to another namespace leaves the selectors of every namespace to the one lookup below.
    if (entry !== undefined) this.remove(key, entry, pass, visit, false);
    let ns = this.namespaces.get(namespace);
    if (!ns) this.namespaces.set(namespace, (ns = namespaceNode(namespace)));
    ns.all.add(key);
    this.labelsOf.set(key, { ns, labels: next });
    for (const k in next) {
      const v = next[k];
      if (typeof v === 'string') this.link(ns, key, k, v, pass, undefined, next, visit);
    }
    if (visit === undefined) return entry?.labels;
    this.check(ns.keyless, pass, undefined, next, visit);
    if (this.anywhere.watches > 0) this.lookup(this.anywhere, pass, entry?.labels, next, visit);
    return entry?.labels;
  }

  /** delete drops an object and returns the labels it was indexed under; given `visit`, it visits the selectors that matched it. */
  delete(key: ObjectKey, visit?: Visit): Labels | undefined {
    const entry = this.labelsOf.get(key);
    if (!entry) return undefined;
    this.remove(key, entry, visit === undefined ? 0 : ++this.pass, visit, true);
    return entry.labels;
  }

  private remove(
    key: ObjectKey,
    entry: { readonly ns: NamespaceNode; labels: Labels },
    pass: number,
    visit: Visit | undefined,
    everyNamespace: boolean,
  ): void {
    this.labelsOf.delete(key);
    const { ns, labels } = entry;
    ns.all.delete(key);
    for (const k in labels) {
      const v = labels[k];
      if (typeof v === 'string') this.unlink(ns, key, k, v, pass, labels, undefined, visit);
    }
    if (visit !== undefined) {
      this.check(ns.keyless, pass, labels, undefined, visit);
      if (everyNamespace && this.anywhere.watches > 0) this.lookup(this.anywhere, pass, labels, undefined, visit);
    }
    if (ns.all.size === 0 && ns.watches === 0) this.namespaces.delete(ns.name);
  }

  labels(key: ObjectKey): Labels | undefined {
    return this.labelsOf.get(key)?.labels;
  }

  /** namespaceNames lists the namespaces holding at least one indexed object. */
  *namespaceNames(): IterableIterator<string> {
    for (const ns of this.namespaces.values()) if (ns.all.size > 0) yield ns.name;
  }

  /** keysIn lists the indexed objects of one namespace ('' for a cluster-scoped kind). */
  keysIn(namespace: string): ReadonlySet<ObjectKey> {
    return this.namespaces.get(namespace)?.all ?? EMPTY;
  }

  /** nodes counts the namespaces, keys and pairs the index holds, for tests: what it keeps for nothing shows here. */
  nodes(): number {
    let n = this.namespaces.size;
    for (const ns of [...this.namespaces.values(), this.anywhere])
      for (const node of ns.byLabel.values()) n += 1 + node.values.size;
    return n;
  }

  /** watch registers a selector: from now on, the changes that change its answer visit it. */
  watch(w: SelectorWatch): void {
    if (this.entries.has(w)) return;
    const terms = w.selector.requirements;
    const flips = terms.length === 1 && terms[0]!.operator === 'In' && terms[0]!.values.length === 1;
    const entry: WatchEntry = { watch: w, flips, visited: 0 };
    this.entries.set(w, entry);
    const ns = this.watchedNamespace(w.namespace, true)!;
    ns.watches++;
    if (!terms.some(isPositive)) (ns.keyless ??= new Set()).add(entry);
    for (const r of terms) {
      const node = keyNode(ns, r.key);
      if (r.operator !== 'In') (node.watches ??= new Set()).add(entry);
      else for (const v of r.values) (pairNode(node, v).watches ??= new Set()).add(entry);
    }
  }

  /** unwatch drops a selector, and whatever nodes it alone kept. */
  unwatch(w: SelectorWatch): void {
    const entry = this.entries.get(w);
    if (!entry) return;
    this.entries.delete(w);
    const ns = this.watchedNamespace(w.namespace, false)!;
    ns.watches--;
    if (ns.keyless?.delete(entry) && ns.keyless.size === 0) ns.keyless = undefined;
    for (const r of w.selector.requirements) {
      const node = ns.byLabel.get(r.key);
      if (!node) continue;
      if (r.operator !== 'In') {
        if (node.watches?.delete(entry) && node.watches.size === 0) node.watches = undefined;
        prune(ns, r.key, node);
        continue;
      }
      for (const v of r.values) {
        const pair = node.values.get(v);
        if (!pair) continue;
        if (pair.watches?.delete(entry) && pair.watches.size === 0) pair.watches = undefined;
        prune(ns, r.key, node, v, pair);
      }
    }
    if (ns !== this.anywhere && ns.all.size === 0 && ns.watches === 0) this.namespaces.delete(ns.name);
  }

  /** forEachWatch visits every registered selector once. */
  forEachWatch(visit: Visit): void {
    for (const w of this.entries.keys()) visit(w);
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

  private selectIn(ns: NamespaceNode, selector: Selector, out: ObjectKey[]): void {
    let best: Set<ObjectKey>[] | undefined;
    let bestTerm: Requirement | undefined;
    let bestSize = ns.all.size;
    for (const r of selector.requirements) {
      if (!isPositive(r)) continue;
      const node = ns.byLabel.get(r.key);
      if (!node) return; // nobody carries the key: nothing matches
      const sets: Set<ObjectKey>[] = [];
      let size = 0;
      const named = r.operator === 'In' ? r.values.map((v) => node.values.get(v)) : node.values.values();
      for (const pair of named) {
        if (!pair || pair.objects.size === 0) continue;
        sets.push(pair.objects);
        size += pair.objects.size;
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

  /**
   * relabel moves an object from the pairs it no longer carries to the ones
   * it now carries, and visits the selectors hanging on the pairs and keys
   * it passes through: the hot path of a label change.
   */
  private relabel(ns: NamespaceNode, key: ObjectKey, was: Labels, next: Labels, visit: Visit | undefined): void {
    const pass = visit === undefined ? 0 : ++this.pass;
    for (const k in was) {
      const v = was[k];
      const now = next[k];
      if (now === v || typeof v !== 'string') continue;
      this.unlink(ns, key, k, v, pass, was, next, visit);
      if (typeof now === 'string') this.link(ns, key, k, now, pass, was, next, visit);
    }
    for (const k in next) {
      const v = next[k];
      if (typeof v === 'string' && typeof was[k] !== 'string') this.link(ns, key, k, v, pass, was, next, visit);
    }
    if (visit !== undefined && this.anywhere.watches > 0) this.lookup(this.anywhere, pass, was, next, visit);
  }

  /** link adds an object under a key it did not carry, and visits the selectors of the pair and of the key. */
  private link(
    ns: NamespaceNode,
    key: ObjectKey,
    k: string,
    v: string,
    pass: number,
    old: Labels | undefined,
    next: Labels,
    visit: Visit | undefined,
  ): void {
    const node = keyNode(ns, k);
    const pair = pairNode(node, v);
    pair.objects.add(key);
    if (visit === undefined) return;
    this.check(pair.watches, pass, old, next, visit);
    this.check(node.watches, pass, old, next, visit);
  }

  /** unlink removes an object from a pair it no longer carries, visits the selectors of the pair and of the key, and drops what is left empty. */
  private unlink(
    ns: NamespaceNode,
    key: ObjectKey,
    k: string,
    v: string,
    pass: number,
    old: Labels,
    next: Labels | undefined,
    visit: Visit | undefined,
  ): void {
    const node = ns.byLabel.get(k)!;
    const pair = node.values.get(v)!;
    pair.objects.delete(key);
    if (visit !== undefined) {
      this.check(pair.watches, pass, old, next, visit);
      this.check(node.watches, pass, old, next, visit);
    }
    prune(ns, k, node, v, pair);
  }

  /**
   * lookup visits the selectors of a node that holds no objects (those of every namespace) that a change
   * reaches. A creation walks its labels as if the object had none before, a deletion as if it has none after.
   */
  private lookup(
    ns: NamespaceNode,
    pass: number,
    old: Labels | undefined,
    next: Labels | undefined,
    visit: Visit,
  ): void {
    const from = old ?? NO_LABELS;
    const to = next ?? NO_LABELS;
    for (const k in from) {
      const was = from[k]!;
      const now = to[k];
      if (was === now) continue;
      const node = ns.byLabel.get(k);
      if (!node) continue;
      this.check(node.values.get(was)?.watches, pass, old, next, visit);
      if (typeof now === 'string') this.check(node.values.get(now)?.watches, pass, old, next, visit);
      this.check(node.watches, pass, old, next, visit);
    }
    for (const k in to) {
      if (typeof from[k] === 'string') continue;
      const node = ns.byLabel.get(k);
      if (!node) continue;
      this.check(node.values.get(to[k]!)?.watches, pass, old, next, visit);
      this.check(node.watches, pass, old, next, visit);
    }
    if (old === undefined || next === undefined) this.check(ns.keyless, pass, old, next, visit);
  }

  /** check visits the entries whose answer differs between the two label sets, each once per pass; a method, so a change creates no closure. */
  private check(
    entries: Set<WatchEntry> | undefined,
    pass: number,
    old: Labels | undefined,
    next: Labels | undefined,
    visit: Visit,
  ): void {
    if (entries === undefined) return;
    for (const e of entries) {
      if (e.visited === pass) continue;
      e.visited = pass;
      // A one-pair selector is reached only through its pair, which one side carries and the other does not.
      const s = e.watch.selector;
      if (e.flips || matchesOrAbsent(s, old) !== matchesOrAbsent(s, next)) visit(e.watch);
    }
  }

  private watchedNamespace(namespace: string | undefined, create: boolean): NamespaceNode | undefined {
    if (namespace === undefined) return this.anywhere;
    let ns = this.namespaces.get(namespace);
    if (!ns && create) this.namespaces.set(namespace, (ns = namespaceNode(namespace)));
    return ns;
  }
}

type Visit = (w: SelectorWatch) => void;

const ALL_NAMESPACES = '\u0000*';
const EMPTY: ReadonlySet<ObjectKey> = new Set();

function namespaceNode(name: string): NamespaceNode {
  return { name, all: new Set(), byLabel: new Map(), keyless: undefined, watches: 0 };
}

function keyNode(ns: NamespaceNode, k: string): KeyNode {
  let node = ns.byLabel.get(k);
  if (!node) ns.byLabel.set(k, (node = { values: new Map(), watches: undefined }));
  return node;
}

function pairNode(node: KeyNode, v: string): PairNode {
  let pair = node.values.get(v);
  if (!pair) node.values.set(v, (pair = { objects: new Set(), watches: undefined }));
  return pair;
}

/** prune drops a pair that holds neither objects nor selectors, and then its key if nothing is left under it. */
function prune(ns: NamespaceNode, k: string, node: KeyNode, v?: string, pair?: PairNode): void {
  if (pair !== undefined && pair.objects.size === 0 && pair.watches === undefined) node.values.delete(v!);
  if (node.values.size === 0 && node.watches === undefined) ns.byLabel.delete(k);
}

/** matchesOthers is matchesSelector for labels already known to satisfy the term `known`. */
function matchesOthers(terms: readonly Requirement[], known: Requirement, labels: Labels): boolean {
  for (const r of terms) if (r !== known && !requirementMatches(r, labels)) return false;
  return true;
}

function matchesOrAbsent(selector: Selector, labels: Labels | undefined): boolean {
  return labels !== undefined && matchesSelector(selector, labels);
}
