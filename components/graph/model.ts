import type {
  ReferenceControllerEntity,
  ReferenceControllerState,
  ReferentEntity,
  ReferentState,
  ReferrerEntity,
  ReferrerState,
} from '@/lib/changelog/entities';
import type { Snapshot } from '@/lib/changelog/wire';
import { kindOfKey, nameOfKey, namespaceOfKey } from '@/lib/model/keys';

/** States an object node can show, worst last. */
export const OBJECT_STATES = ['resolved', 'waiting', 'notfound', 'stuck', 'error'] as const;
export type ObjectNodeState = (typeof OBJECT_STATES)[number];

export const CONTROLLER_STATES = ['starting', 'priming', 'active', 'grace', 'cancelled'] as const;
export type ControllerNodeState = (typeof CONTROLLER_STATES)[number];

export type NodeState = ObjectNodeState | ControllerNodeState;

export type NodeRole = 'referrer' | 'referent';

/**
 * GraphNode is one object (referrer and/or referent) or one reference
 * controller. `id` is `obj:<object key>` or `ctl:<kind key>`; `key` is the
 * object or kind key as the API spells it.
 */
export interface GraphNode {
  id: string;
  type: 'object' | 'controller' | 'group';
  key: string;
  label: string;
  kind: string;
  namespace: string;
  state: NodeState;
  roles: NodeRole[];
  /** Why the node is in its state, when it is not the happy one. */
  reason?: string;
  /** When the node entered its state (epoch ms). */
  since?: number;
  /** Compound parent (set by grouping). */
  parent?: string;
  /** Shown only as a neighbour of a filter match (set by filtering). */
  context?: boolean;
  /** Summary nodes (set by grouping): members and their states. */
  size?: number;
  counts?: Partial<Record<NodeState, number>>;
  collapsed?: boolean;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** reference: referrer → referent, labelled with the field path; watch: referent → its reference controller. */
  type: 'reference' | 'watch';
  label: string;
  count: number;
  /** Set on a reference a label selector made (the selector, kubectl form): drawn dotted. */
  selector?: string;
}

/** At most this many edges are drawn per selector; the rest are one "+k more" node, and the referrer's details list them. */
export const SELECTOR_EDGE_CAP = 20;

/** selectorNodeId names the node standing for a selector's undrawn matches, or for a selector matching nothing. */
export const selectorNodeId = (referrer: string, fieldPath: string) => `sel:${referrer}#${fieldPath}`;

export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface ModelOptions {
  now: number;
  /** A referrer unresolved for longer than this counts as stuck even before the server says so; default: the snapshot's threshold. */
  stuckAfterMs?: number;
}

export const DEFAULT_STUCK_AFTER_MS = 30_000;

/** stuckThresholdOf is the server's stuck threshold as the snapshot states it, or 30 s from a server that does not. */
export function stuckThresholdOf(snapshot: Pick<Snapshot, 'stuckThresholdMs'>): number {
  const t = snapshot.stuckThresholdMs;
  return typeof t === 'number' && Number.isFinite(t) && t >= 0 ? t : DEFAULT_STUCK_AFTER_MS;
}

export const objectNodeId = (key: string) => `obj:${key}`;
export const controllerNodeId = (kind: string) => `ctl:${kind}`;

/** keyOfNodeId maps a node id back to the key used in URLs (`?select=`). */
export function keyOfNodeId(id: string): string {
  // A selector node stands for its referrer's selector: selecting it selects the referrer.
  if (id.startsWith('sel:')) return id.slice(4, id.lastIndexOf('#'));
  return id.slice(id.indexOf(':') + 1);
}

const REFERRER_STATE: Record<ReferrerState, ObjectNodeState> = {
  Resolved: 'resolved',
  Waiting: 'waiting',
  NotFound: 'notfound',
  NoMatch: 'notfound',
  Error: 'error',
};

/** How each referent state is drawn; the inspector uses the same table. */
export const REFERENT_STATE: Record<ReferentState, ObjectNodeState> = {
  Ready: 'resolved',
  NotReady: 'waiting',
  NotPrimed: 'waiting',
  NotFound: 'notfound',
  KindUnknown: 'error',
  Forbidden: 'error',
  WatchError: 'error',
};

