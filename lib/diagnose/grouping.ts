import type { StuckEntry } from '../changelog/wire';
import { kindOfKey, type ObjectKey } from '../model/keys';

// Pure over stuck entries, with no engine import: the dashboard groups its stuck list with the same code.

/** StuckItem is one line of a stuck list: an entry, and the stuck objects its workload owns that share its cause. */
export interface StuckItem {
  entry: StuckEntry;
  owned: StuckEntry[];
}

/**
 * foldWorkloads puts each entry whose `workload` is listed under that
 * workload's entry, so a Deployment and its Pods stuck on one Secret make one
 * line. Order is kept; an entry whose workload is not listed stays a line of
 * its own.
 */
export function foldWorkloads(entries: readonly StuckEntry[]): StuckItem[] {
  const items = new Map<ObjectKey, StuckItem>();
  const out: StuckItem[] = [];
  for (const e of entries) {
    if (items.has(e.key)) continue;
    const item = { entry: e, owned: [] };
    items.set(e.key, item);
    out.push(item);
  }
  const folded = new Set<StuckItem>();
  for (const item of out) {
    const w = item.entry.workload;
    const owner = w !== undefined && w !== item.entry.key ? items.get(w) : undefined;
    if (!owner || owner.entry.workload !== undefined) continue;
    owner.owned.push(item.entry);
    folded.add(item);
  }
  return out.filter((i) => !folded.has(i));
}

/** ownedText names what a workload's line also stands for: "and its 3 Pods", "and its ReplicaSet and 2 Pods". */
export function ownedText(owned: readonly StuckEntry[]): string {
  if (owned.length === 0) return '';
  const counts = new Map<string, number>();
  for (const e of owned) {
    const kind = shortKindOf(e.key);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  // Fewest first (the ReplicaSet before its Pods), then by kind: the same text whatever the list's order.
  const parts = [...counts]
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([kind, n]) => (n === 1 ? kind : `${n} ${plural(kind)}`));
  return `and its ${parts.join(' and ')}`;
}

/** RootCauseGroup is the stuck referrers one cause blocks, in the end: the deepest referent of their chains. */
export interface RootCauseGroup {
  /** The referent that blocks them all; undefined for a referrer held up by no referent (a reconcile error). */
  cause?: ObjectKey;
  reason: string;
  message: string;
  fix: string;
  /** Lines, workloads folded with their owned objects, oldest first. */
  items: StuckItem[];
  /** Every stuck referrer in the group, owned ones included. */
  referrers: number;
}

/**
 * groupByRootCause groups stuck entries by the referent that blocks them in
 * the end (a root cause's, else the blocking one's), biggest group first,
 * then the one stuck longest. Entries blocked by no referent stay one group
 * each.
 */
export function groupByRootCause(entries: readonly StuckEntry[]): RootCauseGroup[] {
  const groups = new Map<string, RootCauseGroup>();
  for (const item of foldWorkloads(entries)) {
    const e = item.entry;
    const cause = e.rootCause?.referent ?? e.referent;
    const id = cause ?? `\u0000${e.id}`;
    let g = groups.get(id);
    if (!g) {
      g = {
        reason: e.rootCause?.reason ?? e.reason,
        message: e.rootCause?.message ?? e.message,
        fix: e.rootCause?.fix ?? e.fix,
        items: [],
        referrers: 0,
      };
      if (cause !== undefined) g.cause = cause;
      groups.set(id, g);
    }
    g.items.push(item);
    g.referrers += 1 + item.owned.length;
  }
  const oldest = (g: RootCauseGroup) => Math.min(...g.items.map((i) => i.entry.since));
  return [...groups.values()].sort((a, b) => b.referrers - a.referrers || oldest(a) - oldest(b));
}

/** groupTitle heads a group: "12 referrers blocked by Secret/shop/db-password". */
export function groupTitle(g: RootCauseGroup): string {
  const n = `${g.referrers} referrer${g.referrers === 1 ? '' : 's'}`;
  return g.cause !== undefined ? `${n} blocked by ${g.cause}` : `${n}: ${g.reason}`;
}

function shortKindOf(key: ObjectKey): string {
  const kind = kindOfKey(key);
  const dot = kind.indexOf('.');
  return dot < 0 ? kind : kind.slice(0, dot);
}

function plural(kind: string): string {
  if (/(s|x|ch|sh)$/.test(kind)) return `${kind}es`;
  if (/[^aeiou]y$/.test(kind)) return `${kind.slice(0, -1)}ies`;
  return `${kind}s`;
}

/** StuckGroup is a root-cause group as GET /api/v1/stuck?groupBy=rootCause sends it: entries by id, owned ones by key. */
export interface StuckGroup {
  title: string;
  cause?: ObjectKey;
  reason: string;
  message: string;
  fix: string;
  referrers: number;
  items: { id: string; key: ObjectKey; owned: ObjectKey[] }[];
}

/** rootCauseGroups is groupByRootCause for the wire: each entry once, in `items` of the answer, and here by id. */
export function rootCauseGroups(entries: readonly StuckEntry[]): StuckGroup[] {
  return groupByRootCause(entries).map((g) => {
    const out: StuckGroup = {
      title: groupTitle(g),
      reason: g.reason,
      message: g.message,
      fix: g.fix,
      referrers: g.referrers,
      items: g.items.map((i) => ({ id: i.entry.id, key: i.entry.key, owned: i.owned.map((e) => e.key) })),
    };
    if (g.cause !== undefined) out.cause = g.cause;
    return out;
  });
}
