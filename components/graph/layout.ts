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

/** LayoutName is how the graph is placed: `layered` (left to right, the default) or `force` (fcose). */
export type LayoutName = 'layered' | 'force';
export const LAYOUT_NAMES: readonly LayoutName[] = ['layered', 'force'];

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
export function fcoseOptions(
  decision: 'incremental' | 'full',
  nodeCount: number,
  opts: { summaries?: boolean } = {},
): FcoseOptions {
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
    const around = (neighbours.get(id) ?? [])
      .map((n) => placed.get(n) ?? out.get(n))
      .filter((p): p is Point => p !== undefined);
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
    sort: (a: Node, b: Node) =>
      rank(a) - rank(b) || attention(b) - attention(a) || String(a.data('id')).localeCompare(String(b.data('id'))),
  };
}

/**
 * Past this many nodes with no groups, fcose and curved, arrowed edges cost
 * seconds in the browser; the graph is laid out in layers instead and its
 * edges drawn as straight lines.
 */
export const LAYER_ABOVE = 1500;

export interface LayerNode {
  id: string;
  type: 'object' | 'controller' | 'group';
  roles: readonly ('referrer' | 'referent')[];
  namespace: string;
  kind: string;
  key: string;
}

/**
 * layeredPositions places nodes in four layers from left to right, the way
 * references point: referrers, objects that are both, referents, reference
 * controllers. Each layer fills columns of equal height, sorted by namespace,
 * kind and key so neighbours in a namespace sit together; the height is
 * chosen so the whole picture is about `aspect` times wider than tall.
 */
export function layeredPositions(
  nodes: readonly LayerNode[],
  gap: Point = { x: 80, y: 56 },
  aspect = 1.6,
): Map<string, Point> {
  const layerOf = (n: LayerNode) => {
    if (n.type === 'controller') return 3;
    const referrer = n.roles.includes('referrer');
    const referent = n.roles.includes('referent');
    return referrer && referent ? 1 : referrer ? 0 : 2;
  };
  const layers: LayerNode[][] = [[], [], [], []];
  for (const n of nodes) if (n.type !== 'group') layers[layerOf(n)]!.push(n);
  const objects = layers[0]!.length + layers[1]!.length + layers[2]!.length;
  // rows * columns ≈ objects, and columns * gap.x ≈ aspect * rows * gap.y
  const rows = Math.max(1, Math.ceil(Math.sqrt((objects * gap.x) / (aspect * gap.y))));
  const out = new Map<string, Point>();
  let x = 0;
  for (const [i, layer] of layers.entries()) {
    if (layer.length === 0) continue;
    layer.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.kind, b.kind) || cmp(a.key, b.key));
    // Controllers are few: one column, centred on the others.
    const height = i === 3 ? layer.length : rows;
    const top = i === 3 ? ((rows - layer.length) * gap.y) / 2 : 0;
    layer.forEach((n, j) => out.set(n.id, { x: x + Math.floor(j / height) * gap.x, y: top + (j % height) * gap.y }));
    x += Math.ceil(layer.length / height) * gap.x + 3 * gap.x;
  }
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** boundsOf is the smallest box holding every point, or undefined for none. */
export function boundsOf(points: Iterable<Point>): { x1: number; y1: number; x2: number; y2: number } | undefined {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const p of points) {
    x1 = Math.min(x1, p.x);
    y1 = Math.min(y1, p.y);
    x2 = Math.max(x2, p.x);
    y2 = Math.max(y2, p.y);
  }
  return x1 === Infinity ? undefined : { x1, y1, x2, y2 };
}

/**
 * fitPositions is the zoom and pan that fit these points (plus `margin` model
 * units around each, for the node and its label) into a `width` × `height`
 * viewport; computed from the layout's own positions, it spares measuring
 * thousands of labels the way a generic fit does.
 */
export function fitPositions(
  points: Iterable<Point>,
  width: number,
  height: number,
  margin = 60,
  padding = 30,
  maxZoom = 1.4,
): { zoom: number; pan: Point } {
  const box = boundsOf(points);
  if (!box) return { zoom: 1, pan: { x: width / 2, y: height / 2 } };
  let { x1, y1, x2, y2 } = box;
  x1 -= margin;
  y1 -= margin;
  x2 += margin;
  y2 += margin;
  const zoom = Math.min(
    maxZoom,
    Math.max(1e-3, Math.min((width - 2 * padding) / (x2 - x1), (height - 2 * padding) / (y2 - y1))),
  );
  return { zoom, pan: { x: (width - zoom * (x1 + x2)) / 2, y: (height - zoom * (y1 + y2)) / 2 } };
}
