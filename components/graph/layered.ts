import type { ElkExtendedEdge, ElkNode, LayoutOptions } from 'elkjs/lib/elk-api';
import { boundsOf, type Point } from './layout';
import type { GraphNode } from './model';
import { nodeLabel } from './style';

/**
 * The layered layout reads the way references point: referrers on the left,
 * objects that are both referrer and referent next, referents after them,
 * and the reference controllers (watches, observers) last, beside the
 * referents of their kind. Every edge then runs left to right.
 *
 * Up to ELK_MAX_NODES nodes ELK's layered algorithm places them (in a Web
 * Worker, see layered.worker.ts); above that ELK takes seconds per thousand
 * nodes, so `sweepLayout` places them with the same columns and a linear
 * barycenter ordering instead.
 */

export type LayoutNode = Pick<
  GraphNode,
  | 'id'
  | 'type'
  | 'roles'
  | 'kind'
  | 'namespace'
  | 'key'
  | 'label'
  | 'state'
  | 'parent'
  | 'collapsed'
  | 'size'
  | 'counts'
>;
export interface LayoutEdge {
  source: string;
  target: string;
}

/** Above this many nodes ELK is not used: at 500 nodes it already takes seconds on a loaded machine. */
export const ELK_MAX_NODES = 400;
/** Horizontal room between two columns, for the edges between them. */
export const LAYER_GAP = 110;
/** Vertical room between two boxes (node plus its label) in a column. */
export const ROW_GAP = 14;

/** LayerClass is a node's column: 0 referrers only, 1 referrer and referent, 2 referents only, 3 reference controllers. */
export type LayerClass = 0 | 1 | 2 | 3;

export function layerClass(n: Pick<LayoutNode, 'type' | 'roles'>): LayerClass {
  if (n.type === 'controller') return 3;
  if (n.type === 'group') return 1;
  const referrer = n.roles.includes('referrer');
  const referent = n.roles.includes('referent');
  if (referrer && !referent) return 0;
  if (referent && !referrer) return 2;
  return 1;
}

/** Box is the room a node takes on the canvas: its shape plus the label below it (inside it, for a summary). */
export interface Box {
  w: number;
  h: number;
  /** Height of the shape alone: cytoscape positions a node by the centre of its shape. */
  shapeH: number;
}

const SHAPES: Record<string, [number, number]> = {
  object: [30, 30],
  both: [34, 34],
  controller: [40, 36],
  summary: [150, 64],
  group: [60, 40],
};
const CHAR_W = 6.8; // 12 px system sans-serif, measured on Debian Chromium's default font
const LINE_H = 15;
const LABEL_MAX_W = 160; // text-max-width in style.ts

/** nodeBox estimates a node's box from its label, the way the stylesheet wraps it. */
export function nodeBox(n: LayoutNode): Box {
  const shape =
    n.type === 'controller'
      ? SHAPES.controller!
      : n.type === 'group'
        ? n.collapsed
          ? SHAPES.summary!
          : SHAPES.group!
        : layerClass(n) === 1
          ? SHAPES.both!
          : SHAPES.object!;
  const [sw, sh] = shape;
  if (n.type === 'group' && n.collapsed) return { w: sw, h: sh, shapeH: sh };
  let lines = 0;
  let width = 0;
  for (const line of nodeLabel({ ...n, label: n.label, kind: n.kind, namespace: n.namespace, state: n.state }).split(
    '\n',
  )) {
    const w = line.length * CHAR_W;
    lines += Math.max(1, Math.ceil(w / LABEL_MAX_W));
    width = Math.max(width, Math.min(w, LABEL_MAX_W));
  }
  return { w: Math.ceil(Math.max(sw, width) + 8), h: sh + 6 + lines * LINE_H, shapeH: sh };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const modelOrder = (a: LayoutNode, b: LayoutNode) =>
  layerClass(a) - layerClass(b) ||
  cmp(a.namespace, b.namespace) ||
  cmp(a.kind, b.kind) ||
  cmp(a.key, b.key) ||
  cmp(a.id, b.id);

const ELK_ROOT: LayoutOptions = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.edgeRouting': 'POLYLINE',
  'elk.spacing.nodeNode': String(ROW_GAP),
  'elk.layered.spacing.nodeNodeBetweenLayers': String(LAYER_GAP),
  'elk.spacing.componentComponent': '60',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.layering.strategy': 'NETWORK_SIMPLEX',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
};
const GROUP_PADDING = '[top=44,left=24,bottom=24,right=24]';

