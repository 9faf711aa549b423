import { z } from 'zod';
import type {
  AnyEntity,
  Change,
  ChangeFilter,
  ChangeLog,
  EntityKind,
  ReferenceEntity,
  ReferentEntity,
  ReferrerEntity,
  SnapshotRows,
} from '../lib/changelog';
import { parseKey, parseKindKey, validateNamespace } from '../lib/model';

/**
 * What one dashboard view asks for: GET /api/v1/snapshot and GET
 * /api/v1/stream take the same query, and a stream sends only changes
 * inside it.
 *   namespace, kind  entities with that namespace or kind field
 *   q                entities naming an object whose key contains q (any case)
 *   object           that object, the references from or to it, and their other ends
 *   stuck=1          the stuck referrers, their references and referents
 */
export const scopeShape = {
  namespace: z
    .string()
    .optional()
    .refine((v) => v === undefined || validateNamespace(v).ok, 'must be a namespace name such as shop'),
  kind: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || parseKindKey(v).ok,
      'must be a kind such as Database.demo.refwatch.dev or Secret',
    ),
  q: z.string().max(253, 'must be at most 253 characters: part of an object key such as shop/orders').optional(),
  object: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || parseKey(v, 'object').ok,
      'must be an object key such as App.demo.refwatch.dev/shop/web or Secret/shop/db-password',
    ),
  stuck: z
    .enum(['1', 'true'], { error: 'must be 1 to scope to the stuck referrers; leave it out otherwise' })
    .optional(),
};

export type ScopeQuery = {
  namespace?: string | undefined;
  kind?: string | undefined;
  q?: string | undefined;
  object?: string | undefined;
  stuck?: string | undefined;
};

/** What the stuck scope needs from the summary. */
export interface StuckIndex {
  isStuck(referrerId: string): boolean;
}

/**
 * Scope is a parsed scope: the change log filter, and whether what is in it
 * can change while an entity does not (then a stream tracks what it sent).
 */
export interface Scope {
  filter: ChangeFilter;
  /** Entities outside `filter` that a view still holds: the other ends of its references. */
  expands: boolean;
}

/** The cluster-wide context a scoped view keeps: few, and what explains the objects (their reference controllers). */
const CONTEXT: ChangeFilter['always'] = ['controller', 'watch', 'queue'];

export function toScope(q: ScopeQuery, stuck: StuckIndex): Scope {
  const filter: ChangeFilter = {};
  if (q.namespace) filter.namespace = q.namespace;
  if (q.kind) filter.kind = q.kind;
  if (q.q) filter.q = q.q;
  const scoped = Boolean(q.namespace || q.kind || q.q || q.object || q.stuck);
  if (scoped) filter.always = CONTEXT;
  const where: ((entity: EntityKind, value: AnyEntity) => boolean)[] = [];
  if (q.object) {
    const key = q.object;
    where.push((entity, value) => touches(entity, value, key));
  }
  if (q.stuck) {
    where.push((entity, value) => {
      if (entity === 'referrer') return stuck.isStuck(value.id);
      if (entity === 'reference') return stuck.isStuck(referrerIdOf(value as ReferenceEntity));
      return false;
    });
  }
  if (where.length > 0) filter.where = (entity, value) => where.every((w) => w(entity, value));
  // A referrer becomes stuck, or stops being stuck, with time; and the other end of a reference may lie
  // outside any scope (a namespace's PersistentVolumeClaim names a cluster-scoped StorageClass, a webhook a
  // Service in another namespace): every change is a candidate, and the ScopeView picks.
  if (scoped) filter.dynamic = true;
  return { filter, expands: scoped };
}

/** touches: the entity is the object `key`, or a reference from or to it. */
function touches(entity: EntityKind, value: AnyEntity, key: string): boolean {
  if (entity === 'referrer' || entity === 'referent') return (value as { key: string }).key === key;
  if (entity === 'reference')
    return (value as ReferenceEntity).referrer === key || (value as ReferenceEntity).referent === key;
  if (entity === 'event') return (value as { key?: string }).key === key;
  return false;
}

