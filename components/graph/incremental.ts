import type { Snapshot } from '@/lib/changelog/wire';
import {
  buildModelWithHidden,
  controllerNode,
  isOverdue,
  mergeContribution,
  moreNodeStatus,
  objectNode,
  objectNodeId,
  referentContribution,
  referrerContribution,
  stuckReasons,
  stuckThresholdOf,
  type GraphModel,
  type GraphNode,
  type HiddenMatches,
  type ModelOptions,
} from './model';

/**
 * ModelState is a built model together with what it was built from, and
 * the positions that let a status-only change patch it: where each object
 * key's referrer and referent entities sit in the snapshot, and where each
 * node sits in the model, and which "+k more" nodes hide each object key.
 * Positions depend only on the structure, so they stay valid for as long as
 * the structure does.
 */
export interface ModelState {
  model: GraphModel;
  snapshot: Snapshot;
  now: number;
  stuckAfterMs: number;
  referrersByKey: ReadonlyMap<string, readonly number[]>;
  referentByKey: ReadonlyMap<string, number>;
  nodeAt: ReadonlyMap<string, number>;
  /** "+k more" node id → the matches it hides. */
  hidden: ReadonlyMap<string, HiddenMatches>;
  /** object key → the "+k more" nodes hiding it. */
  hiddenIn: ReadonlyMap<string, readonly string[]>;
}

/**
 * ModelChange says how a new snapshot relates to the one a model was built from:
 *   none        nothing the graph shows changed
 *   status      the same referrers, referents, controllers and references, at the
 *               same positions; some of their states changed (`keys`: object keys
 *               to recompute, `controllers`: indices into snapshot.controllers)
 *   structural  something came, went, moved or changed identity: rebuild
 */
export type ModelChange =
  | { kind: 'none' }
  | { kind: 'status'; keys: ReadonlySet<string>; controllers: readonly number[] }
  | { kind: 'structural'; why: string };

/** buildModelState is the full path: build the model from scratch and index it. */
export function buildModelState(snapshot: Snapshot, opts: ModelOptions): ModelState {
  const stuckAfterMs = opts.stuckAfterMs ?? stuckThresholdOf(snapshot);
  const { model, hidden } = buildModelWithHidden(snapshot, { now: opts.now, stuckAfterMs });
  const hiddenIn = new Map<string, string[]>();
  for (const [id, { keys }] of hidden)
    for (const key of keys) {
      const list = hiddenIn.get(key);
      if (list) list.push(id);
      else hiddenIn.set(key, [id]);
    }
  const referrersByKey = new Map<string, number[]>();
  snapshot.referrers.forEach((r, i) => {
    const list = referrersByKey.get(r.key);
    if (list) list.push(i);
    else referrersByKey.set(r.key, [i]);
  });
  const referentByKey = new Map<string, number>();
  // buildModel folds every referent of a key; a key reported twice takes the full path (see classifyChange).
  snapshot.referents.forEach((r, i) => referentByKey.set(r.key, i));
  const nodeAt = new Map<string, number>();
  model.nodes.forEach((n, i) => nodeAt.set(n.id, i));
  return { model, snapshot, now: opts.now, stuckAfterMs, referrersByKey, referentByKey, nodeAt, hidden, hiddenIn };
}

/**
 * classifyChange compares entity arrays by identity, then entity by entity:
 * applyDelta replaces only the entities a delta names and keeps every other
 * one, so an unchanged entity is the same object. A changed entity is a
 * status change when its id, key, kind and namespace stay; references and
 * anything that moves an entity are structural.
 */
export function classifyChange(prev: ModelState, next: Snapshot, now: number, stuckAfterMs: number): ModelChange {
  const was = prev.snapshot;
  if (next.references !== was.references && !sameEntities(was.references, next.references))
    return { kind: 'structural', why: 'references changed' };
  if (next.referrers.length !== was.referrers.length) return { kind: 'structural', why: 'referrers came or went' };
  if (next.referents.length !== was.referents.length) return { kind: 'structural', why: 'referents came or went' };
  if (next.controllers.length !== was.controllers.length)
    return { kind: 'structural', why: 'reference controllers came or went' };
  if (prev.referentByKey.size !== next.referents.length)
    return { kind: 'structural', why: 'a referent key is reported twice' };

  const keys = new Set<string>();
  if (next.referrers !== was.referrers) {
    for (let i = 0; i < next.referrers.length; i++) {
      const a = was.referrers[i]!;
      const b = next.referrers[i]!;
      if (a === b) continue;
      if (a.id !== b.id || a.key !== b.key || a.kind !== b.kind || a.namespace !== b.namespace)
        return { kind: 'structural', why: `referrer ${b.key} replaced` };
      // A selector that starts or stops matching nothing adds or removes its selector node.
      if (noMatchOf(a) !== noMatchOf(b)) return { kind: 'structural', why: `referrer ${b.key}'s selections changed` };
      keys.add(b.key);
    }
  }
  if (next.referents !== was.referents) {
    for (let i = 0; i < next.referents.length; i++) {
      const a = was.referents[i]!;
      const b = next.referents[i]!;
      if (a === b) continue;
      if (a.id !== b.id || a.key !== b.key || a.kind !== b.kind)
        return { kind: 'structural', why: `referent ${b.key} replaced` };
      keys.add(b.key);
    }
  }
  const controllers: number[] = [];
  if (next.controllers !== was.controllers) {
    for (let i = 0; i < next.controllers.length; i++) {
      const a = was.controllers[i]!;
      const b = next.controllers[i]!;
      if (a === b) continue;
      if (a.id !== b.id || a.kind !== b.kind)
        return { kind: 'structural', why: `reference controller ${b.kind} replaced` };
      controllers.push(i);
    }
  }
  if (next.stuck !== was.stuck) {
    const before = stuckReasons(was);
    const after = stuckReasons(next);
    for (const [key, reason] of after) if (before.get(key) !== reason) keys.add(key);
    for (const key of before.keys()) if (!after.has(key)) keys.add(key);
  }
  if (now !== prev.now || stuckAfterMs !== prev.stuckAfterMs) {
    // The clock moved: referrers crossing the threshold turn stuck (or back, when the threshold grew).
    for (const r of next.referrers)
      if (isOverdue(r, now, stuckAfterMs) !== isOverdue(r, prev.now, prev.stuckAfterMs)) keys.add(r.key);
  }
  if (keys.size === 0 && controllers.length === 0) return { kind: 'none' };
  return { kind: 'status', keys, controllers };
}

