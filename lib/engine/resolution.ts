import type { CachedObject, ObjectKey } from '../model';
import type { WatchError } from './informer-source';

/**
 * ResolutionState is what a referrer's reconcile learns about one referent:
 *   Ready      exists and is ready
 *   NotReady   exists, not ready (reason and message from its condition)
 *   NotFound   absent from a primed cache
 *   NotPrimed  its kind's cache does not hold the initial snapshot yet; `error`
 *              says why when the watch is failing (KindUnknown, Forbidden…)
 */
export type ResolutionState = 'Ready' | 'NotReady' | 'NotFound' | 'NotPrimed';

export interface Resolution {
  state: ResolutionState;
  referent: ObjectKey;
  fieldPath: string;
  /** The referent as its kind's cache holds it: frozen, not a copy. */
  object?: CachedObject;
  reason?: string;
  message?: string;
  error?: WatchError;
}
