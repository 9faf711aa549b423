import type { ReferrerState } from '../changelog';
import type { ObjectKey } from '../model';
import type { Graph } from './backend';

/** TreeNode is one object in a reference tree, with the state it is in and the field that led to it. */
export interface TreeNode {
  key: ObjectKey;
  state: string;
  fieldPath?: string;
  message?: string;
  /** Set when the object already appears higher up on this branch: its children are not repeated. */
  cycle?: boolean;
  /** Set on the deepest cause of the root's chain of blocked referrers (see lib/diagnose/root-cause.ts). */
  rootCause?: boolean;
  children: TreeNode[];
}

const SEVERITY: Record<ReferrerState, number> = { Resolved: 0, Waiting: 1, NotFound: 2, NoMatch: 2, Error: 3 };

/** The worst state any controller gives a referrer, or undefined when it is no referrer. */
function referrerState(g: Graph, key: ObjectKey): ReferrerState | undefined {
  let worst: ReferrerState | undefined;
  for (const r of g.referrers)
    if (r.key === key && (worst === undefined || SEVERITY[r.state] > SEVERITY[worst])) worst = r.state;
  return worst;
}

/** Distinct (referent, field) pairs per referrer, or per referent with reverse. */
function edges(g: Graph, reverse: boolean): Map<ObjectKey, { key: ObjectKey; fieldPath: string }[]> {
  const out = new Map<ObjectKey, { key: ObjectKey; fieldPath: string }[]>();
  const seen = new Set<string>();
  for (const r of g.references) {
    const [from, to] = reverse ? [r.referent, r.referrer] : [r.referrer, r.referent];
    const id = `${from}|${to}|${r.fieldPath}`;
    if (seen.has(id)) continue;
    seen.add(id);
    let list = out.get(from);
    if (!list) out.set(from, (list = []));
    list.push({ key: to, fieldPath: r.fieldPath });
  }
  return out;
}

/**
 * buildTree lays out the references from root: referrer → referents, each
 * referent followed further when it refers to objects itself; with reverse,
 * object ← its referrers, and theirs. Referents show their state as their
 * kind's cache sees it, referrers the state their reconcile reported.
 */
export function buildTree(g: Graph, root: ObjectKey, reverse: boolean): TreeNode {
  const next = edges(g, reverse);
  const referents = new Map(g.referents.map((r) => [r.key, r]));
  const walk = (key: ObjectKey, fieldPath: string | undefined, path: Set<ObjectKey>, isRoot: boolean): TreeNode => {
    const asReferent = referents.get(key);
    // Going forward, an edge leads to a referent; going back, to a referrer.
    const state =
      (reverse || isRoot
        ? (referrerState(g, key) ?? asReferent?.state)
        : (asReferent?.state ?? referrerState(g, key))) ?? 'Unknown';
    const node: TreeNode = { key, state, children: [] };
    if (fieldPath !== undefined) node.fieldPath = fieldPath;
    if (!reverse && asReferent?.message && (!isRoot || referrerState(g, key) === undefined))
      node.message = asReferent.message;
    if (path.has(key)) {
      node.cycle = true;
      return node;
    }
    const inner = new Set(path).add(key);
    for (const e of next.get(key) ?? []) node.children.push(walk(e.key, e.fieldPath, inner, false));
    return node;
  };
  return walk(root, undefined, new Set(), true);
}

/** treeLines flattens a tree into rows with their box-drawing prefixes, in order. */
export function treeLines(root: TreeNode): { prefix: string; node: TreeNode }[] {
  const out: { prefix: string; node: TreeNode }[] = [{ prefix: '', node: root }];
  const visit = (node: TreeNode, indent: string) => {
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1;
      out.push({ prefix: `${indent}${last ? '└── ' : '├── '}`, node: child });
      visit(child, indent + (last ? '    ' : '│   '));
    });
  };
  visit(root, '');
  return out;
}

/** everyNode is true when pred holds for the root and all its descendants. */
export function everyNode(node: TreeNode, pred: (n: TreeNode) => boolean): boolean {
  return pred(node) && node.children.every((c) => everyNode(c, pred));
}

/**
 * markRootCause marks the node at the end of the root cause's path, found by
 * following the path's keys down from the tree's root; false when the tree
 * does not hold the whole path.
 */
export function markRootCause(root: TreeNode, path: readonly ObjectKey[]): boolean {
  if (path[0] !== root.key || path.length < 2) return false;
  let node = root;
  for (const key of path.slice(1)) {
    const child = node.children.find((c) => c.key === key);
    if (!child) return false;
    node = child;
  }
  node.rootCause = true;
  return true;
}