const CONTROLLER_STATE: Record<ReferenceControllerState, ControllerNodeState> = {
  Starting: 'starting',
  Priming: 'priming',
  Active: 'active',
  Grace: 'grace',
  Cancelled: 'cancelled',
};

/** severity orders object states so a node that is both referrer and referent shows the worse one. */
export function severity(state: NodeState): number {
  const i = (OBJECT_STATES as readonly string[]).indexOf(state);
  return i < 0 ? 0 : i;
}

export function worstState(states: Iterable<NodeState>): NodeState {
  let worst: NodeState = 'resolved';
  for (const s of states) if (severity(s) > severity(worst)) worst = s;
  return worst;
}

/** ObjectContribution is what one referrer or referent entity says about its object's node. */
export interface ObjectContribution {
  state: ObjectNodeState;
  reason: string | undefined;
  since: number | undefined;
}

/** isOverdue: an unresolved referrer past the threshold counts as stuck before the server lists it. */
export function isOverdue(r: ReferrerEntity, now: number, stuckAfterMs: number): boolean {
  return r.state !== 'Resolved' && now - r.since > stuckAfterMs;
}

export function referrerContribution(
  r: ReferrerEntity,
  stuckReason: string | undefined,
  now: number,
  stuckAfterMs: number,
): ObjectContribution {
  let state = REFERRER_STATE[r.state] ?? 'error';
  if (state !== 'error' && (stuckReason !== undefined || isOverdue(r, now, stuckAfterMs))) state = 'stuck';
  return { state, reason: stuckReason ?? r.message ?? r.reason, since: r.since };
}

export function referentContribution(r: ReferentEntity): ObjectContribution {
  return {
    state: REFERENT_STATE[r.state] ?? 'error',
    reason: r.message ?? (r.state === 'Ready' ? undefined : r.state),
    since: r.changedAt,
  };
}

/** objectNode starts a node from its first contribution; later ones go through `mergeContribution`. */
export function objectNode(
  key: string,
  kind: string,
  namespace: string,
  roles: NodeRole[],
  c: ObjectContribution,
): GraphNode {
  const id = objectNodeId(key);
  return {
    id,
    type: 'object',
    key,
    label: nameOfKey(key),
    kind,
    namespace,
    state: c.state,
    roles,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.since !== undefined ? { since: c.since } : {}),
  };
}

/** mergeContribution keeps the worse state: a node that is both referrer and referent shows what needs attention. */
export function mergeContribution(node: GraphNode, c: ObjectContribution): void {
  if (severity(c.state) > severity(node.state)) {
    node.state = c.state;
    node.reason = c.reason;
    node.since = c.since;
  }
}

export function controllerNode(c: ReferenceControllerEntity): GraphNode {
  return {
    id: controllerNodeId(c.kind),
    type: 'controller',
    key: c.kind,
    label: c.kind.split('.')[0] ?? c.kind,
    kind: c.kind,
    namespace: '',
    state: CONTROLLER_STATE[c.state] ?? 'starting',
    roles: [],
    reason: c.reason,
    since: c.state === 'Cancelled' ? (c.cancelledAt ?? c.history.at(-1)?.at) : c.history.at(-1)?.at,
  };
}

/** stuckReasons maps each object key the server lists as stuck to the text the graph shows for it. */
export function stuckReasons(snapshot: Pick<Snapshot, 'stuck'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of snapshot.stuck ?? []) out.set(s.key, s.message || s.reason);
  return out;
}

/**
 * buildModel turns a snapshot into graph nodes and edges: one node per
 * object key (a referrer of several controllers, or an object that is both
 * referrer and referent, is still one node), one per reference controller
 * (cancelled ones included, with when and why), an edge per reference
 * labelled with its field path, and an edge from each referent to the
 * controller of its kind.
 */
export function buildModel(snapshot: Snapshot, opts: ModelOptions): GraphModel {
  return buildModelWithHidden(snapshot, opts).model;
}

