import type { AnyEntity, EntityKind } from '@/lib/changelog/entities';
import { SNAPSHOT_FIELD, type Change, type Delta, type Snapshot } from '@/lib/changelog/wire';

/** The live timeline keeps only the most recent events in the browser. */
export const EVENT_CAP = 500;

/**
 * DeltaFit says how a delta relates to the snapshot it would be applied to:
 *   apply  its range starts at or before the snapshot's revision and ends after it
 *   stale  everything in it is already in the snapshot
 *   gap    changes between the snapshot's revision and delta.from were missed: resync
 */
export type DeltaFit = 'apply' | 'stale' | 'gap';

export function deltaFit(snapshot: Snapshot, delta: Delta): DeltaFit {
  if (delta.revision <= snapshot.revision) return 'stale';
  if (delta.from > snapshot.revision) return 'gap';
  return 'apply';
}

/**
 * applyDelta returns a new snapshot with the delta's changes applied; the
 * input is never mutated. Changes at or below the snapshot's revision are
 * skipped (a delta may overlap it), removals drop the entity, and the events
 * array keeps only the newest `eventCap` entries. Stuck entries whose
 * referrer resolved or went away are dropped; stuck is not an entity kind,
 * so new ones arrive with the next snapshot.
 */
export function applyDelta(snapshot: Snapshot, delta: Delta, eventCap = EVENT_CAP): Snapshot {
  const byKind = new Map<EntityKind, Change[]>();
  for (const change of delta.changes) {
    if (change.revision <= snapshot.revision) continue;
    if (!(change.entity in SNAPSHOT_FIELD)) continue; // an entity kind this client does not know
    const list = byKind.get(change.entity);
    if (list) list.push(change);
    else byKind.set(change.entity, [change]);
  }
  const next: Snapshot = { ...snapshot, revision: Math.max(snapshot.revision, delta.revision) };
  for (const [kind, changes] of byKind) {
    const field = SNAPSHOT_FIELD[kind];
    const current = (snapshot[field] as AnyEntity[] | undefined) ?? [];
    (next as unknown as Record<string, AnyEntity[]>)[field] = applyChanges(current, changes);
  }
  if (next.events.length > eventCap) {
    next.events = [...next.events].sort((a, b) => a.at - b.at).slice(-eventCap);
  }
  const referrerChanges = byKind.get('referrer');
  if (referrerChanges) {
    const settled = new Set<string>();
    for (const c of referrerChanges) {
      if (c.removed || (c.entity === 'referrer' && c.value.state === 'Resolved')) settled.add(c.id);
    }
    if (settled.size > 0) next.stuck = snapshot.stuck.filter((s) => !settled.has(s.id));
  }
  return next;
}

/** applyDeltas folds several deltas, stopping at the first gap; `gap` tells the caller to resync. */
export function applyDeltas(
  snapshot: Snapshot,
  deltas: readonly Delta[],
  eventCap = EVENT_CAP,
): { snapshot: Snapshot; gap: boolean } {
  let current = snapshot;
  for (const delta of deltas) {
    const fit = deltaFit(current, delta);
    if (fit === 'gap') return { snapshot: current, gap: true };
    if (fit === 'apply') current = applyDelta(current, delta, eventCap);
  }
  return { snapshot: current, gap: false };
}

function applyChanges(current: readonly AnyEntity[], changes: readonly Change[]): AnyEntity[] {
  const index = new Map<string, number>();
  current.forEach((e, i) => index.set(e.id, i));
  const out: (AnyEntity | undefined)[] = [...current];
  for (const change of changes) {
    const at = index.get(change.id);
    if (change.removed) {
      if (at !== undefined) out[at] = undefined;
      index.delete(change.id);
    } else if (at !== undefined) {
      out[at] = change.value;
    } else {
      index.set(change.id, out.length);
      out.push(change.value);
    }
  }
  return out.filter((e): e is AnyEntity => e !== undefined);
}
