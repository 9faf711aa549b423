import type { Change, ReferenceEntity, ReferentEntity, ReferrerEntity } from '../changelog';
import type { Graph, WatchScope } from './backend';

/** WatchRow is one line of `watch`: an object whose state changed (or is, at the start). */
export interface WatchRow {
  object: string;
  role: 'referrer' | 'referent';
  state: string;
  message: string;
  controller?: string;
}

/**
 * WatchView follows the referrers in a scope (one object, a namespace, or
 * all) and the referents they refer to, through snapshots and deltas, and
 * says which of them changed state or message.
 */
export class WatchView {
  private readonly referrers = new Map<string, ReferrerEntity>();
  private readonly referents = new Map<string, ReferentEntity>();
  private readonly references = new Map<string, ReferenceEntity>();

  constructor(private readonly scope: WatchScope) {}

  /** reset replaces everything with a snapshot and returns a row for every object in scope. */
  reset(g: Graph): WatchRow[] {
    this.referrers.clear();
    this.referents.clear();
    this.references.clear();
    for (const r of g.references) this.references.set(r.id, r);
    for (const r of g.referrers) this.referrers.set(r.id, r);
    for (const r of g.referents) this.referents.set(r.key, r);
    return [
      ...[...this.referrers.values()].filter((r) => this.inScope(r)).map(referrerRow),
      ...[...this.referents.values()].filter((r) => this.referentInScope(r.key)).map(referentRow),
    ];
  }

  /** apply takes a delta and returns the rows of objects in scope whose state or message changed. */
  apply(changes: readonly Change[]): WatchRow[] {
    const rows: WatchRow[] = [];
    // References first: a referent enters the scope with the reference to it.
    for (const c of changes) {
      if (c.entity !== 'reference') continue;
      if (c.removed) this.references.delete(c.id);
      else this.references.set(c.id, c.value);
    }
    for (const c of changes) {
      if (c.entity === 'referrer') {
        const prev = this.referrers.get(c.id);
        if (c.removed) {
          this.referrers.delete(c.id);
          if (prev && this.inScope(prev)) rows.push({ ...referrerRow(prev), state: 'Deleted', message: '' });
          continue;
        }
        this.referrers.set(c.id, c.value);
        if (this.inScope(c.value) && (!prev || prev.state !== c.value.state || prev.reason !== c.value.reason))
          rows.push(referrerRow(c.value));
      } else if (c.entity === 'referent') {
        const prev = this.referents.get(c.id);
        if (c.removed) {
          this.referents.delete(c.id);
          continue;
        }
        this.referents.set(c.id, c.value);
        if (this.referentInScope(c.id) && (!prev || prev.state !== c.value.state || prev.message !== c.value.message))
          rows.push(referentRow(c.value));
      }
    }
    return rows;
  }

  private inScope(r: { key: string; namespace: string }): boolean {
    if (this.scope.key !== undefined) return r.key === this.scope.key;
    return this.scope.namespace === undefined || r.namespace === this.scope.namespace;
  }

  private referentInScope(key: string): boolean {
    for (const r of this.references.values())
      if (r.referent === key && this.inScope({ key: r.referrer, namespace: r.namespace })) return true;
    return false;
  }
}

function referrerRow(r: ReferrerEntity): WatchRow {
  return {
    object: r.key,
    role: 'referrer',
    state: r.state,
    message: r.state === 'Resolved' ? '' : (r.reason ?? r.message ?? ''),
    controller: r.controller,
  };
}

function referentRow(r: ReferentEntity): WatchRow {
  return { object: r.key, role: 'referent', state: r.state, message: r.message ?? '' };
}