/**
 * HiddenMatches is what a "+k more" node stands for: its selector and the
 * keys of the matched objects it hides, whose worst state it shows.
 */
export interface HiddenMatches {
  selector: string;
  keys: readonly string[];
}

/** buildModelWithHidden is buildModel plus, per "+k more" node id, the matches it hides (what incremental.ts patches it from). */
export function buildModelWithHidden(
  snapshot: Snapshot,
  opts: ModelOptions,
): { model: GraphModel; hidden: Map<string, HiddenMatches> } {
  const stuckAfter = opts.stuckAfterMs ?? stuckThresholdOf(snapshot);
  const nodes = new Map<string, GraphNode>();
  const stuckByKey = stuckReasons(snapshot);

  const upsertObject = (key: string, kind: string, namespace: string, role: NodeRole, c: ObjectContribution) => {
    const existing = nodes.get(objectNodeId(key));
    if (!existing) {
      nodes.set(objectNodeId(key), objectNode(key, kind, namespace, [role], c));
      return;
    }
    if (!existing.roles.includes(role)) existing.roles.push(role);
    mergeContribution(existing, c);
  };

  for (const r of snapshot.referrers ?? []) {
    upsertObject(
      r.key,
      r.kind,
      r.namespace,
      'referrer',
      referrerContribution(r, stuckByKey.get(r.key), opts.now, stuckAfter),
    );
  }
  for (const r of snapshot.referents ?? [])
    upsertObject(r.key, r.kind, namespaceOfKey(r.key), 'referent', referentContribution(r));
  for (const c of snapshot.controllers ?? []) nodes.set(controllerNodeId(c.kind), controllerNode(c));

  const edges = new Map<string, GraphEdge>();
  for (const ref of snapshot.references ?? []) {
    // A reference may name a referent (or come from a referrer) the snapshot has not reported yet.
    if (!nodes.has(objectNodeId(ref.referrer)))
      upsertObject(
        ref.referrer,
        kindOfKey(ref.referrer),
        namespaceOfKey(ref.referrer),
        'referrer',
        PLACEHOLDER_REFERRER,
      );
    if (!nodes.has(objectNodeId(ref.referent)))
      upsertObject(
        ref.referent,
        ref.kind || kindOfKey(ref.referent),
        namespaceOfKey(ref.referent),
        'referent',
        PLACEHOLDER_REFERENT,
      );
    const id = `ref:${objectNodeId(ref.referrer)}>${objectNodeId(ref.referent)}#${ref.fieldPath}`;
    const existing = edges.get(id);
    if (existing) existing.count += ref.count;
    else {
      const edge: GraphEdge = {
        id,
        source: objectNodeId(ref.referrer),
        target: objectNodeId(ref.referent),
        type: 'reference',
        label: ref.fieldPath,
        count: ref.count,
      };
      if (ref.selector !== undefined) edge.selector = ref.selector;
      edges.set(id, edge);
    }
  }
  const hidden = capSelectorEdges(nodes, edges, snapshot.referrers ?? []);
  for (const n of nodes.values()) {
    if (n.type !== 'object' || !n.roles.includes('referent')) continue;
    const ctl = controllerNodeId(n.kind);
    if (!nodes.has(ctl)) continue;
    const id = `watch:${n.id}`;
    edges.set(id, { id, source: n.id, target: ctl, type: 'watch', label: '', count: 1 });
  }
  return { model: { nodes: [...nodes.values()], edges: [...edges.values()] }, hidden };
}

/**
 * moreNodeStatus is a "+k more" node's state and reason: the worst state of
 * the matches it hides, so a NotReady Pod past the cap still shows.
 */
export function moreNodeStatus(selector: string, states: readonly NodeState[]): { state: NodeState; reason: string } {
  const unresolved = states.filter((s) => s !== 'resolved').length;
  const which = unresolved > 0 ? ` (${unresolved} of them not Ready)` : '';
  return {
    state: worstState(states),
    reason: `${states.length} more matches of ${selector || 'the empty selector'}${which}: the details list them`,
  };
}

