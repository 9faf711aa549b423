import { CONTROLLER_STATES, OBJECT_STATES, type GraphModel, type GraphNode, type NodeState } from './model';

/** GraphFilters are the URL's `q`, `ns`, `kind` and `state`; '' means no filter. */
export interface GraphFilters {
  q: string;
  ns: string;
  kind: string;
  state: string;
}

export const NO_FILTERS: GraphFilters = { q: '', ns: '', kind: '', state: '' };

export function hasFilters(f: GraphFilters): boolean {
  return f.q.trim() !== '' || f.ns !== '' || f.kind !== '' || f.state !== '';
}

/**
 * matches: every active filter must hold. Search text matches the key,
 * kind, state and reason, case-insensitively, all words in any order.
 * Reference controllers are cluster-wide, so a namespace filter never
 * matches them; they show up as context of the objects that do match.
 */
export function matches(node: GraphNode, f: GraphFilters): boolean {
  if (node.type === 'group') return false;
  if (f.ns !== '' && (node.type === 'controller' || node.namespace !== f.ns)) return false;
  if (f.kind !== '' && node.kind !== f.kind) return false;
  if (f.state !== '' && node.state !== f.state) return false;
  const words = f.q.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length > 0) {
    const hay = `${node.key} ${node.kind} ${node.state} ${node.reason ?? ''} ${node.roles.join(' ')}`.toLowerCase();
    if (!words.every((w) => hay.includes(w))) return false;
  }
  return true;
}

/**
 * filterModel keeps the matching nodes plus, as faded context, what explains
 * them: their direct neighbours along references and the reference
 * controller of every referent kept. Edges survive when both ends do.
 */
export function filterModel(model: GraphModel, f: GraphFilters): GraphModel & { matched: number } {
  if (!hasFilters(f)) return { ...model, matched: model.nodes.filter((n) => n.type !== 'group').length };
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const matched = new Set(model.nodes.filter((n) => matches(n, f)).map((n) => n.id));
  const keep = new Set(matched);
  for (const e of model.edges) {
    if (e.type !== 'reference') continue;
    if (matched.has(e.source)) keep.add(e.target);
    if (matched.has(e.target)) keep.add(e.source);
  }
  for (const e of model.edges) {
    if (e.type === 'watch' && keep.has(e.source) && byId.get(e.source)?.type === 'object') keep.add(e.target);
  }
  const nodes: GraphNode[] = [];
  for (const n of model.nodes) {
    if (!keep.has(n.id)) continue;
    nodes.push(matched.has(n.id) ? n : { ...n, context: true });
  }
  const edges = model.edges.filter((e) => keep.has(e.source) && keep.has(e.target));
  return { nodes, edges, matched: matched.size };
}

export interface Facets {
  namespaces: string[];
  kinds: string[];
  states: NodeState[];
}

/** facetsOf lists the values the filter menus offer: only those present in the model, sorted. */
export function facetsOf(model: GraphModel): Facets {
  const ns = new Set<string>();
  const kinds = new Set<string>();
  const states = new Set<NodeState>();
  for (const n of model.nodes) {
    if (n.type === 'group') continue;
    if (n.type === 'object' && n.namespace !== '') ns.add(n.namespace);
    kinds.add(n.kind);
    states.add(n.state);
  }
  const order: readonly string[] = [...OBJECT_STATES, ...CONTROLLER_STATES];
  return {
    namespaces: [...ns].sort(),
    kinds: [...kinds].sort(),
    states: [...states].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
  };
}

/** sameFacets: the menus would offer exactly the same values. */
export function sameFacets(a: Facets, b: Facets): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return same(a.namespaces, b.namespaces) && same(a.kinds, b.kinds) && same(a.states, b.states);
}
