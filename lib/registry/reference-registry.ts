import {
  RefwatchError,
  isPlainKey,
  isPlainReference,
  kindOfKey,
  parseKey,
  validateReference,
  type ObjectKey,
  type Reference,
} from '../model';

/**
 * Referrer is one (controller, referrer key) pair: the unit whose references
 * the registry tracks. The registry hands out one stable object per pair, so
 * callers may use it as a map key.
 */
export interface Referrer {
  readonly controller: string;
  readonly key: ObjectKey;
}

/** RegistryDelta is what one call changed: references added and removed, multiset-wise. */
export interface RegistryDelta {
  readonly referrer: Referrer;
  readonly added: readonly Reference[];
  readonly removed: readonly Reference[];
}

/** KindEvent fires when a referent kind gains its first reference or loses its last one. */
export interface KindEvent {
  kind: string; // `Kind.group`
  type: 'active' | 'idle';
}

export type RegistryListener = {
  onKind?(event: KindEvent): void;
  onDelta?(delta: RegistryDelta): void;
};

interface KindNode {
  kind: string;
  edges: number; // references to this kind, with multiplicity
  referents: Set<ObjectKey>;
}

interface ReferentNode {
  key: ObjectKey;
  kind: KindNode;
  /**
   * Each referrer of the referent once: the only one itself, as most referents have, or a set once there are
   * two (a set and its table for each referent would be most of what the reverse index holds).
   */
  referrers: Entry | Set<Entry>;
  /** The referrers that name it from more than one field: how many times beyond the first. Rare; made on the first. */
  extra?: Map<Entry, number>;
}

interface Entry extends Referrer {
  // Parallel arrays keep one pointer per edge instead of one object per edge.
  referents: ObjectKey[];
  fieldPaths: string[];
  /**
   * Set when addReference appended to the arrays: an array grown by push keeps room for 16 more, which
   * setReferences or trim gives back once the reconcile has settled its set.
   */
  appended: boolean;
}

const NONE: readonly Reference[] = Object.freeze([]);
const NO_KINDS: string[] = [];

/**
 * ReferenceRegistry maps referrers to the referents they declared, and back.
 * setReferences replaces a referrer's whole set (invariant 2) and returns the
 * delta; every operation costs O(the referrer's old and new set), never
 * O(registry). References are a multiset: one referent named from two fields
 * counts twice, so dropping one field keeps the reference alive.
 */
export class ReferenceRegistry {
  private readonly byController = new Map<string, Map<ObjectKey, Entry>>();
  // referent -> its node: the one interned key string and (referrer entry -> multiplicity)
  private readonly reverse = new Map<ObjectKey, ReferentNode>();
  // kind -> its edge count and referents; present only while the kind has references
  private readonly kinds = new Map<string, KindNode>();
  private readonly validFieldPaths = new Set<string>();
  private readonly listeners = new Set<RegistryListener>();
  private edges = 0;
  private referrerTotal = 0;

