import { shortKind, worstState, type GraphEdge, type GraphModel, type GraphNode, type NodeState } from './model';

export type GroupBy = 'none' | 'namespace' | 'kind';
export const GROUP_BY: readonly GroupBy[] = ['none', 'namespace', 'kind'];

/** Past this many nodes, groups start collapsed into summary nodes. */
export const COLLAPSE_ABOVE = 2000;

export interface GroupOptions {
  by: GroupBy;
  /** Group ids the user expanded; honoured even when the graph is large. */
  expanded: ReadonlySet<string>;
  collapseAbove?: number;
}

export interface GroupedModel extends GraphModel {
  /** The grouping actually used: a large ungrouped graph is grouped by namespace. */
  by: GroupBy;
  /** True when groups collapse by default because the graph is large. */
  large: boolean;
}

export const groupNodeId = (by: GroupBy, value: string) => `grp:${by}:${value}`;
export const CLUSTER_SCOPED = '(cluster-scoped)';

/**
 * groupModel puts nodes into compound group nodes by namespace or kind.
 * When the graph has more than `collapseAbove` nodes, every group not in
 * `expanded` becomes one summary node with per-state counts; edges into a
 * collapsed group are rewired to it and merged, and edges inside it vanish.
 * Reference controllers are cluster-wide: grouped by kind they join their
 * kind's group, grouped by namespace they stay on their own.
 */
export function groupModel(model: GraphModel, opts: GroupOptions): GroupedModel {
  const limit = opts.collapseAbove ?? COLLAPSE_ABOVE;
  const large = model.nodes.length > limit;
  const by: GroupBy = opts.by === 'none' && large ? 'namespace' : opts.by;
  if (by === 'none') return { ...model, by, large };

  const groupOf = (n: GraphNode): string | undefined => {
    if (n.type === 'group') return undefined;
    if (by === 'kind') return groupNodeId(by, n.kind);
    if (n.type === 'controller') return undefined;
    return groupNodeId(by, n.namespace === '' ? CLUSTER_SCOPED : n.namespace);
  };

  const members = new Map<string, GraphNode[]>();
  for (const n of model.nodes) {
    const g = groupOf(n);
    if (g === undefined) continue;
    const list = members.get(g);
    if (list) list.push(n);
    else members.set(g, [n]);
  }

  const nodes: GraphNode[] = [];
  const collapsedOf = new Map<string, string>(); // member id → summary id
  for (const [gid, list] of [...members].sort(([a], [b]) => a.localeCompare(b))) {
    const value = gid.slice(`grp:${by}:`.length);
    const collapsed = large && !opts.expanded.has(gid);
    const counts: Partial<Record<NodeState, number>> = {};
    for (const m of list) counts[m.state] = (counts[m.state] ?? 0) + 1;
    const allContext = list.every((m) => m.context);
    nodes.push({
      id: gid,
      type: 'group',
      key: value,
      label: by === 'kind' ? shortKind(value) : value,
      kind: by === 'kind' ? value : '',
      namespace: by === 'namespace' ? value : '',
      state: worstState(list.map((m) => m.state)),
      roles: [],
      size: list.length,
      counts,
      collapsed,
      ...(allContext ? { context: true } : {}),
    });
    for (const m of list) {
      if (collapsed) collapsedOf.set(m.id, gid);
      else nodes.push({ ...m, parent: gid });
    }
  }
  for (const n of model.nodes) if (groupOf(n) === undefined) nodes.push(n);

  if (collapsedOf.size === 0) return { nodes, edges: model.edges, by, large };
  const edges = new Map<string, GraphEdge>();
  for (const e of model.edges) {
    const source = collapsedOf.get(e.source) ?? e.source;
    const target = collapsedOf.get(e.target) ?? e.target;
    if (source === target) continue;
    if (source === e.source && target === e.target) {
      edges.set(e.id, e);
      continue;
    }
    const id = `agg:${e.type}:${source}>${target}`;
    const merged = edges.get(id);
    if (merged) merged.count += e.count;
    else edges.set(id, { id, source, target, type: e.type, label: '', count: e.count });
  }
  for (const e of edges.values()) if (e.id.startsWith('agg:') && e.type === 'reference') e.label = `${e.count} refs`;
  return { nodes, edges: [...edges.values()], by, large };
}
