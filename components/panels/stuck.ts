import type { Snapshot, StuckEntry } from '@/lib/changelog/wire';
import type { RootCauseGroup, StuckItem } from '@/lib/diagnose/grouping';
import { stuckThresholdOf } from '../graph/model';

/**
 * stuckList is what the Stuck panel shows, oldest first: the server's stuck
 * entries (they carry the diagnosis and fix), plus referrers the browser
 * sees unresolved past the threshold that the server has not listed yet
 * (deltas carry referrers, not stuck entries). Ages are recomputed from `now`.
 * The threshold is the server's (`snapshot.stuckThresholdMs`) unless given.
 */
export function stuckList(snapshot: Snapshot, now: number, thresholdMs = stuckThresholdOf(snapshot)): StuckEntry[] {
  const referrers = new Map(snapshot.referrers.map((r) => [r.id, r]));
  const out: StuckEntry[] = [];
  const listed = new Set<string>();
  for (const s of snapshot.stuck) {
    const r = referrers.get(s.id);
    if (r && r.state === 'Resolved') continue; // resolved since the server listed it
    if (!r && snapshot.referrers.length > 0 && !snapshot.referrers.some((x) => x.key === s.key)) continue; // gone
    listed.add(s.id);
    out.push({ ...s, ageMs: Math.max(0, now - s.since) });
  }
  for (const r of snapshot.referrers) {
    if (r.state === 'Resolved' || listed.has(r.id) || now - r.since <= thresholdMs) continue;
    out.push({
      id: r.id,
      key: r.key,
      controller: r.controller,
      state: r.state,
      since: r.since,
      ageMs: now - r.since,
      reason: r.state,
      message:
        r.message ?? (r.reason ? `waiting on ${r.reason}` : `unresolved for ${Math.round((now - r.since) / 1000)} s`),
      fix: '',
      ...(r.reason ? { referent: r.reason } : {}),
    });
  }
  return out.sort((a, b) => a.since - b.since || a.key.localeCompare(b.key));
}

/**
 * unlistedStuck says which entries of a stuck list the browser added itself:
 * referrers past the threshold that the server's list does not hold. Such an
 * entry has no diagnosis, and the server's entries may have been diagnosed
 * before it was stuck (a chain's root cause stops at a referent that was not
 * stuck yet): while there are any, the list is the server's to refresh.
 */
export function unlistedStuck(snapshot: Snapshot, list: readonly StuckEntry[]): string[] {
  const listed = new Set(snapshot.stuck.map((s) => s.id));
  return list.filter((s) => !listed.has(s.id)).map((s) => s.id);
}

/**
 * withServerStuck is the snapshot with the server's current stuck list in
 * place of the one it was sent with, limited to the referrers the snapshot
 * holds (a scoped view's), so the panel shows the server's diagnosis and root
 * causes as they are now.
 */
export function withServerStuck(snapshot: Snapshot, items: readonly StuckEntry[]): Snapshot {
  const held = new Set(snapshot.referrers.map((r) => r.id));
  return { ...snapshot, stuck: items.filter((s) => held.has(s.id)) };
}

/**
 * firstLines keeps the first `lines` lines of the groups, in order, each
 * with its group: a group cut short keeps its head, which counts all it
 * holds; the groups after it are left out. `hidden` is how many lines are.
 */
export function firstLines(
  groups: readonly RootCauseGroup[],
  lines: number,
): { shown: { group: RootCauseGroup; items: StuckItem[] }[]; hidden: number } {
  const shown: { group: RootCauseGroup; items: StuckItem[] }[] = [];
  let room = lines;
  let hidden = 0;
  for (const group of groups) {
    const items = group.items.length > room ? group.items.slice(0, room) : group.items;
    if (items.length > 0) shown.push({ group, items });
    hidden += group.items.length - items.length;
    room -= items.length;
  }
  return { shown, hidden };
}