/**
 * updateModel returns the model for `snapshot`: patched from `prev` when
 * only states changed (the unchanged nodes and the edges are the same
 * objects as before, so later stages can tell what changed by identity),
 * rebuilt otherwise. Either way it deep-equals buildModel(snapshot, opts).
 */
export function updateModel(prev: ModelState | undefined, snapshot: Snapshot, opts: ModelOptions): ModelState {
  if (!prev) return buildModelState(snapshot, opts);
  const stuckAfterMs = opts.stuckAfterMs ?? stuckThresholdOf(snapshot);
  const change = classifyChange(prev, snapshot, opts.now, stuckAfterMs);
  if (change.kind === 'structural') return buildModelState(snapshot, opts);
  const base = { ...prev, snapshot, now: opts.now, stuckAfterMs };
  if (change.kind === 'none') return base;
  return { ...base, model: patchModel(prev, snapshot, change, opts.now, stuckAfterMs) };
}

function patchModel(
  prev: ModelState,
  snapshot: Snapshot,
  change: Extract<ModelChange, { kind: 'status' }>,
  now: number,
  stuckAfterMs: number,
): GraphModel {
  const nodes = prev.model.nodes.slice();
  const stuckByKey = change.keys.size > 0 ? stuckReasons(snapshot) : new Map<string, string>();
  const summaries = new Set<string>();
  for (const key of change.keys) {
    for (const id of prev.hiddenIn.get(key) ?? []) summaries.add(id);
    const at = prev.nodeAt.get(objectNodeId(key));
    if (at === undefined) continue; // a stuck entry for an object the graph does not show, or a hidden match
    const node = recomputeObject(nodes[at]!, snapshot, prev, stuckByKey, now, stuckAfterMs);
    if (node) nodes[at] = node;
  }
  // A "+k more" node shows the worst state of the matches it hides, which are not drawn themselves.
  for (const id of summaries) {
    const at = prev.nodeAt.get(id);
    const matches = prev.hidden.get(id);
    if (at === undefined || !matches) continue;
    const states = matches.keys.map((key) => {
      const placeholder = objectNode(key, '', '', [], { state: 'waiting', reason: undefined, since: undefined });
      return (recomputeObject(placeholder, snapshot, prev, stuckByKey, now, stuckAfterMs) ?? placeholder).state;
    });
    const status = moreNodeStatus(matches.selector, states);
    const old = nodes[at]!;
    if (old.state !== status.state || old.reason !== status.reason) nodes[at] = { ...old, ...status };
  }
  for (const i of change.controllers) {
    const node = controllerNode(snapshot.controllers[i]!);
    const at = prev.nodeAt.get(node.id);
    if (at !== undefined) nodes[at] = node;
  }
  return { nodes, edges: prev.model.edges };
}

/** recomputeObject folds the key's entities in buildModel's order; a node drawn only from references keeps its placeholder. */
function recomputeObject(
  old: GraphNode,
  snapshot: Snapshot,
  prev: ModelState,
  stuckByKey: ReadonlyMap<string, string>,
  now: number,
  stuckAfterMs: number,
): GraphNode | undefined {
  let node: GraphNode | undefined;
  const add = (c: Parameters<typeof mergeContribution>[1]) => {
    if (!node) node = objectNode(old.key, old.kind, old.namespace, old.roles, c);
    else mergeContribution(node, c);
  };
  for (const i of prev.referrersByKey.get(old.key) ?? [])
    add(referrerContribution(snapshot.referrers[i]!, stuckByKey.get(old.key), now, stuckAfterMs));
  const referent = prev.referentByKey.get(old.key);
  if (referent !== undefined) add(referentContribution(snapshot.referents[referent]!));
  return node;
}

/** noMatchOf names a referrer's selectors that match nothing: what its selector nodes are drawn from. */
function noMatchOf(r: Snapshot['referrers'][number]): string {
  return (r.selections ?? [])
    .filter((s) => s.state === 'NoMatch')
    .map((s) => `${s.fieldPath}|${s.kind}|${s.selector}|${s.where}`)
    .join(',');
}

function sameEntities<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