/**
 * toElkGraph converts a (grouped) graph model into ELK's input. Expanded
 * groups become compound nodes whose members are laid out inside them; an
 * edge between two groups (or a group and an outside node) is lifted to
 * the top level, once. Where every child is an object or a controller, ELK
 * partitions them by layer class, so referrers stay left of referents
 * whatever the edges say.
 */
export function toElkGraph(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): ElkNode {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const members = new Map<string, LayoutNode[]>();
  const top: LayoutNode[] = [];
  for (const n of [...nodes].sort(modelOrder)) {
    const parent = n.parent !== undefined && byId.has(n.parent) ? n.parent : undefined;
    if (parent === undefined) top.push(n);
    else {
      const list = members.get(parent);
      if (list) list.push(n);
      else members.set(parent, [n]);
    }
  }
  const topOf = (id: string) => {
    const n = byId.get(id);
    return n?.parent !== undefined && byId.has(n.parent) ? n.parent : id;
  };
  const inner = new Map<string, ElkExtendedEdge[]>();
  const outer = new Map<string, ElkExtendedEdge>();
  for (const e of edges) {
    if (!byId.has(e.source) || !byId.has(e.target) || e.source === e.target) continue;
    const sp = byId.get(e.source)!.parent;
    if (sp !== undefined && sp === byId.get(e.target)!.parent && byId.has(sp)) {
      const list = inner.get(sp) ?? [];
      list.push({ id: `e${list.length}:${e.source}>${e.target}`, sources: [e.source], targets: [e.target] });
      inner.set(sp, list);
      continue;
    }
    const s = topOf(e.source);
    const t = topOf(e.target);
    const id = `${s}>${t}`;
    if (s !== t && !outer.has(id)) outer.set(id, { id, sources: [s], targets: [t] });
  }
  const leaf = (n: LayoutNode, partitioned: boolean): ElkNode => {
    const box = nodeBox(n);
    return {
      id: n.id,
      width: box.w,
      height: box.h,
      ...(partitioned ? { layoutOptions: { 'elk.partitioning.partition': String(layerClass(n)) } } : {}),
    };
  };
  const partitionable = (list: readonly LayoutNode[]) => list.every((n) => n.type !== 'group');
  const children = (list: readonly LayoutNode[]): ElkNode[] => {
    const partitioned = partitionable(list);
    return list.map((n) => {
      const inside = members.get(n.id);
      if (!inside) return leaf(n, partitioned);
      return {
        id: n.id,
        layoutOptions: {
          ...ELK_ROOT,
          'elk.padding': GROUP_PADDING,
          'elk.partitioning.activate': String(partitionable(inside)),
        },
        children: children(inside),
        edges: inner.get(n.id) ?? [],
      };
    });
  };
  return {
    id: '__root',
    layoutOptions: { ...ELK_ROOT, 'elk.partitioning.activate': String(partitionable(top)) },
    children: children(top),
    edges: [...outer.values()],
  };
}

/** positionsFromElk reads ELK's answer back as cytoscape positions: the centre of each node's shape, in absolute coordinates. */
export function positionsFromElk(graph: ElkNode, nodes: readonly LayoutNode[]): Map<string, Point> {
  const boxes = new Map(nodes.map((n) => [n.id, nodeBox(n)]));
  const out = new Map<string, Point>();
  const walk = (g: ElkNode, ox: number, oy: number) => {
    for (const c of g.children ?? []) {
      const x = ox + (c.x ?? 0);
      const y = oy + (c.y ?? 0);
      if (c.children && c.children.length > 0) walk(c, x, y);
      else {
        const box = boxes.get(c.id);
        if (box) out.set(c.id, { x: x + (c.width ?? box.w) / 2, y: y + box.shapeH / 2 });
      }
    }
  };
  walk(graph, 0, 0);
  return out;
}