const referrerIdOf = (r: ReferenceEntity) => `${r.controller}|${r.referrer}`;

const slot = (entity: EntityKind, id: string) => `${entity}\u0000${id}`;

/**
 * ScopeView is one client's view of a scope whose members are not fixed by
 * their own fields. It remembers what it sent, so it tombstones only what the
 * client holds, and adds the other end of every reference it sends (a
 * referent that did not change is still needed to draw the edge).
 */
export class ScopeView {
  readonly #held = new Set<string>();
  /** How many held references name each object slot as an end, and each held reference's ends. */
  readonly #endCount = new Map<string, number>();
  readonly #endsOf = new Map<string, string[]>();
  constructor(private readonly changelog: ChangeLog) {}

  /** Adds the references' other ends to a scoped snapshot and remembers what it holds. */
  snapshot(s: SnapshotRows): SnapshotRows {
    this.#held.clear();
    this.#endCount.clear();
    this.#endsOf.clear();
    const referents = [...s.referents];
    const referrers = [...s.referrers];
    for (const e of referrers) this.#held.add(slot('referrer', e.id));
    for (const e of referents) this.#held.add(slot('referent', e.id));
    for (const ref of s.references) {
      this.#holdReference(ref);
      for (const [entity, id] of ends(ref)) {
        if (this.#held.has(slot(entity, id))) continue;
        const value = this.changelog.get(entity, id);
        if (value === undefined) continue;
        this.#held.add(slot(entity, id));
        if (entity === 'referent') referents.push(value as ReferentEntity);
        else referrers.push(value as ReferrerEntity);
      }
    }
    return { ...s, referrers, referents };
  }

  /**
   * Filters a delta's changes to what this client should see: tombstones only
   * for what it holds, a held end's new state although the end is outside the
   * filter, and the other ends of references it is sent for the first time.
   */
  admit(changes: readonly Change[]): Change[] {
    const out: Change[] = [];
    const sent = new Set<string>();
    for (const c of changes) {
      const s = slot(c.entity, c.id);
      if (c.removed) {
        if (!this.#held.has(s)) continue; // never sent: nothing to take back
        const live = c.entity === 'reference' ? undefined : this.changelog.get(c.entity, c.id);
        if (live !== undefined && (this.#endCount.get(s) ?? 0) > 0) {
          // Out of the filter but still the end of a held reference: its new state, not a removal.
          out.push({ entity: c.entity, id: c.id, revision: c.revision, removed: false, value: live } as Change);
          sent.add(s);
          continue;
        }
        this.#held.delete(s);
        if (c.entity === 'reference') this.#releaseReference(s);
      } else {
        this.#held.add(s);
        if (c.entity === 'reference') this.#holdReference(c.value);
      }
      sent.add(s);
      out.push(c);
    }
    for (const c of changes) {
      if (c.removed || c.entity !== 'reference') continue;
      for (const [entity, id] of ends(c.value)) {
        const s = slot(entity, id);
        if (this.#held.has(s) || sent.has(s)) continue;
        const value = this.changelog.get(entity, id);
        if (value === undefined) continue;
        this.#held.add(s);
        out.push({ entity, id, revision: c.revision, removed: false, value } as Change);
      }
    }
    return out;
  }

  #holdReference(ref: ReferenceEntity): void {
    const s = slot('reference', ref.id);
    this.#held.add(s);
    if (this.#endsOf.has(s)) return;
    const endSlots = ends(ref).map(([entity, id]) => slot(entity, id));
    this.#endsOf.set(s, endSlots);
    for (const e of endSlots) this.#endCount.set(e, (this.#endCount.get(e) ?? 0) + 1);
  }

  #releaseReference(s: string): void {
    for (const e of this.#endsOf.get(s) ?? []) {
      const n = (this.#endCount.get(e) ?? 0) - 1;
      if (n > 0) this.#endCount.set(e, n);
      else this.#endCount.delete(e);
    }
    this.#endsOf.delete(s);
  }
}

function ends(ref: ReferenceEntity): [EntityKind, string][] {
  return [
    ['referrer', referrerIdOf(ref)],
    ['referent', ref.referent],
  ];
}