/**
 * capSelectorEdges keeps a selector's first SELECTOR_EDGE_CAP edges (by
 * referent key) and draws the rest as one "+k more" node; a selector that
 * matches nothing, which has no edge, gets a node labelled with the selector.
 * Matched objects no drawn edge reaches are dropped with their edges.
 */
function capSelectorEdges(
  nodes: Map<string, GraphNode>,
  edges: Map<string, GraphEdge>,
  referrers: readonly ReferrerEntity[],
): Map<string, HiddenMatches> {
  const hiddenBy = new Map<string, HiddenMatches>();
  const bySelector = new Map<string, GraphEdge[]>();
  for (const e of edges.values()) {
    if (e.selector === undefined) continue;
    const id = selectorNodeId(keyOfNodeId(e.source), e.label);
    const list = bySelector.get(id);
    if (list) list.push(e);
    else bySelector.set(id, [e]);
  }
  for (const [id, list] of bySelector) {
    if (list.length <= SELECTOR_EDGE_CAP) continue;
    list.sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
    const hidden = list.slice(SELECTOR_EDGE_CAP);
    for (const e of hidden) edges.delete(e.id);
    const first = hidden[0]!;
    const target = nodes.get(first.target);
    const referrer = keyOfNodeId(first.source);
    const selector = first.selector ?? '';
    hiddenBy.set(id, { selector, keys: hidden.map((e) => keyOfNodeId(e.target)) });
    nodes.set(id, {
      id,
      type: 'object',
      key: referrer,
      label: `+${hidden.length} more`,
      kind: target?.kind ?? '',
      namespace: namespaceOfKey(referrer),
      ...moreNodeStatus(
        selector,
        hidden.map((e) => nodes.get(e.target)?.state ?? PLACEHOLDER_REFERENT.state),
      ),
      roles: ['referent'],
      size: hidden.length,
    });
    edges.set(`ref:${first.source}>${id}`, {
      id: `ref:${first.source}>${id}`,
      source: first.source,
      target: id,
      type: 'reference',
      label: first.label,
      count: hidden.length,
      selector: first.selector,
    });
  }
  const reached = new Set<string>();
  for (const e of edges.values()) reached.add(e.target);
  for (const list of bySelector.values())
    for (const e of list) if (!reached.has(e.target) && !hasOwnRole(nodes.get(e.target))) nodes.delete(e.target);
  for (const r of referrers) {
    for (const s of r.selections ?? []) {
      if (s.state !== 'NoMatch') continue;
      const source = objectNodeId(r.key);
      const id = selectorNodeId(r.key, s.fieldPath);
      if (nodes.has(id) || !nodes.has(source)) continue;
      nodes.set(id, {
        id,
        type: 'object',
        key: r.key,
        label: `${shortKind(s.kind)}: ${s.selector === '' ? '(every object)' : s.selector}`,
        kind: s.kind,
        namespace: r.namespace,
        state: 'notfound',
        roles: ['referent'],
        reason: `no ${shortKind(s.kind)} in ${s.where} matches ${s.selector || 'the empty selector'}`,
      });
      edges.set(`ref:${source}>${id}`, {
        id: `ref:${source}>${id}`,
        source,
        target: id,
        type: 'reference',
        label: s.fieldPath,
        count: 1,
        selector: s.selector,
      });
    }
  }
  return hiddenBy;
}

/** hasOwnRole says whether a node is also a referrer: it stays on the graph for its own references. */
function hasOwnRole(node: GraphNode | undefined): boolean {
  return node !== undefined && node.roles.includes('referrer');
}

const PLACEHOLDER_REFERRER: ObjectContribution = { state: 'waiting', reason: 'not reconciled yet', since: undefined };
const PLACEHOLDER_REFERENT: ObjectContribution = { state: 'waiting', reason: 'not observed yet', since: undefined };

/** shortKind is `Database` for `Database.demo.refwatch.dev`. */
export function shortKind(kind: string): string {
  return kind.split('.')[0] ?? kind;
}