/**
 * sweepLayout is the layered layout in linear time, for graphs too big for
 * ELK: one column per layer class, each column ordered by two barycenter
 * sweeps (a node sits level with what it points at), rows never overlap.
 * Expanded groups are laid out one by one and stacked, so each stays a box.
 */
export function sweepLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): Map<string, Point> {
  const ids = new Set(nodes.map((n) => n.id));
  const groups = nodes.filter((n) => n.type === 'group' && !n.collapsed);
  const groupIds = new Set(groups.map((g) => g.id));
  const blocks = new Map<string, LayoutNode[]>();
  const loose: LayoutNode[] = [];
  for (const n of nodes) {
    if (groupIds.has(n.id)) continue;
    if (n.parent !== undefined && groupIds.has(n.parent)) {
      const list = blocks.get(n.parent) ?? [];
      list.push(n);
      blocks.set(n.parent, list);
    } else loose.push(n);
  }
  const live = edges.filter((e) => ids.has(e.source) && ids.has(e.target));
  const boxes = new Map(nodes.map((n) => [n.id, nodeBox(n)]));
  const out = new Map<string, Point>();
  let y = 0;
  let right = 0;
  for (const g of groups.sort((a, b) => cmp(a.id, b.id))) {
    const list = blocks.get(g.id) ?? [];
    const at = sweepColumns(list, live, boxes);
    const bb = bounds(list, at, boxes);
    if (!bb) continue;
    // Inside the group's padding: 44 on top for its label, 24 around.
    for (const n of list) {
      const p = at.get(n.id)!;
      out.set(n.id, { x: p.x - bb.x1 + 24, y: p.y - bb.y1 + y + 44 });
    }
    y += bb.y2 - bb.y1 + 44 + 24 + 60;
    right = Math.max(right, bb.x2 - bb.x1 + 48);
  }
  if (loose.length > 0) {
    const at = sweepColumns(loose, live, boxes);
    const bb = bounds(loose, at, boxes)!;
    const dx = groups.length > 0 ? right + LAYER_GAP - bb.x1 : 0;
    for (const n of loose) {
      const p = at.get(n.id)!;
      out.set(n.id, { x: p.x + dx, y: p.y });
    }
  }
  return out;
}

/** bounds is the box around nodes placed at `at` (their shapes and labels). */
function bounds(
  list: readonly LayoutNode[],
  at: ReadonlyMap<string, Point>,
  boxes: ReadonlyMap<string, Box>,
): { x1: number; y1: number; x2: number; y2: number } | undefined {
  if (list.length === 0) return undefined;
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const n of list) {
    const p = at.get(n.id)!;
    const b = boxes.get(n.id)!;
    x1 = Math.min(x1, p.x - b.w / 2);
    x2 = Math.max(x2, p.x + b.w / 2);
    y1 = Math.min(y1, p.y - b.shapeH / 2);
    y2 = Math.max(y2, p.y - b.shapeH / 2 + b.h);
  }
  return { x1, y1, x2, y2 };
}

