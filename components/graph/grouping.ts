import { shortKind, worstState, type GraphEdge, type GraphModel, type GraphNode, type NodeState } from './model';

/** `none` groups a large graph by namespace anyway; `flat` never groups, whatever the size. */
export type GroupBy = 'none' | 'namespace' | 'kind' | 'flat';
export const GROUP_BY: readonly GroupBy[] = ['none', 'namespace', 'kind', 'flat'];

/** Past this many nodes, groups start collapsed into summary nodes. */
export const COLLAPSE_ABOVE = 2000;

export interface GroupOptions {
  by: GroupBy;
  /** Group ids the user expanded; honoured even when the graph is large. */
  expanded: ReadonlySet<string>;
  collapseAbove?: number;
}

export interface GroupedModel extends GraphModel {
  /** The grouping actually used: a large graph asked for `none` is grouped by namespace. */
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
  if (opts.by === 'flat') return { ...model, by: 'flat', large: false };
  // A large graph of one namespace (a scope) is drawn whole: one summary node would hide all of it.
  const large = model.nodes.length > limit && !(opts.by === 'none' && oneNamespace(model.nodes));
  const by: GroupBy = opts.by === 'none' && large ? 'namespace' : opts.by;
  if (by === 'none') return { ...model, by, large };
  const groupOf = (n: GraphNode) => groupOfNode(n, by);

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
      state: worstOfCounts(counts),
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

function oneNamespace(nodes: readonly GraphNode[]): boolean {
  let ns: string | undefined;
  for (const n of nodes) {
    if (n.type !== 'object') continue;
    if (ns === undefined) ns = n.namespace;
    else if (n.namespace !== ns) return false;
  }
  return true;
}

/** groupOfNode is the group a node joins under `by`, or undefined when it stays on its own. */
function groupOfNode(n: GraphNode, by: GroupBy): string | undefined {
  if (n.type === 'group' || by === 'none' || by === 'flat') return undefined;
  if (by === 'kind') return groupNodeId(by, n.kind);
  if (n.type === 'controller') return undefined;
  return groupNodeId(by, n.namespace === '' ? CLUSTER_SCOPED : n.namespace);
}

function worstOfCounts(counts: Partial<Record<NodeState, number>>): NodeState {
  return worstState((Object.keys(counts) as NodeState[]).filter((s) => (counts[s] ?? 0) > 0));
}

/**
 * regroupModel is groupModel for a model that changed only in node states:
 * when `next` has the same nodes (ids, kinds, namespaces, context) at the
 * same positions as `prev` and the very same edges, it patches the members
 * and the counts of their groups in `grouped` (built from `prev` with the
 * same options) and keeps every untouched node and the edges as they are.
 * Otherwise it groups `next` from scratch. Either way the result deep-equals
 * groupModel(next, opts).
 */
export function regroupModel(
  grouped: GroupedModel,
  prev: GraphModel,
  next: GraphModel,
  opts: GroupOptions,
): GroupedModel {
  if (prev === next) return grouped;
  const changed = statusOnlyChanges(prev, next);
  if (!changed) return groupModel(next, opts);
  if (grouped.by === 'none' || grouped.by === 'flat') return { ...next, by: grouped.by, large: grouped.large };
  if (changed.length === 0) return grouped;

  const nodes = grouped.nodes.slice();
  let at: Map<string, number> | undefined;
  const indexOf = (id: string) => {
    at ??= new Map(nodes.map((n, i) => [n.id, i]));
    return at.get(id);
  };
  const groups = new Map<string, GraphNode>(); // group id → its patched copy
  for (const i of changed) {
    const before = prev.nodes[i]!;
    const after = next.nodes[i]!;
    const gid = groupOfNode(after, grouped.by);
    if (gid !== undefined) {
      let group = groups.get(gid);
      if (!group) {
        const original = nodes[indexOf(gid)!]!;
        group = { ...original, counts: { ...original.counts } };
        groups.set(gid, group);
      }
      const counts = group.counts!;
      counts[before.state] = (counts[before.state] ?? 0) - 1;
      if (counts[before.state] === 0) delete counts[before.state];
      counts[after.state] = (counts[after.state] ?? 0) + 1;
      if (group.collapsed) continue;
    }
    const j = indexOf(after.id);
    if (j !== undefined) nodes[j] = gid === undefined ? after : { ...after, parent: gid };
  }
  for (const [gid, group] of groups) {
    group.state = worstOfCounts(group.counts!);
    nodes[indexOf(gid)!] = group;
  }
  return { nodes, edges: grouped.edges, by: grouped.by, large: grouped.large };
}

/** statusOnlyChanges lists the positions whose node changed only in what grouping does not depend on; undefined when the structure changed. */
function statusOnlyChanges(prev: GraphModel, next: GraphModel): number[] | undefined {
  if (prev.edges !== next.edges || prev.nodes.length !== next.nodes.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < next.nodes.length; i++) {
    const a = prev.nodes[i]!;
    const b = next.nodes[i]!;
    if (a === b) continue;
    if (
      a.id !== b.id ||
      a.type !== b.type ||
      a.kind !== b.kind ||
      a.namespace !== b.namespace ||
      a.context !== b.context ||
      a.parent !== b.parent
    )
      return undefined;
    changed.push(i);
  }
  return changed;
}
