import type { Change, Snapshot, StuckEntry } from '../changelog';
import type { Explanation } from '../diagnose';
import type { ObjectKey } from '../model';
import type { KindCatalog } from './kinds';

/** Graph is the part of a snapshot that trees and watches read. */
export type Graph = Pick<Snapshot, 'referrers' | 'referents' | 'references'>;

export interface StuckQuery {
  olderThanMs: number;
  /** Omitted: every namespace. */
  namespace?: string;
  kind?: string;
}

/** WatchScope is what `watch` follows: one object (and its referents), or a namespace, or everything. */
export interface WatchScope {
  key?: ObjectKey;
  namespace?: string;
}

/** WatchMessage is what a backend's watch yields: a whole graph first (and after a resync), then changes. */
export type WatchMessage = { type: 'snapshot'; graph: Graph } | { type: 'delta'; changes: Change[] };

/** One recorded transition, as GET /api/v1/history returns it (docs/history.md). */
export interface HistoryTransition {
  id: number;
  at: number;
  type: 'referrer' | 'referent' | 'reference' | 'controller' | 'warning';
  object: ObjectKey;
  namespace: string;
  state: string;
  reason?: string;
  message?: string;
  related?: ObjectKey;
  resourceVersion?: string;
  manager?: string;
  controller?: string;
}

export interface HistoryQuery {
  key: ObjectKey;
  /** Epoch ms. */
  since?: number;
  limit: number;
}

/**
 * Backend answers the CLI's questions, either from a running refwatch server
 * (API v1) or from an engine the CLI runs itself against a kubeconfig.
 */
export interface Backend {
  readonly kinds: KindCatalog;
  /** The namespace TYPE/NAME objects live in: -n, else the kubeconfig context's, else default. */
  readonly namespace: string;
  /** Whether a referrer's `since` is when it entered its state; false when watching began only now. */
  readonly knowsSince: boolean;
  explain(key: ObjectKey): Promise<Explanation>;
  stuck(q: StuckQuery): Promise<StuckEntry[]>;
  /** graph holds root's references, transitively; with reverse, the references to root instead. */
  graph(root: ObjectKey, opts: { reverse: boolean; allNamespaces: boolean }): Promise<Graph>;
  watch(scope: WatchScope, signal: AbortSignal): AsyncIterable<WatchMessage>;
  /** history reads a server's stored timeline of one object, oldest first; a server backend only. */
  history?(q: HistoryQuery): Promise<HistoryTransition[]>;
  /** close stops every watch and request; awaited. */
  close(): Promise<void>;
}