/** sweepColumns places one flat set of nodes: columns by layer class, order by barycenter, rows stacked without overlap. */
function sweepColumns(
  list: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
  boxes: ReadonlyMap<string, Box>,
): Map<string, Point> {
  const layers: LayoutNode[][] = [[], [], [], []];
  for (const n of list) layers[layerClass(n)]!.push(n);
  for (const layer of layers) layer.sort(modelOrder);
  const layerOf = new Map<string, number>();
  for (const [k, layer] of layers.entries()) for (const n of layer) layerOf.set(n.id, k);
  const neighbours = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    const l = neighbours.get(a);
    if (l) l.push(b);
    else neighbours.set(a, [b]);
  };
  for (const e of edges) {
    const a = layerOf.get(e.source);
    const b = layerOf.get(e.target);
    if (a === undefined || b === undefined || a === b) continue;
    link(e.source, e.target);
    link(e.target, e.source);
  }
  // rank: a node's place in its column, as a fraction, so columns of different lengths compare.
  const rank = new Map<string, number>();
  const rerank = (layer: LayoutNode[]) =>
    layer.forEach((n, i) => rank.set(n.id, layer.length > 1 ? i / (layer.length - 1) : 0.5));
  layers.forEach(rerank);
  // Order by the median of a node's neighbours on one side (one far neighbour does not drag it away).
  // Controllers do not order the referents: they would sort them into one block per kind, far from their referrers.
  const reorder = (k: number, side: 'left' | 'right') => {
    const layer = layers[k]!;
    const keyed = layer.map((n) => {
      const ranks = (neighbours.get(n.id) ?? []).filter((m) => {
        const l = layerOf.get(m)!;
        return l !== 3 && (side === 'left' ? l < k : l > k);
      });
      return [ranks.length > 0 ? median(ranks.map((m) => rank.get(m)!)) : rank.get(n.id)!, n] as const;
    });
    keyed.sort((a, b) => a[0] - b[0]); // stable: ties keep the model order
    keyed.forEach(([, n], i) => (layer[i] = n));
    rerank(layer);
  };
  for (let pass = 0; pass < 2; pass++) {
    for (let k = 1; k < 4; k++) reorder(k, 'left');
    for (let k = 2; k >= 0; k--) reorder(k, 'right');
  }

  // Rows: the longest column is stacked; the others sit level with the median of their neighbours, pushed down where they would overlap.
  const top = new Map<string, number>(); // y of each box's top edge
  const order = [0, 1, 2, 3]
    .filter((k) => layers[k]!.length > 0)
    .sort((a, b) => layers[b]!.length - layers[a]!.length || a - b);
  const placed = new Set<number>();
  for (const k of order) {
    let floor = -Infinity;
    for (const n of layers[k]!) {
      const box = boxes.get(n.id)!;
      const ys = (neighbours.get(n.id) ?? [])
        .filter((m) => placed.has(layerOf.get(m)!))
        .map((m) => top.get(m)! + boxes.get(m)!.shapeH / 2);
      const want = ys.length > 0 ? median(ys) - box.shapeH / 2 : floor === -Infinity ? 0 : floor;
      const y = Math.max(want, floor);
      top.set(n.id, y);
      floor = y + box.h + ROW_GAP;
    }
    placed.add(k);
  }

  const out = new Map<string, Point>();
  let x = 0;
  let first = true;
  for (const layer of layers) {
    if (layer.length === 0) continue;
    const w = Math.max(...layer.map((n) => boxes.get(n.id)!.w));
    x += first ? w / 2 : w / 2 + LAYER_GAP;
    for (const n of layer) out.set(n.id, { x, y: top.get(n.id)! + boxes.get(n.id)!.shapeH / 2 });
    x += w / 2;
    first = false;
  }
  return out;
}

/**
 * mergePositions keeps the picture stable across updates: a node that was
 * on screen stays where it was, and a new node goes to the column the fresh
 * layout gave it (mapped onto the old columns), level with the old node it
 * sits next to in the fresh layout, in the nearest free slot of that column.
 * Nothing already placed moves, and no new box overlaps another.
 */
