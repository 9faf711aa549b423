import type { GraphEdge, GraphNode } from './model';
import { nodeLabel } from './style';

/** Data cytoscape holds per node: the model's fields flattened, plus what the stylesheet selects on. */
export function nodeData(n: GraphNode): Record<string, unknown> {
  return {
    id: n.id,
    type: n.type,
    key: n.key,
    kind: n.kind,
    namespace: n.namespace,
    state: n.state,
    referrer: n.roles.includes('referrer'),
    referent: n.roles.includes('referent'),
    context: n.context === true,
    collapsed: n.collapsed === true,
    ...(n.counts ? { counts: n.counts } : {}),
    display: nodeLabel(n),
    ...(n.parent ? { parent: n.parent } : {}),
  };
}

export function edgeData(e: GraphEdge, context: boolean): Record<string, unknown> {
  return {
    id: e.id,
    source: e.source,
    target: e.target,
    type: e.type,
    label: e.count > 1 && !e.label.includes('refs') ? `${e.label} ×${e.count}` : e.label,
    context,
    ...(e.selector !== undefined ? { selector: e.selector } : {}),
  };
}
