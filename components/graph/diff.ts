import type { GraphEdge, GraphModel, GraphNode } from './model';

/**
 * ModelDiff is what changed between two renders. A node whose parent changed
 * counts as removed and added: cytoscape cannot re-parent inside a batch
 * without moving it, and the layout must place it again anyway.
 */
export interface ModelDiff {
  addedNodes: GraphNode[];
  removedNodes: string[];
  changedNodes: GraphNode[];
  addedEdges: GraphEdge[];
  removedEdges: string[];
  changedEdges: GraphEdge[];
}

export function diffModels(prev: GraphModel, next: GraphModel): ModelDiff {
  const diff: ModelDiff = {
    addedNodes: [],
    removedNodes: [],
    changedNodes: [],
    addedEdges: [],
    removedEdges: [],
    changedEdges: [],
  };
  diffNodes(prev.nodes, next.nodes, diff);
  // Models patched for a status change share their edges array with the model before.
  if (prev.edges !== next.edges) diffEdges(prev.edges, next.edges, diff);
  return diff;
}

function diffNodes(prevNodes: readonly GraphNode[], nextNodes: readonly GraphNode[], diff: ModelDiff): void {
  if (
    prevNodes.length === nextNodes.length &&
    prevNodes.every((n, i) => n.id === nextNodes[i]!.id && (n.parent ?? '') === (nextNodes[i]!.parent ?? ''))
  ) {
    // Same nodes in the same order, as after a status change: compare in place.
    for (let i = 0; i < nextNodes.length; i++) {
      const a = prevNodes[i]!;
      const b = nextNodes[i]!;
      if (a !== b && !sameNode(a, b)) diff.changedNodes.push(b);
    }
    return;
  }
  const oldNodes = new Map(prevNodes.map((n) => [n.id, n]));
  const seenNodes = new Set<string>();
  for (const n of nextNodes) {
    seenNodes.add(n.id);
    const old = oldNodes.get(n.id);
    if (!old) diff.addedNodes.push(n);
    else if ((old.parent ?? '') !== (n.parent ?? '')) {
      diff.removedNodes.push(n.id);
      diff.addedNodes.push(n);
    } else if (!sameNode(old, n)) diff.changedNodes.push(n);
  }
  for (const id of oldNodes.keys()) if (!seenNodes.has(id)) diff.removedNodes.push(id);
}

function diffEdges(prevEdges: readonly GraphEdge[], nextEdges: readonly GraphEdge[], diff: ModelDiff): void {
  const oldEdges = new Map(prevEdges.map((e) => [e.id, e]));
  const seenEdges = new Set<string>();
  for (const e of nextEdges) {
    seenEdges.add(e.id);
    const old = oldEdges.get(e.id);
    if (!old) diff.addedEdges.push(e);
    else if (old.source !== e.source || old.target !== e.target) {
      diff.removedEdges.push(e.id);
      diff.addedEdges.push(e);
    } else if (old.label !== e.label || old.count !== e.count || old.type !== e.type) diff.changedEdges.push(e);
  }
  for (const id of oldEdges.keys()) if (!seenEdges.has(id)) diff.removedEdges.push(id);
}

/** isStructural: nodes or edges came or went, so positions must be recomputed. */
export function isStructural(d: ModelDiff): boolean {
  return d.addedNodes.length + d.removedNodes.length + d.addedEdges.length + d.removedEdges.length > 0;
}

export function isEmptyDiff(d: ModelDiff): boolean {
  return !isStructural(d) && d.changedNodes.length === 0 && d.changedEdges.length === 0;
}

function sameNode(a: GraphNode, b: GraphNode): boolean {
  return (
    a.state === b.state &&
    a.label === b.label &&
    a.reason === b.reason &&
    a.since === b.since &&
    a.context === b.context &&
    a.size === b.size &&
    a.collapsed === b.collapsed &&
    a.roles.join() === b.roles.join() &&
    sameCounts(a.counts, b.counts)
  );
}

function sameCounts(a: GraphNode['counts'], b: GraphNode['counts']): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const ka = Object.keys(a) as (keyof typeof a)[];
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