export function mergePositions(
  nodes: readonly LayoutNode[],
  edges: readonly LayoutEdge[],
  previous: ReadonlyMap<string, Point>,
  fresh: ReadonlyMap<string, Point>,
): Map<string, Point> {
  const boxes = new Map(nodes.map((n) => [n.id, nodeBox(n)]));
  const out = new Map<string, Point>();
  const added: LayoutNode[] = [];
  for (const n of nodes) {
    const p = previous.get(n.id);
    if (p) out.set(n.id, p);
    else if (fresh.has(n.id)) added.push(n);
  }
  if (out.size === 0) return new Map(fresh);
  if (added.length === 0) return out;

  // Columns of the fresh layout (centres less than COLUMN_SPREAD apart), each mapped to where its kept nodes stand now.
  const column = columnsOf(fresh.values());
  const kept = new Map<number, { fresh: Point; now: Point }[]>();
  for (const [id, now] of out) {
    const f = fresh.get(id);
    if (!f) continue;
    const list = kept.get(column(f.x)) ?? [];
    list.push({ fresh: f, now });
    kept.set(column(f.x), list);
  }
  const keptColumns = [...kept.keys()].sort((a, b) => a - b);
  const mapX = (fx: number): { x: number; anchors: { fresh: Point; now: Point }[] } => {
    const c = column(fx);
    const own = kept.get(c);
    if (own) return { x: median(own.map((k) => k.now.x)), anchors: own };
    if (keptColumns.length === 0) return { x: fx, anchors: [] };
    // No old node in this column: keep its distance to the nearest column that has some.
    const near = keptColumns.reduce((best, k) => (Math.abs(k - c) < Math.abs(best - c) ? k : best));
    const list = kept.get(near)!;
    return { x: median(list.map((k) => k.now.x)) + (fx - median(list.map((k) => k.fresh.x))), anchors: [] };
  };
  const sources = new Map<string, string[]>();
  const targets = new Map<string, string[]>();
  for (const e of edges) {
    sources.set(e.target, [...(sources.get(e.target) ?? []), e.source]);
    targets.set(e.source, [...(targets.get(e.source) ?? []), e.target]);
  }

  // Left to right, so a new node's new sources are placed before it.
  for (const n of added.sort(
    (a, b) => fresh.get(a.id)!.x - fresh.get(b.id)!.x || fresh.get(a.id)!.y - fresh.get(b.id)!.y,
  )) {
    const f = fresh.get(n.id)!;
    const box = boxes.get(n.id)!;
    const mapped = mapX(f.x);
    const anchors = mapped.anchors;
    // Edges keep pointing right: not left of anything pointing at it, nor right of what it points at.
    const clearance = (id: string) => (boxes.get(id)!.w + box.w) / 2 + 20;
    const lo = Math.max(
      -Infinity,
      ...(sources.get(n.id) ?? []).filter((id) => out.has(id)).map((id) => out.get(id)!.x + clearance(id)),
    );
    const hi = Math.min(
      Infinity,
      ...(targets.get(n.id) ?? []).filter((id) => out.has(id)).map((id) => out.get(id)!.x - clearance(id)),
    );
    let x = mapped.x;
    if (x < lo) x = lo;
    else if (x > hi && hi >= lo) x = hi;
    let want = f.y;
    if (anchors.length > 0) {
      const nearest = anchors.reduce((best, a) =>
        Math.abs(a.fresh.y - f.y) < Math.abs(best.fresh.y - f.y) ? a : best,
      );
      want = nearest.now.y + (f.y - nearest.fresh.y);
    }
    out.set(n.id, { x, y: freeSlot(x, want, box, out, boxes) });
  }
  return out;
}

const COLUMN_SPREAD = 60;

