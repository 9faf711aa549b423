import type { Point } from './layout';

/**
 * A dense scope's first frame holds every node but only the edges that cross the opening view; the others are added
 * just after, in chunks. Cytoscape styles, measures and z-sorts every element before it draws anything, and on a
 * scope of 5,000 nodes and 10,000 edges the edges are about half of that work, nearly none of it visible: the opening
 * view is readable, so it shows a few dozen nodes.
 */

/** Rect is a box in model coordinates. */
export interface Rect {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** DEFER_EDGES_ABOVE: below this many edges, all are added at once (the graph is cheap to draw whole). */
export const DEFER_EDGES_ABOVE = 2000;

/** EDGE_CHUNK is how many held-back edges one task adds, so that the page answers input between chunks. */
export const EDGE_CHUNK = 2500;

/**
 * viewRect is the part of the model a viewport shows, widened by `margin` model units on each side so that a label
 * or an edge just outside the canvas is there before it is panned in.
 */
export function viewRect(viewport: { zoom: number; pan: Point }, width: number, height: number, margin = 80): Rect {
  const { zoom, pan } = viewport;
  if (!(zoom > 0)) throw new Error(`viewRect: zoom must be a positive number, got ${zoom}`);
  return {
    x1: -pan.x / zoom - margin,
    y1: -pan.y / zoom - margin,
    x2: (width - pan.x) / zoom + margin,
    y2: (height - pan.y) / zoom + margin,
  };
}

/**
 * splitByView splits edges into those whose straight line may cross `rect` (its bounding box overlaps it: never
 * misses a crossing edge, sometimes keeps one that passes beside) and the rest. An edge with an endpoint that has no
 * position is kept in the first part.
 */
export function splitByView<E extends { source: string; target: string }>(
  edges: readonly E[],
  positions: ReadonlyMap<string, Point>,
  rect: Rect,
): { inView: E[]; later: E[] } {
  const inView: E[] = [];
  const later: E[] = [];
  for (const e of edges) {
    const a = positions.get(e.source);
    const b = positions.get(e.target);
    const crosses =
      !a ||
      !b ||
      (Math.max(a.x, b.x) >= rect.x1 &&
        Math.min(a.x, b.x) <= rect.x2 &&
        Math.max(a.y, b.y) >= rect.y1 &&
        Math.min(a.y, b.y) <= rect.y2);
    (crosses ? inView : later).push(e);
  }
  return { inView, later };
}

/** ChunkRunner runs a job a chunk per task until it reports done; stop() drops the chunks not yet run. */
export interface ChunkRunner {
  /** Runs every remaining chunk now, in this task (before anything else touches what the job fills). */
  finish(): void;
  stop(): void;
  readonly done: boolean;
}

/**
 * runInChunks calls `chunk` once per task (setTimeout 0, which unlike requestAnimationFrame also runs in a
 * background tab) until it returns true, then calls `onDone`.
 */
export function runInChunks(chunk: () => boolean, onDone: () => void = () => {}): ChunkRunner {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  const complete = () => {
    done = true;
    timer = undefined;
    onDone();
  };
  const step = () => {
    timer = undefined;
    if (done) return;
    if (chunk()) complete();
    else timer = setTimeout(step, 0);
  };
  timer = setTimeout(step, 0);
  return {
    finish() {
      if (done) return;
      if (timer !== undefined) clearTimeout(timer);
      while (!chunk());
      complete();
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      done = true;
    },
    get done() {
      return done;
    },
  };
}