  /** subscribe registers a listener for kind activity and deltas; returns its unsubscribe. */
  subscribe(listener: RegistryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * setReferences replaces the referrer's references with refs and returns the
   * delta. An invalid ref fails the whole call with a RefwatchError naming it;
   * nothing changes then.
   */
  setReferences(controller: string, referrer: ObjectKey, refs: readonly Reference[]): RegistryDelta {
    if (!Array.isArray(refs)) {
      throw new RefwatchError('InvalidReferences', 'references must be an array of {referent, fieldPath}', {
        field: 'references',
        example: '[{"referent":"Secret/shop/db","fieldPath":"spec.secretRef"}]',
      });
    }
    let entry = this.byController.get(controller)?.get(referrer);
    if (!entry) {
      this.validate(refs, refs);
      if (refs.length === 0) return { referrer: { controller, key: referrer }, added: NONE, removed: NONE };
      entry = this.createEntry(controller, referrer);
    }
    const { added, removed, reordered } = diffMultiset(entry.referents, entry.fieldPaths, refs);
    if (added.length === 0 && removed.length === 0) {
      // The same references in another order: the set takes the order stated, which a reconcile's positions
      // rely on (indexOf's cursor, the wake masks Controller keeps by position). A restatement in the same
      // order, every reconcile's usual end, writes nothing.
      if (reordered) this.writeSet(entry, refs, undefined, undefined);
      compact(entry);
      return { referrer: entry, added: NONE, removed: NONE };
    }
    // Only added references are new to the registry; the rest were validated when they came in. The node
    // the check finds for the first added referent is the one it is linked to, and its key the copy kept.
    const firstNode = this.validate(refs, added);

    // Kinds crossing 0↔1 are rare; these stay shared empty arrays until one does.
    this.activated = NO_KINDS;
    this.idled = NO_KINDS;
    // Linked before the removed are unlinked: a referent that moves from one field to another keeps its node.
    let firstKey: ObjectKey | undefined;
    for (let k = 0; k < added.length; k++) {
      const key = this.link(entry, added[k]!.referent, k === 0 ? firstNode : undefined);
      if (k === 0) firstKey = key;
    }
    for (const r of removed) this.unlink(entry, r.referent);
    const activated = this.activated;
    const idled = this.idled;
    if (entry.referents.length !== refs.length || entry.appended) {
      entry.referents = new Array<ObjectKey>(refs.length);
      entry.fieldPaths = new Array<string>(refs.length);
      entry.appended = false;
    }
    this.writeSet(entry, refs, added[0], firstKey);
    if (entry.referents.length === 0) this.dropEntry(entry);

    const delta: RegistryDelta = { referrer: entry, added, removed };
    if (this.listeners.size > 0) this.notify(delta, activated, idled);
    return delta;
  }

  /**
   * addReference adds one reference to the referrer's current set. The engine
   * uses it to subscribe before it reads (invariant 3); the reconcile's final
   * setReferences then settles the whole set.
   */
  addReference(controller: string, referrer: ObjectKey, ref: Reference): RegistryDelta {
    // Appended in place: a reconcile declaring n matches one by one costs O(n), not a copy of the set per match.
    // A referrer's first reference makes its entry here too, as setReferences would, so that a reconcile that
    // states its references in order never needs setReferences (see trim).
    const node = this.knownNode(ref);
    let entry = this.byController.get(controller)?.get(referrer);
    if (node === undefined) this.validateAt(ref, entry?.referents.length ?? 0);
    entry ??= this.createEntry(controller, referrer);
    this.activated = NO_KINDS;
    this.idled = NO_KINDS;
    entry.referents.push(this.link(entry, ref.referent, node));
    entry.fieldPaths.push(ref.fieldPath);
    entry.appended = true;
    const delta: RegistryDelta = { referrer: entry, added: [ref], removed: NONE };
    if (this.listeners.size > 0) this.notify(delta, this.activated, NO_KINDS);
    return delta;
  }

  /**
   * writeSet writes refs into the entry's arrays, in their order; the arrays are refs' length already. A
   * referent's key is the registry's copy: `known`'s, given for the added reference `knownRef`, else looked up.
   */
  private writeSet(
    entry: Entry,
    refs: readonly Reference[],
    knownRef: Reference | undefined,
    known: ObjectKey | undefined,
  ): void {
    for (let i = 0; i < refs.length; i++) {
      const r = refs[i]!;
      if (entry.referents[i] !== r.referent)
        entry.referents[i] = r === knownRef ? known! : this.internReferent(r.referent);
      if (entry.fieldPaths[i] !== r.fieldPath) entry.fieldPaths[i] = r.fieldPath;
    }
  }

  /** clear drops every reference of the referrer. */
  clear(controller: string, referrer: ObjectKey): RegistryDelta {
    return this.setReferences(controller, referrer, NONE);
  }

  /** referencesOf returns the referrer's current references, in declaration order. */
  referencesOf(controller: string, referrer: ObjectKey): Reference[] {
    const e = this.byController.get(controller)?.get(referrer);
    if (!e) return [];
    return e.referents.map((referent, i) => ({ referent, fieldPath: e.fieldPaths[i]! }));
  }

  /** referrersOf returns every referrer that references the referent. */
  referrersOf(referent: ObjectKey): Referrer[] {
    const node = this.reverse.get(referent);
    if (!node) return [];
    return node.referrers instanceof Set ? [...node.referrers] : [node.referrers];
  }

  /** forEachReferrerOf visits each referrer of the referent without allocating; the dispatch hot path. */
  forEachReferrerOf(referent: ObjectKey, visit: (r: Referrer) => void): number {
    const node = this.reverse.get(referent);
    if (!node) return 0;
    const referrers = node.referrers;
    if (!(referrers instanceof Set)) {
      visit(referrers);
      return 1;
    }
    for (const r of referrers) visit(r);
    return referrers.size;
  }

  /** everyReferentOf says whether test holds for each referent the referrer references (true for none), without allocating. */
  everyReferentOf(controller: string, referrer: ObjectKey, test: (referent: ObjectKey) => boolean): boolean {
    const e = this.byController.get(controller)?.get(referrer);
    if (!e) return true;
    for (const referent of e.referents) if (!test(referent)) return false;
    return true;
  }

  /** multiplicity returns how many times the referrer references the referent. */
  multiplicity(controller: string, referrer: ObjectKey, referent: ObjectKey): number {
    const e = this.byController.get(controller)?.get(referrer);
    const node = e && this.reverse.get(referent);
    return node && hasReferrer(node, e) ? 1 + (node.extra?.get(e) ?? 0) : 0;
  }

  /**
   * indexOf is the position of one occurrence of (referent, fieldPath) in the
   * referrer's current set, or -1 when the set holds none. It looks at `from`
   * first: a reconcile restating its set in the order it had finds each
   * reference there without a scan; a referent the referrer does not
   * reference at all is answered from the reverse index.
   */
  indexOf(controller: string, referrer: ObjectKey, ref: Reference, from = 0): number {
    const e = this.byController.get(controller)?.get(referrer);
    if (!e) return -1;
    if (e.referents[from] === ref.referent && e.fieldPaths[from] === ref.fieldPath) return from;
    const node = this.reverse.get(ref.referent);
    if (node === undefined || !hasReferrer(node, e)) return -1;
    for (let i = 0; i < e.referents.length; i++)
      if (e.referents[i] === ref.referent && e.fieldPaths[i] === ref.fieldPath) return i;
    return -1;
  }

  /** multiplicityAt counts how often the referrer's current set holds exactly this (referent, fieldPath). */
  multiplicityAt(controller: string, referrer: ObjectKey, ref: Reference): number {
    const e = this.byController.get(controller)?.get(referrer);
    if (!e) return 0;
    let n = 0;
    for (let i = 0; i < e.referents.length; i++)
      if (e.referents[i] === ref.referent && e.fieldPaths[i] === ref.fieldPath) n++;
    return n;
  }

  /** referrerCountOf is the number of distinct referrers of the referent. */
  referrerCountOf(referent: ObjectKey): number {
    const node = this.reverse.get(referent);
    return node === undefined ? 0 : node.referrers instanceof Set ? node.referrers.size : 1;
  }

  /** referentKey is the registry's copy of a referenced referent's key (one string however often it is named), else the key given. */
  referentKey(referent: ObjectKey): ObjectKey {
    return this.internReferent(referent);
  }

  /** referenceCountOf is the number of references in the referrer's current set, each occurrence counted. */
  referenceCountOf(controller: string, referrer: ObjectKey): number {
    return this.byController.get(controller)?.get(referrer)?.referents.length ?? 0;
  }

  isReferenced(referent: ObjectKey): boolean {
    return this.reverse.has(referent);
  }

  /** kindCount is the number of references (with multiplicity) to referents of the kind. */
  kindCount(kind: string): number {
    return this.kinds.get(kind)?.edges ?? 0;
  }

  /** activeKinds lists the kinds with at least one reference. */
  activeKinds(): string[] {
    return [...this.kinds.keys()];
  }

  /** referentsOfKind lists the referenced referents of one kind. */
  referentsOfKind(kind: string): ObjectKey[] {
    const k = this.kinds.get(kind);
    return k ? [...k.referents] : [];
  }

  referrers(controller?: string): Referrer[] {
    const out: Referrer[] = [];
    for (const [name, m] of this.byController)
      if (controller === undefined || name === controller) out.push(...m.values());
    return out;
  }

  get edgeCount(): number {
    return this.edges;
  }
  get referrerCount(): number {
    return this.referrerTotal;
  }
  get referentCount(): number {
    return this.reverse.size;
  }

  /** validate throws for the first invalid reference of toCheck; it returns the first one's referent node, if it has one. */
  private validate(all: readonly Reference[], toCheck: readonly Reference[]): ReferentNode | undefined {
    let first: ReferentNode | undefined;
    for (let k = 0; k < toCheck.length; k++) {
      const r = toCheck[k]!;
      const node = this.knownNode(r);
      if (node === undefined) this.validateAt(r, all.indexOf(r));
      else if (k === 0) first = node;
    }
    return first;
  }

  /**
   * knownNode is the node of a reference validated before: its referent is in the reverse index and its field
   * path was seen. Undefined for any other reference, which must be validated.
   */
  private knownNode(r: Reference): ReferentNode | undefined {
    if (!r || typeof r !== 'object') return undefined;
    const node = this.reverse.get(r.referent);
    return node !== undefined && this.validFieldPaths.has(r.fieldPath) ? node : undefined;
  }

  private validateAt(r: Reference, index: number): void {
    if (this.knownNode(r)) return;
    // Checked in one pass first: the message's field name and the full parse are for a reference that fails it.
    if (!isPlainReference(r)) {
      const v = validateReference(r, `references[${index}]`);
      if (!v.ok) throw v.error;
    }
    this.validFieldPaths.add(r.fieldPath);
  }

  /**
   * trim settles a referrer's set that addReference grew and that is final as it stands, as setReferences
   * with the same set would: the arrays pushed to are copied to their length, so a referrer holds no spare room.
   */
  trim(controller: string, referrer: ObjectKey): void {
    const entry = this.byController.get(controller)?.get(referrer);
    if (entry) compact(entry);
  }

  /** createEntry makes a referrer's entry, once its key and controller name are checked. */
  private createEntry(controller: string, key: ObjectKey): Entry {
    if (!isPlainKey(key)) {
      const parsed = parseKey(key, 'referrer');
      if (!parsed.ok) throw parsed.error;
    }
    if (controller === '')
      throw new RefwatchError(
        'InvalidController',
        'controller name is empty: name the controller that declares these references',
        { field: 'controller', example: 'app-controller' },
      );
    let m = this.byController.get(controller);
    if (!m) this.byController.set(controller, (m = new Map()));
    const entry: Entry = { controller, key, referents: [], fieldPaths: [], appended: false };
    m.set(key, entry);
    this.referrerTotal++;
    return entry;
  }

  private dropEntry(entry: Entry): void {
    const m = this.byController.get(entry.controller)!;
    m.delete(entry.key);
    if (m.size === 0) this.byController.delete(entry.controller);
    this.referrerTotal--;
  }

  private internReferent(key: ObjectKey): ObjectKey {
    // Entries share the reverse index's copy of each referent key string.
    return this.reverse.get(key)?.key ?? key;
  }

  private activated: string[] = NO_KINDS;
  private idled: string[] = NO_KINDS;

  /** link adds one edge from entry to referent, whose node the caller may have found already; it returns the key kept. */
  private link(entry: Entry, referent: ObjectKey, found?: ReferentNode): ObjectKey {
    let node = found ?? this.reverse.get(referent);
    if (!node) {
      const kindName = kindOfKey(referent);
      let kind = this.kinds.get(kindName);
      if (!kind) this.kinds.set(kindName, (kind = { kind: kindName, edges: 0, referents: new Set() }));
      node = { key: referent, kind, referrers: entry, extra: undefined };
      this.reverse.set(referent, node);
      kind.referents.add(referent);
    } else if (hasReferrer(node, entry)) (node.extra ??= new Map()).set(entry, (node.extra.get(entry) ?? 0) + 1);
    else if (node.referrers instanceof Set) node.referrers.add(entry);
    else node.referrers = new Set([node.referrers, entry]);
    this.edges++;
    if (++node.kind.edges === 1) this.activated = [...this.activated, node.kind.kind];
    return node.key;
  }

  private unlink(entry: Entry, referent: ObjectKey): void {
    const node = this.reverse.get(referent)!;
    const extra = node.extra?.get(entry);
    let gone = false;
    if (extra === undefined) gone = dropReferrer(node, entry);
    else if (extra > 1) node.extra!.set(entry, extra - 1);
    else if (node.extra!.delete(entry) && node.extra!.size === 0) node.extra = undefined;
    const kind = node.kind;
    if (gone) {
      this.reverse.delete(referent);
      kind.referents.delete(referent);
    }
    this.edges--;
    if (--kind.edges === 0) {
      this.kinds.delete(kind.kind);
      this.idled = [...this.idled, kind.kind];
    }
  }

  private notify(delta: RegistryDelta, activated: string[], idled: string[]): void {
    for (const l of this.listeners) {
      l.onDelta?.(delta);
      // A kind both idled and re-activated within one call stays active: report neither.
      for (const kind of idled) if (!activated.includes(kind)) l.onKind?.({ kind, type: 'idle' });
      for (const kind of activated) if (!idled.includes(kind)) l.onKind?.({ kind, type: 'active' });
    }
  }
}

/** hasReferrer says whether the entry is among the node's referrers. */
function hasReferrer(node: ReferentNode, entry: Entry): boolean {
  const r = node.referrers;
  return r instanceof Set ? r.has(entry) : r === entry;
}

/**
 * dropReferrer takes the entry out of the node's referrers, a set of one going back to its only member; it
 * says whether the node is left with none.
 */
function dropReferrer(node: ReferentNode, entry: Entry): boolean {
  const r = node.referrers;
  if (!(r instanceof Set)) return r === entry;
  r.delete(entry);
  if (r.size === 1) node.referrers = r.values().next().value!;
  return r.size === 0;
}

/**
 * diffMultiset compares the old (referents, fieldPaths) with the new refs as
 * multisets of (referent, fieldPath). Small sets use a quadratic scan, which
 * beats hashing for the usual handful of references. `reordered` says whether
 * a reference both sets hold changed position (always true for a hashed diff).
 */
const scratch = new Uint8Array(256);

function diffMultiset(
  oldReferents: ObjectKey[],
  oldPaths: string[],
  refs: readonly Reference[],
): { added: Reference[]; removed: Reference[]; reordered: boolean } {
  const n = oldReferents.length;
  const m = refs.length;
  if (n === 0) return { added: m === 0 ? [] : refs.slice(), removed: [], reordered: false };
  if (m === 0)
    return {
      added: [],
      removed: oldReferents.map((referent, i) => ({ referent, fieldPath: oldPaths[i]! })),
      reordered: false,
    };
  if (n * m <= 256) {
    const used = scratch;
    used.fill(0, 0, n);
    const added: Reference[] = [];
    let reordered = false;
    for (let j = 0; j < m; j++) {
      const r = refs[j]!;
      let found = -1;
      for (let i = 0; i < n; i++) {
        if (used[i] === 0 && oldReferents[i] === r.referent && oldPaths[i] === r.fieldPath) {
          found = i;
          break;
        }
      }
      if (found < 0) added.push(r);
      else {
        used[found] = 1;
        if (found !== j) reordered = true;
      }
    }
    const removed: Reference[] = [];
    for (let i = 0; i < n; i++)
      if (used[i] === 0) removed.push({ referent: oldReferents[i]!, fieldPath: oldPaths[i]! });
    return { added, removed, reordered };
  }
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const id = oldReferents[i]! + '\u0000' + oldPaths[i]!;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const added: Reference[] = [];
  for (const r of refs) {
    const id = r.referent + '\u0000' + r.fieldPath;
    const c = counts.get(id) ?? 0;
    if (c > 0) counts.set(id, c - 1);
    else added.push(r);
  }
  const removed: Reference[] = [];
  for (const [id, c] of counts) {
    if (c === 0) continue;
    const sep = id.indexOf('\u0000');
    for (let k = 0; k < c; k++) removed.push({ referent: id.slice(0, sep), fieldPath: id.slice(sep + 1) });
  }
  // Positions are not compared here: a large set is taken as possibly reordered, and writeSet writes only what differs.
  return { added, removed, reordered: true };
}

/** compact copies the arrays addReference pushed to, so they hold no spare room. */
function compact(entry: Entry): void {
  if (!entry.appended) return;
  entry.referents = entry.referents.slice();
  entry.fieldPaths = entry.fieldPaths.slice();
  entry.appended = false;
}