/** columnsOf numbers the columns of a layout: x centres closer than COLUMN_SPREAD to the previous one share its column. */
function columnsOf(points: Iterable<Point>): (x: number) => number {
  const xs = [...new Set([...points].map((p) => p.x))].sort((a, b) => a - b);
  const index = new Map<number, number>();
  let c = 0;
  xs.forEach((x, i) => {
    if (i > 0 && x - xs[i - 1]! > COLUMN_SPREAD) c++;
    index.set(x, c);
  });
  return (x) => index.get(x) ?? -1;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** freeSlot is the y nearest to `want` where a node with `box` at `x` overlaps none of the boxes placed so far. */
function freeSlot(
  x: number,
  want: number,
  box: Box,
  placed: ReadonlyMap<string, Point>,
  boxes: ReadonlyMap<string, Box>,
): number {
  // Vertical extents (shape top to label bottom) of the boxes sharing this column.
  const taken: [number, number][] = [];
  for (const [id, p] of placed) {
    const b = boxes.get(id);
    if (!b || Math.abs(p.x - x) >= (b.w + box.w) / 2) continue;
    taken.push([p.y - b.shapeH / 2 - ROW_GAP, p.y - b.shapeH / 2 + b.h + ROW_GAP]);
  }
  const fits = (y: number) => {
    const y1 = y - box.shapeH / 2;
    const y2 = y1 + box.h;
    return taken.every(([a, b]) => y2 <= a || y1 >= b);
  };
  if (fits(want)) return want;
  // Candidates: just above or just below each taken extent; the nearest that fits wins.
  const candidates = taken
    .flatMap(([a, b]) => [a - box.h + box.shapeH / 2, b + box.shapeH / 2])
    .sort((p, q) => Math.abs(p - want) - Math.abs(q - want));
  for (const y of candidates) if (fits(y)) return y;
  return Math.max(...taken.map(([, b]) => b)) + box.shapeH / 2;
}

/**
 * readableViewport is the first view of a layered graph: the whole graph
 * when it fits at a zoom where labels can be read, otherwise its top-left
 * corner (the first referrers and what they point at) at that zoom. A fit
 * that shrinks thousands of labels to dots shows nothing.
 */
export function readableViewport(
  points: Iterable<Point>,
  width: number,
  height: number,
  opts: { minZoom?: number; maxZoom?: number; margin?: number; padding?: number } = {},
): { zoom: number; pan: Point } {
  const { minZoom = 0.9, maxZoom = 1.25, margin = 90, padding = 24 } = opts;
  const box = boundsOf(points);
  if (!box) return { zoom: 1, pan: { x: width / 2, y: height / 2 } };
  let { x1, y1, x2, y2 } = box;
  x1 -= margin;
  x2 += margin;
  y1 -= 30;
  y2 += margin;
  const fit = Math.min((width - 2 * padding) / (x2 - x1), (height - 2 * padding) / (y2 - y1));
  const zoom = Math.min(maxZoom, Math.max(minZoom, fit));
  const pan = (lo: number, hi: number, size: number) =>
    zoom * (hi - lo) <= size - 2 * padding ? (size - zoom * (lo + hi)) / 2 : padding - zoom * lo;
  return { zoom, pan: { x: pan(x1, x2, width), y: pan(y1, y2, height) } };
}

/** LayeredRequest is what the page sends the layout worker: the graph, and for an update the positions on screen. */
export interface LayeredRequest {
  id: number;
  nodes: LayoutNode[];
  edges: LayoutEdge[];
  /** Positions of the nodes on screen; those nodes keep them (see mergePositions). */
  previous?: [string, Point][];
}

export type LayeredResponse =
  { id: number; positions: [string, Point][]; engine: 'elk' | 'sweep' } | { id: number; error: string };

/** ElkLayouter is the one method of ELK the layout needs; the worker passes the real one, tests may pass their own. */
export interface ElkLayouter {
  layout(graph: ElkNode): Promise<ElkNode>;
}

/** layoutLayered answers one request: ELK for graphs it handles in time, the sweep for bigger ones, merged with the previous positions. */
export async function layoutLayered(
  req: Omit<LayeredRequest, 'id'>,
  elk: ElkLayouter,
): Promise<{ positions: Map<string, Point>; engine: 'elk' | 'sweep' }> {
  const engine = req.nodes.length <= ELK_MAX_NODES ? 'elk' : 'sweep';
  const fresh =
    engine === 'elk'
      ? positionsFromElk(await elk.layout(toElkGraph(req.nodes, req.edges)), req.nodes)
      : sweepLayout(req.nodes, req.edges);
  const previous = new Map(req.previous ?? []);
  return { positions: previous.size > 0 ? mergePositions(req.nodes, req.edges, previous, fresh) : fresh, engine };
}

/** layoutNodeOf keeps only what the layout reads, so the message to the worker stays small. */
export function layoutNodeOf(n: LayoutNode): LayoutNode {
  const out: LayoutNode = {
    id: n.id,
    type: n.type,
    roles: n.roles,
    kind: n.kind,
    namespace: n.namespace,
    key: n.key,
    label: n.label,
    state: n.state,
  };
  if (n.parent !== undefined) out.parent = n.parent;
  if (n.collapsed !== undefined) out.collapsed = n.collapsed;
  if (n.size !== undefined) out.size = n.size;
  if (n.counts !== undefined) out.counts = n.counts;
  return out;
}
