import type { ObjectKey } from '../model';
import type { WatchError, WatchPhase } from '../engine/informer-source';

/**
 * The entities refwatch makes observable. Each lives in the change log under
 * (entity kind, id); the API snapshot and the SSE deltas carry these shapes.
 * `kind` (an object kind key such as `Database.demo.refwatch.dev`) and
 * `namespace` are what the change log's filters match on.
 */
export type EntityKind = 'referrer' | 'referent' | 'reference' | 'controller' | 'watch' | 'queue' | 'event';

export const ENTITY_KINDS: readonly EntityKind[] = [
  'referrer',
  'referent',
  'reference',
  'controller',
  'watch',
  'queue',
  'event',
];

/** State of a referrer as its last reconcile saw it. "Stuck" is derived: unresolved longer than a threshold. */
export type ReferrerState = 'Resolved' | 'Waiting' | 'NotFound' | 'NoMatch' | 'Error';

/** State of a referent as seen from the shared cache. */
export type ReferentState =
  'Ready' | 'NotReady' | 'NotFound' | 'NotPrimed' | 'KindUnknown' | 'Forbidden' | 'WatchError';

export interface ReferrerEntity {
  id: string; // `${controller}|${key}`
  key: ObjectKey;
  controller: string;
  kind: string;
  namespace: string;
  state: ReferrerState;
  /** Which referent holds it up, and why, when not Resolved. */
  reason?: string;
  message?: string;
  /** When the referrer entered its current state (epoch ms). */
  since: number;
  references: number;
  reconciles: number;
  lastReconcileAt?: number;
  resolvedAt?: number;
  /** Something to look at that does not block it: a NetworkPolicy whose podSelector matches nothing. */
  warning?: string;
  /** Its selector references, from its last reconcile: what each selects, where, and how many it matched. */
  selections?: SelectionSummary[];
}

/** SelectionSummary is one selector reference of a referrer as the change log keeps it. */
export interface SelectionSummary {
  fieldPath: string;
  /** The selected kind, `Kind.group`. */
  kind: string;
  /** kubectl form (`app=web,tier in (a,b)`); '' selects everything. */
  selector: string;
  /** Where it looked: a namespace, `any namespace`, `namespaces with team=shop`, `the cluster`. */
  where: string;
  state: 'Ready' | 'NoMatch' | 'NotReady' | 'NotPrimed' | 'NoSelector';
  matched: number;
  ready: number;
  /** What to do about it, when the reference says better than the selector's generic fix (a lookup). */
  fix?: string;
}

export interface ReferentEntity {
  id: ObjectKey;
  key: ObjectKey;
  kind: string;
  namespace: string;
  state: ReferentState;
  message?: string;
  referencedBy: number;
  uid?: string;
  /** The object's resourceVersion when it reached this state; an update that changes no shown field leaves it. */
  resourceVersion?: string;
  /** The field manager (managedFields) that changed the object last when it reached this state; its name only. */
  manager?: string;
  /** When the state (or its message, or the object's uid) last changed. */
  changedAt: number;
}

export interface ReferenceEntity {
  id: string; // `${controller}|${referrer}|${referent}|${fieldPath}`
  controller: string;
  referrer: ObjectKey;
  referent: ObjectKey;
  fieldPath: string;
  /** Multiplicity: the same referent named twice from one field path counts twice. */
  count: number;
  /** Set when a label selector declared it (the referent is one of its matches): the selector in kubectl form. */
  selector?: string;
  kind: string; // the referent's kind
  namespace: string; // the referrer's namespace
}

export type ReferenceControllerState = 'Starting' | 'Priming' | 'Active' | 'Grace' | 'Cancelled';

export interface ControllerTransition {
  at: number;
  state: ReferenceControllerState;
  reason: string;
}

/** One reference controller: the shared watch, cache and dispatcher of one referent kind. */
export interface ReferenceControllerEntity {
  id: string; // the kind key, or `Kind.group/namespace` for a per-namespace controller
  kind: string;
  /** Set when the controller watches one namespace only (the `namespaces` option, or RBAC). */
  namespace?: string;
  state: ReferenceControllerState;
  reason: string;
  references: number;
  referents: number; // objects in its cache
  startedAt: number;
  primedAt?: number;
  primingMs?: number;
  graceUntil?: number;
  cancelledAt?: number;
  dispatches: number;
  errors: WatchError[]; // most recent last, bounded
  history: ControllerTransition[]; // most recent last, bounded
  /** 'poll': an observer, which polls each referent instead of watching the kind; absent for a watch. */
  source?: 'poll';
  /** An observer's poll interval (ms), its polls so far, and when its last poll ended (epoch ms). */
  intervalMs?: number;
  polls?: number;
  lastPollAt?: number;
}

export interface WatchEntity {
  id: string; // watchTargetKey
  kind: string;
  namespace?: string;
  labelSelector?: string;
  phase: WatchPhase;
  primed: boolean;
  resourceVersion?: string;
  objects: number;
  subscribers: number;
  watchesOpened: number;
  lists: number;
  lastError?: WatchError;
}

export interface QueueEntity {
  id: string; // the controller's name
  controller: string;
  depth: number;
  processing: number;
  adds: number;
  retries: number;
  reconciles: number;
  errors: number;
  workers: number;
  longestRunningMs: number;
}

export type EventType =
  | 'Resolved'
  | 'Waiting'
  | 'ReferentChanged'
  | 'ReconcileError'
  | 'ControllerStarted'
  | 'ControllerPrimed'
  | 'ControllerGrace'
  | 'ControllerCancelled'
  | 'ControllerReactivated'
  | 'WatchError'
  | 'WatchRecovered'
  /** A referent that an admission warning named missing appeared within --admission-grace. */
  | 'AdmissionWarningResolved';

/** An event in the live timeline. Events expire from the log silently (no tombstones). */
export interface EventEntity {
  id: string;
  at: number;
  type: EventType;
  message: string;
  key?: ObjectKey;
  kind?: string;
  namespace?: string;
  controller?: string;
  latencyMs?: number;
}

export interface EntityByKind {
  referrer: ReferrerEntity;
  referent: ReferentEntity;
  reference: ReferenceEntity;
  controller: ReferenceControllerEntity;
  watch: WatchEntity;
  queue: QueueEntity;
  event: EventEntity;
}

export type AnyEntity = EntityByKind[EntityKind];
