import type {
  EntityKind,
  ReferrerState,
  EntityByKind,
  EventEntity,
  QueueEntity,
  ReferenceControllerEntity,
  ReferenceEntity,
  ReferentEntity,
  ReferrerEntity,
  WatchEntity,
} from './entities';
import type { Rows } from './chunked';

/** What the API says about the cluster refwatch is connected to. No credential ever appears here. */
export interface ClusterInfo {
  mode: 'embedded' | 'kubeconfig' | 'in-cluster';
  server: string; // URL
  context?: string;
  reachable: boolean;
  version?: string; // the API server's gitVersion
  message?: string;
  /**
   * Kinds watched in fewer places than asked, because listing them in all
   * namespaces is Forbidden: "Pod: cluster-wide list forbidden; watching
   * namespace team-a (from the context)".
   */
  scopeFallbacks?: string[];
  /** Which rule packs are on and why: "cert-manager: on, cert-manager.io/v1 served", "core: on, always". */
  packs?: string[];
  /**
   * ReferenceRules objects and what became of each ("ReferenceRules platform/acme: applied (generation 2): 1 rule
   * for Widget.acme.example"), with problems that name the field; or one line on why they are not watched.
   */
  referenceRules?: { message: string; ok: boolean; problems: string[] }[];
}

/** A stuck referrer: unresolved for longer than the threshold. */
export interface StuckEntry {
  id: string;
  key: string;
  controller: string;
  state: ReferrerEntity['state'];
  since: number;
  ageMs: number;
  reason: string; // NotFound | NotReady | KindUnknown | Forbidden | NotPrimed | WatchError
  message: string;
  fix: string;
  referent?: string;
  /** The deepest cause, when the blocking referent is itself a referrer blocked by something (see lib/diagnose/root-cause.ts). */
  rootCause?: RootCause;
  /**
   * The stuck workload that owns this referrer through controller ownerReferences
   * (a Pod's Deployment, through its ReplicaSet) and is blocked by the same
   * cause: lists show the referrer under it ("and its 3 Pods").
   */
  workload?: string;
}

/**
 * RootCause is where a chain of blocked referrers ends: `path` runs from the
 * referrer through each referent that is itself a blocked referrer to the
 * deepest referent, whose state, message and fix are given. With `cycle` the
 * path's last key is one already on it; with `truncated` the walk stopped at
 * its depth bound while the last referent was still blocked.
 */
export interface RootCause {
  path: string[];
  referent: string;
  state: string;
  reason: string;
  message: string;
  fix: string;
  cycle?: boolean;
  truncated?: boolean;
}

/**
 * GET /api/v1/snapshot, and the first message of GET /api/v1/stream, as a
 * client holds it. On the wire it travels in the lean format of codec.ts
 * (`WireSnapshot`; docs/api.md, "The lean wire format"): each reference once,
 * without the fields its others give (an id is controller|referrer|referent|
 * fieldPath, a namespace the referrer key's, a kind the referent key's), keys
 * split into kind / namespace / name and every string interned in a table of
 * its own message, columns instead of objects. Tables are per message, not
 * per stream, so every message decodes alone, a resumed stream included.
 * decodeSnapshot and decodeDelta give back these shapes exactly.
 */
export interface Snapshot {
  revision: number;
  cluster: ClusterInfo;
  controllers: ReferenceControllerEntity[];
  watches: WatchEntity[];
  referrers: ReferrerEntity[];
  referents: ReferentEntity[];
  references: ReferenceEntity[];
  queues: QueueEntity[];
  events: EventEntity[];
  stuck: StuckEntry[];
  /** How long a referrer stays unresolved before the server calls it stuck (REFWATCH_STUCK_THRESHOLD); clients use it for their own count. */
  stuckThresholdMs?: number;
}

/**
 * SnapshotRows is a snapshot as the server captures and encodes it: its three
 * lists that grow with the cluster are Rows, the chunks the change log read
 * them into, so that no array of a million references is made to be read
 * once. A Snapshot is SnapshotRows.
 */
export type SnapshotRows = Omit<Snapshot, 'referrers' | 'referents' | 'references'> & {
  referrers: Rows<ReferrerEntity>;
  referents: Rows<ReferentEntity>;
  references: Rows<ReferenceEntity>;
};

/** Change is one entity's latest state since a revision, or its tombstone. */
export type Change = {
  [K in EntityKind]:
    | { entity: K; id: string; revision: number; removed: false; value: EntityByKind[K] }
    | { entity: K; id: string; revision: number; removed: true };
}[EntityKind];

/**
 * SSE wire format of GET /api/v1/stream (each message's `id:` is its revision):
 *   event: snapshot   data: WireSnapshot  (decodeSnapshot gives the Snapshot)
 *   event: delta      data: WireDelta     (decodeDelta gives the Delta) coalesced per entity, oldest first
 *   event: cluster    data: ClusterInfo
 *   event: resync     data: {revision}    the client fell behind; a snapshot follows
 *   event: summary    data: Summary       the overview's counts (GET /api/v1/summary), at most once a second when they change
 *   `: ping` comment lines every 15 s.
 */
export interface Delta {
  from: number;
  revision: number;
  changes: Change[];
}

/** Map from the snapshot's array fields to entity kinds, for applying deltas. */
export const SNAPSHOT_FIELD: { [K in EntityKind]: keyof Snapshot } = {
  referrer: 'referrers',
  referent: 'referents',
  reference: 'references',
  controller: 'controllers',
  watch: 'watches',
  queue: 'queues',
  event: 'events',
};

/** Counts for one namespace or one kind. `stuck` referrers are unresolved for longer than the threshold. */
export interface SummaryGroup {
  name: string;
  referrers: number;
  states: Record<ReferrerState, number>;
  references: number;
  /** Stuck referrers, and the references they hold. */
  stuck: number;
  stuckReferences: number;
}

/** One stuck referrer, for the overview's list; the oldest come first. */
export interface SummaryStuck {
  key: string;
  controller: string;
  namespace: string;
  kind: string;
  state: ReferrerState;
  since: number;
  reason?: string;
}

/**
 * GET /api/v1/summary, and `event: summary` on the stream: what the overview
 * draws, a few hundred bytes per namespace whatever the number of references.
 * Groups are sorted stuck first, then by unresolved referrers, then by name.
 */
export interface Summary {
  revision: number;
  stuckThresholdMs: number;
  totals: Omit<SummaryGroup, 'name'> & { referents: number };
  namespaces: SummaryGroup[];
  kinds: SummaryGroup[];
  /** The oldest stuck referrers, at most `stuckListLimit`; `totals.stuck` says how many there are. */
  stuckList: SummaryStuck[];
}
