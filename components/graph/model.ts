import type { ReferenceControllerState, ReferentState, ReferrerState } from '@/lib/changelog/entities';
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
}

export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface ModelOptions {
  now: number;
  /** A referrer unresolved for longer than this counts as stuck even before the server says so. */
  stuckAfterMs?: number;
}

export const DEFAULT_STUCK_AFTER_MS = 30_000;

export const objectNodeId = (key: string) => `obj:${key}`;
export const controllerNodeId = (kind: string) => `ctl:${kind}`;

/** keyOfNodeId maps a node id back to the key used in URLs (`?select=`). */
export function keyOfNodeId(id: string): string {
  return id.slice(id.indexOf(':') + 1);
}

const REFERRER_STATE: Record<ReferrerState, ObjectNodeState> = {
  Resolved: 'resolved',
  Waiting: 'waiting',
  NotFound: 'notfound',
  Error: 'error',
};

const REFERENT_STATE: Record<ReferentState, ObjectNodeState> = {
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

/**
 * buildModel turns a snapshot into graph nodes and edges: one node per
 * object key (a referrer of several controllers, or an object that is both
 * referrer and referent, is still one node), one per reference controller
 * (cancelled ones included, with when and why), an edge per reference
 * labelled with its field path, and an edge from each referent to the
 * controller of its kind.
 */
export function buildModel(snapshot: Snapshot, opts: ModelOptions): GraphModel {
  const stuckAfter = opts.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  const nodes = new Map<string, GraphNode>();
  const stuckByKey = new Map<string, string>();
  for (const s of snapshot.stuck ?? []) stuckByKey.set(s.key, s.message || s.reason);

  const upsertObject = (key: string, kind: string, namespace: string, role: NodeRole, state: ObjectNodeState, reason: string | undefined, since: number | undefined) => {
    const id = objectNodeId(key);
    const existing = nodes.get(id);
    if (!existing) {
      nodes.set(id, { id, type: 'object', key, label: nameOfKey(key), kind, namespace, state, roles: [role], ...(reason ? { reason } : {}), ...(since !== undefined ? { since } : {}) });
      return;
    }
    if (!existing.roles.includes(role)) existing.roles.push(role);
    if (severity(state) > severity(existing.state)) {
      existing.state = state;
      existing.reason = reason;
      existing.since = since;
    }
  };

  for (const r of snapshot.referrers ?? []) {
    let state = REFERRER_STATE[r.state] ?? 'error';
    const stuckReason = stuckByKey.get(r.key);
    const overdue = r.state !== 'Resolved' && opts.now - r.since > stuckAfter;
    if (state !== 'error' && (stuckReason !== undefined || overdue)) state = 'stuck';
    upsertObject(r.key, r.kind, r.namespace, 'referrer', state, stuckReason ?? r.message ?? r.reason, r.since);
  }
  for (const r of snapshot.referents ?? []) {
    upsertObject(r.key, r.kind, namespaceOfKey(r.key), 'referent', REFERENT_STATE[r.state] ?? 'error', r.message ?? (r.state === 'Ready' ? undefined : r.state), r.changedAt);
  }
  for (const c of snapshot.controllers ?? []) {
    const id = controllerNodeId(c.kind);
    nodes.set(id, {
      id,
      type: 'controller',
      key: c.kind,
      label: c.kind.split('.')[0] ?? c.kind,
      kind: c.kind,
      namespace: '',
      state: CONTROLLER_STATE[c.state] ?? 'starting',
      roles: [],
      reason: c.reason,
      since: c.state === 'Cancelled' ? (c.cancelledAt ?? c.history.at(-1)?.at) : c.history.at(-1)?.at,
    });
  }

  const edges = new Map<string, GraphEdge>();
  for (const ref of snapshot.references ?? []) {
    // A reference may name a referent (or come from a referrer) the snapshot has not reported yet.
    if (!nodes.has(objectNodeId(ref.referrer))) upsertObject(ref.referrer, kindOfKey(ref.referrer), namespaceOfKey(ref.referrer), 'referrer', 'waiting', 'not reconciled yet', undefined);
    if (!nodes.has(objectNodeId(ref.referent))) upsertObject(ref.referent, ref.kind || kindOfKey(ref.referent), namespaceOfKey(ref.referent), 'referent', 'waiting', 'not observed yet', undefined);
    const id = `ref:${objectNodeId(ref.referrer)}>${objectNodeId(ref.referent)}#${ref.fieldPath}`;
    const existing = edges.get(id);
    if (existing) existing.count += ref.count;
    else edges.set(id, { id, source: objectNodeId(ref.referrer), target: objectNodeId(ref.referent), type: 'reference', label: ref.fieldPath, count: ref.count });
  }
  for (const n of nodes.values()) {
    if (n.type !== 'object' || !n.roles.includes('referent')) continue;
    const ctl = controllerNodeId(n.kind);
    if (!nodes.has(ctl)) continue;
    const id = `watch:${n.id}`;
    edges.set(id, { id, source: n.id, target: ctl, type: 'watch', label: '', count: 1 });
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

/** shortKind is `Database` for `Database.demo.refwatch.dev`. */
export function shortKind(kind: string): string {
  return kind.split('.')[0] ?? kind;
}
