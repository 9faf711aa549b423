import 'server-only';
import type { ChangeLog } from '../lib/changelog';
import type { ReferentEntity, ReferrerEntity } from '../lib/changelog/entities';
import { RefwatchError, type ObjectKey } from '../lib/model';

/** StateTransition is one state an object entered, as a referrer of one controller or as a referent. */
export interface StateTransition {
  /** When it entered the state (epoch ms). */
  at: number;
  role: 'referrer' | 'referent';
  /** The controller that reconciles it, for a referrer. */
  controller?: string;
  state: string;
  reason?: string;
  message?: string;
}

/** ObjectHistory is one object's recent transitions, oldest first, and the entities that keep it alive. */
interface ObjectHistory {
  transitions: StateTransition[];
  /** The last state recorded per change-log entity id, so a put that keeps the state records nothing. */
  last: Map<string, string>;
}

export interface StateHistoryOptions {
  /** Transitions kept per object; the oldest is dropped beyond it. Default 20. */
  capacity?: number;
}

/**
 * StateHistory keeps the recent state transitions of every object the change
 * log holds as a referrer or a referent: the log keeps only each entity's
 * latest state. It follows the log's deltas, so each change costs O(1), and
 * forgets an object once the log holds neither of its entities, so its memory
 * is bounded by capacity × the objects refwatch tracks. Changes coalesced
 * inside one transaction count as one transition.
 */
export class StateHistory {
  readonly #changelog: ChangeLog;
  readonly #capacity: number;
  readonly #objects = new Map<ObjectKey, ObjectHistory>();
  #revision = 0;
  #unsubscribe: (() => void) | undefined;

  constructor(changelog: ChangeLog, opts: StateHistoryOptions = {}) {
    const capacity = opts.capacity ?? 20;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RefwatchError(
        'InvalidOption',
        `StateHistory capacity must be a whole number from 1 up, got ${capacity}`,
        { field: 'capacity', example: '20' },
      );
    }
    this.#changelog = changelog;
    this.#capacity = capacity;
  }

  /** start records from the log's current state on; a second start is a no-op. */
  start(): void {
    if (this.#unsubscribe) return;
    this.#resync();
    this.#unsubscribe = this.#changelog.subscribe(() => this.#follow());
  }

  /** stop unsubscribes from the log and forgets every history. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#objects.clear();
  }

  /** of returns an object's transitions, newest first; empty when the log holds it in no role. */
  of(key: ObjectKey): StateTransition[] {
    return [...(this.#objects.get(key)?.transitions ?? [])].reverse();
  }

  /** The number of objects with a history. */
  get size(): number {
    return this.#objects.size;
  }

  #follow(): void {
    const since = this.#changelog.changesSince(this.#revision, { entities: ['referrer', 'referent'] });
    // Behind the log's retained window (a transaction larger than it): rebuild from the snapshot.
    if (since.resnapshot) return this.#resync();
    this.#revision = since.revision;
    for (const c of since.changes) {
      if (c.entity !== 'referrer' && c.entity !== 'referent') continue;
      if (c.removed) this.#forget(c.id);
      else this.#record(c.id, c.value);
    }
  }

  #resync(): void {
    const snap = this.#changelog.snapshot({ entities: ['referrer', 'referent'] });
    this.#revision = snap.revision;
    const live = new Set<string>();
    for (const v of [...snap.entities.referrer, ...snap.entities.referent]) {
      live.add(v.id);
      this.#record(v.id, v);
    }
    for (const h of this.#objects.values()) for (const id of h.last.keys()) if (!live.has(id)) this.#forget(id);
  }

  #record(id: string, value: ReferrerEntity | ReferentEntity): void {
    const t = transitionOf(value);
    const signature = `${t.state}\u0000${t.reason ?? ''}\u0000${t.message ?? ''}`;
    let h = this.#objects.get(value.key);
    if (!h) this.#objects.set(value.key, (h = { transitions: [], last: new Map() }));
    if (h.last.get(id) === signature) return;
    h.last.set(id, signature);
    h.transitions.push(t);
    if (h.transitions.length > this.#capacity) h.transitions.splice(0, h.transitions.length - this.#capacity);
  }

  #forget(id: string): void {
    // A referrer's id is `${controller}|${key}`; a referent's is its key. Keys hold no '|'.
    const key = id.slice(id.lastIndexOf('|') + 1);
    const h = this.#objects.get(key);
    if (!h) return;
    h.last.delete(id);
    if (h.last.size === 0) this.#objects.delete(key);
  }
}

function transitionOf(v: ReferrerEntity | ReferentEntity): StateTransition {
  if ('controller' in v) {
    const t: StateTransition = { at: v.since, role: 'referrer', controller: v.controller, state: v.state };
    if (v.reason !== undefined) t.reason = v.reason;
    if (v.message !== undefined) t.message = v.message;
    return t;
  }
  const t: StateTransition = { at: v.changedAt, role: 'referent', state: v.state };
  if (v.message !== undefined) t.message = v.message;
  return t;
}
