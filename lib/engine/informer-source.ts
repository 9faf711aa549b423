import type { CachedObject, GroupKind, ObjectKey } from '../model';

/**
 * WatchTarget is what one shared watch covers: a kind, optionally narrowed to
 * one namespace and a label selector. Subscribers with equal targets share one
 * watch.
 */
export interface WatchTarget extends GroupKind {
  namespace?: string; // omitted: all namespaces (or cluster-scoped)
  labelSelector?: string;
  /**
   * Keep of each object only its metadata and these dotted paths (`data.name`):
   * a lookup's cache of Secrets holds what it compares, never their credentials.
   */
  fields?: readonly string[];
}

export function watchTargetKey(t: WatchTarget): string {
  const kind = t.group === '' ? t.kind : `${t.kind}.${t.group}`;
  const key = `${kind}|${t.namespace ?? '*'}|${t.labelSelector ?? ''}`;
  return t.fields ? `${key}|${t.fields.join(',')}` : key;
}

/**
 * projectFields keeps an object's identity and metadata and, of the rest,
 * only the dotted paths given: what a lookup's cache holds of a Secret (its
 * `data.name`, never its credentials).
 */
export function projectFields(obj: CachedObject, fields: readonly string[]): CachedObject {
  const out: Record<string, unknown> = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata };
  for (const field of fields) {
    const parts = field.split('.');
    let from: unknown = obj;
    for (const p of parts)
      from = from !== null && typeof from === 'object' ? (from as Record<string, unknown>)[p] : undefined;
    if (from === undefined || parts[0] === 'metadata') continue;
    let to = out;
    for (const p of parts.slice(0, -1)) to = (to[p] ??= {}) as Record<string, unknown>;
    to[parts[parts.length - 1]!] = from;
  }
  return out as unknown as CachedObject;
}

/**
 * targetsIn splits a target over namespaces: one target per namespace, or the
 * target itself when it names its namespace or no namespaces are given.
 */
export function targetsIn(target: WatchTarget, namespaces: readonly string[] | undefined): WatchTarget[] {
  if (!namespaces || target.namespace) return [target];
  return namespaces.map((namespace) => ({ ...target, namespace }));
}

/** Why a watch cannot deliver: each reason maps to a fix a person can apply. */
export type WatchErrorReason =
  | 'KindUnknown' // no resource serves this kind: CRD not installed
  | 'Forbidden' // 401/403: credentials or RBAC
  | 'Unreachable' // network error, connection refused
  | 'Throttled' // 429
  | 'ServerError' // 5xx
  | 'Expired' // 410 Gone: relisting
  | 'Invalid' // the server rejected the request (400/422)
  | 'OutOfScope' // the namespace is outside the Manager's `namespaces` option: nothing watches it
  | 'ObserveFailed' // an observer's poll threw
  | 'ObserveTimeout'; // an observer's poll took longer than its timeout

export interface WatchError {
  reason: WatchErrorReason;
  message: string;
  /** For Forbidden: the RBAC rule that is missing. */
  missingRule?: { verbs: string[]; apiGroup: string; resource: string; namespace?: string };
  /** When the reflector retries next (epoch ms), if it does. */
  retryAt?: number;
  at: number;
}

/**
 * InformerEvent is what a shared watch tells each subscriber. A subscriber that
 * joins late first receives an `added` for every cached object, then `primed`
 * if the cache already holds its initial snapshot. Objects are the cache's
 * own, frozen: every subscriber sees the same one.
 */
export type InformerEvent =
  // An object's events all have the same fields (old is undefined but for an update): the code that reads them
  // is optimized on one shape, not thrown away when the first update arrives after a run of additions.
  | { type: 'added'; key: ObjectKey; object: CachedObject; old: undefined }
  | { type: 'updated'; key: ObjectKey; object: CachedObject; old: CachedObject }
  | { type: 'deleted'; key: ObjectKey; object: CachedObject; old: undefined }
  /** The cache holds the initial snapshot (list done, or the initial-events-end bookmark). */
  | { type: 'primed' }
  /** The watch is failing and retrying; the cache keeps its last known state. */
  | { type: 'error'; error: WatchError }
  /** The watch recovered from an error. */
  | { type: 'recovered' };

export type InformerHandler = (event: InformerEvent) => void;

/**
 * ObjectStore is a read-only view of a shared cache. Its objects are frozen
 * once when they enter it and handed out without a copy: a reader that
 * mutates one gets a TypeError, and no other reader sees the attempt.
 */
export interface ObjectStore {
  get(key: ObjectKey): CachedObject | undefined;
  keys(): IterableIterator<ObjectKey>;
  values(): IterableIterator<CachedObject>;
  readonly size: number;
  /**
   * A number that changes whenever a key enters or leaves the store (not when
   * an object is updated under the same key). A reader may keep what it
   * derived from keys() while it stays the same; a store without it is read
   * afresh each time.
   */
  readonly keysVersion?: number;
}

export type WatchPhase = 'Starting' | 'Listing' | 'Watching' | 'Backoff' | 'Stopped';

/** WatchStatus is what the source knows about one shared watch. */
export interface WatchStatus {
  target: WatchTarget;
  phase: WatchPhase;
  primed: boolean;
  primedAt?: number;
  startedAt: number;
  resourceVersion?: string;
  objects: number;
  subscribers: number;
  lastError?: WatchError;
  /** Watch requests opened so far (1 + restarts). */
  watchesOpened: number;
  /** Full lists done so far (1 + relists). */
  lists: number;
  /** The watch lists and watches metadata only (PartialObjectMetadata). */
  metadataOnly?: boolean;
}

/** AcquireOptions say what a subscriber needs of the objects it watches. */
export interface AcquireOptions {
  /**
   * The subscriber reads metadata only (name, namespace, uid, resourceVersion,
   * labels, annotations…), so the source may cache PartialObjectMetadata and
   * never hold, say, a Secret's data. Objects may still arrive whole when
   * another subscriber of the same target needs them: one watch serves both.
   */
  metadataOnly?: boolean;
}

/** InformerSubscription is one subscriber's handle on a shared watch. */
export interface InformerSubscription {
  readonly store: ObjectStore;
  isPrimed(): boolean;
  status(): WatchStatus;
  /** release drops this subscription; the last release stops the watch and closes its HTTP request. */
  release(): Promise<void>;
}

/**
 * InformerSource hands out shared, ref-counted watches. The engine depends on
 * this interface only; lib/kube implements it for Kubernetes and
 * MemoryInformerSource implements it for tests.
 */
export interface InformerSource {
  acquire(target: WatchTarget, handler: InformerHandler, opts?: AcquireOptions): InformerSubscription;
  /** Every watch the source currently runs. */
  watches(): WatchStatus[];
  /**
   * namespaced says whether the server serves the kind per namespace: false
   * for a cluster-scoped kind, which is never split into one watch per
   * namespace; undefined when the source cannot tell (the kind is unknown).
   * A source without it has every kind split when asked.
   */
  namespaced?(kind: GroupKind): Promise<boolean | undefined>;
  /** stop releases every watch; awaited. */
  stop(): Promise<void>;
}
