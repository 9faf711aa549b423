import type { GraphNode } from '../graph/model';

/**
 * RowOrder is the objects table's order: matches before context, then the
 * nodes needing the most attention, then by key. `byKey` is the key order
 * of the same nodes, kept so that a change of states alone re-sorts in
 * linear time instead of comparing keys again.
 */
export interface RowOrder {
  rows: GraphNode[];
  ids: string[];
  byKey: number[];
}

const ATTENTION: Partial<Record<GraphNode['state'], number>> = { error: 5, stuck: 4, notfound: 3, waiting: 2 };
const LEVELS = 6;

export function attention(n: GraphNode): number {
  return ATTENTION[n.state] ?? 0;
}

/** orderRows sorts the table's rows (group nodes are not rows); pass the previous order to reuse its key order when the same nodes are listed. */
export function orderRows(nodes: readonly GraphNode[], prev?: RowOrder): RowOrder {
  const list = nodes.filter((n) => n.type !== 'group');
  const ids = list.map((n) => n.id);
  const byKey = prev && sameIds(prev.ids, ids) ? prev.byKey : keyOrder(list);
  // Stable buckets over the key order: context last, then attention high to low.
  const buckets: GraphNode[][] = Array.from({ length: 2 * LEVELS }, () => []);
  for (const i of byKey) {
    const n = list[i]!;
    buckets[(n.context ? LEVELS : 0) + (LEVELS - 1 - attention(n))]!.push(n);
  }
  return { rows: buckets.flat(), ids, byKey };
}

function keyOrder(list: readonly GraphNode[]): number[] {
  const collator = new Intl.Collator();
  return list.map((_, i) => i).sort((a, b) => collator.compare(list[a]!.key, list[b]!.key) || a - b);
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** RowWindow is the slice of rows a virtualized table renders: `[first, last)`. */
export interface RowWindow {
  first: number;
  last: number;
}

/** rowWindow covers the rows visible in a viewport of `height` px scrolled to `scrollTop`, plus `overscan` rows each side. */
export function rowWindow(
  total: number,
  scrollTop: number,
  height: number,
  rowHeight: number,
  overscan: number,
): RowWindow {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total, Math.ceil((scrollTop + Math.max(height, rowHeight)) / rowHeight) + overscan);
  return { first, last: Math.max(first, last) };
}

/** scrollToShow is the scrollTop that brings row `index` fully into view below a sticky header of `headerHeight` px, moving as little as possible. */
export function scrollToShow(
  index: number,
  scrollTop: number,
  height: number,
  rowHeight: number,
  headerHeight: number,
): number {
  const top = index * rowHeight; // the row's offset below the header
  const visible = Math.max(rowHeight, height - headerHeight);
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + visible) return top + rowHeight - visible;
  return scrollTop;
}
