import type { ModelDiff } from './diff';
import { isEmptyDiff, isStructural } from './diff';

/**
 * LayoutDecision says what a model change costs on screen:
 *   none         nothing changed
 *   data         only states or labels changed: update element data in one batch, keep positions
 *   incremental  nodes or edges came or went: re-run fcose from the current positions
 *   full         first render, or most of the graph is new: lay out from scratch
 */
export type LayoutDecision = 'none' | 'data' | 'incremental' | 'full';

export function decideLayout(diff: ModelDiff, previousNodeCount: number): LayoutDecision {
  if (isEmptyDiff(diff)) return 'none';
  if (!isStructural(diff)) return 'data';
  const remaining = previousNodeCount - diff.removedNodes.length;
  if (remaining <= 0 || diff.addedNodes.length > remaining) return 'full';
  return 'incremental';
}

/** Structural changes arriving in a burst share one layout run. */
export const LAYOUT_DEBOUNCE_MS = 250;

/** Above this many nodes the layout neither animates nor spends time on quality. */
export const ANIMATE_BELOW = 400;

export interface FcoseOptions {
  name: 'fcose';
  randomize: boolean;
  animate: boolean;
  animationDuration: number;
  quality: 'draft' | 'default' | 'proof';
  fit: boolean;
  padding: number;
  nodeDimensionsIncludeLabels: boolean;
  nodeRepulsion: number;
  idealEdgeLength: number;
  edgeElasticity: number;
  nestingFactor: number;
  packComponents: boolean;
  tile: boolean;
  numIter: number;
  tilingPaddingVertical: number;
  tilingPaddingHorizontal: number;
}

/** fcoseOptions: incremental runs start from current positions (randomize false) so the picture does not jump. */
export function fcoseOptions(decision: 'incremental' | 'full', nodeCount: number, opts: { summaries?: boolean } = {}): FcoseOptions {
  const small = nodeCount < ANIMATE_BELOW;
  // Summary nodes are several times larger than object nodes; give them room.
  const spread = opts.summaries ? 3 : 1;
  return {
    name: 'fcose',
    randomize: decision === 'full',
    animate: small && decision === 'incremental',
    animationDuration: 300,
    quality: nodeCount > 1500 ? 'draft' : 'default',
    fit: decision === 'full',
    padding: 40,
    nodeDimensionsIncludeLabels: true,
    nodeRepulsion: 4500 * spread * spread,
    idealEdgeLength: 50 * spread,
    edgeElasticity: 0.45,
    nestingFactor: 0.1,
    packComponents: true,
    tile: true,
    numIter: nodeCount > 1500 ? 1000 : 2500,
    tilingPaddingVertical: 40,
    tilingPaddingHorizontal: 130,
  };
}

export interface Point {
  x: number;
  y: number;
}

/**
 * seedPositions places each new node next to its already placed neighbours
 * (their centre, nudged so siblings do not stack), so an incremental layout
 * starts close to its answer. Nodes with no placed neighbour get none.
 */
export function seedPositions(
  added: readonly string[],
  edges: readonly { source: string; target: string }[],
  placed: ReadonlyMap<string, Point>,
): Map<string, Point> {
  const neighbours = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    const list = neighbours.get(a);
    if (list) list.push(b);
    else neighbours.set(a, [b]);
  };
  for (const e of edges) {
    link(e.source, e.target);
    link(e.target, e.source);
  }
  const out = new Map<string, Point>();
  let i = 0;
  for (const id of added) {
    const around = (neighbours.get(id) ?? []).map((n) => placed.get(n) ?? out.get(n)).filter((p): p is Point => p !== undefined);
    if (around.length === 0) continue;
    const cx = around.reduce((s, p) => s + p.x, 0) / around.length;
    const cy = around.reduce((s, p) => s + p.y, 0) / around.length;
    const angle = (i++ * 2.399963) % (2 * Math.PI); // golden angle: siblings fan out
    out.set(id, { x: cx + 60 * Math.cos(angle), y: cy + 60 * Math.sin(angle) });
  }
  return out;
}

/** Debouncer runs `fn` once after calls stop for `ms`; `cancel` drops a pending run (call it on unmount). */
export interface Debouncer {
  schedule(): void;
  cancel(): void;
}

export function debounce(fn: () => void, ms: number): Debouncer {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    schedule() {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        fn();
      }, ms);
    },
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export interface Box {
  id: string;
  x1: number;
  y1: number;
  w: number;
  h: number;
}

/**
 * packBoxes arranges the bounding boxes of disconnected components in rows
 * (tallest first) so they never overlap, aiming at a landscape overall
 * shape. It returns how far to move each box.
 */
export function packBoxes(boxes: readonly Box[], gap = 60, aspect = 1.6): Map<string, Point> {
  const out = new Map<string, Point>();
  if (boxes.length === 0) return out;
  const area = boxes.reduce((s, b) => s + (b.w + gap) * (b.h + gap), 0);
  const rowWidth = Math.max(Math.max(...boxes.map((b) => b.w)), Math.sqrt(area * aspect));
  const sorted = [...boxes].sort((a, b) => b.h - a.h || b.w - a.w || a.id.localeCompare(b.id));
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const b of sorted) {
    if (x > 0 && x + b.w > rowWidth) {
      x = 0;
      y += rowHeight + gap;
      rowHeight = 0;
    }
    out.set(b.id, { x: x - b.x1, y: y - b.y1 });
    x += b.w + gap;
    rowHeight = Math.max(rowHeight, b.h);
  }
  return out;
}

/**
 * When every group is collapsed the graph is a few big summary nodes and
 * the reference controllers; a grid (controllers first, then summaries,
 * the ones needing attention first) never overlaps them, which fcose may.
 */
export function summaryLayoutOptions(nodeCount: number) {
  type Node = { data(name: string): unknown };
  const rank = (n: Node) => (n.data('type') === 'controller' ? 0 : 1);
  const attention = (n: Node) => {
    const c = (n.data('counts') ?? {}) as Record<string, number | undefined>;
    return (c.stuck ?? 0) + (c.error ?? 0) + (c.notfound ?? 0);
  };
  return {
    name: 'grid' as const,
    avoidOverlap: true,
    avoidOverlapPadding: 24,
    nodeDimensionsIncludeLabels: true,
    condense: true,
    fit: true,
    padding: 30,
    animate: nodeCount < ANIMATE_BELOW,
    animationDuration: 300,
    sort: (a: Node, b: Node) => rank(a) - rank(b) || attention(b) - attention(a) || String(a.data('id')).localeCompare(String(b.data('id'))),
  };
}
