import type { Readiness } from '../engine';
import type { CachedObject, ObjectKey } from '../model';

/**
 * ReferentState is what a lookup knows of one referent. `unknown` covers an
 * unprimed, failing or forbidden cache: a check then says nothing, since a
 * warning it cannot back would be wrong.
 */
export type ReferentState =
  | { state: 'unknown' }
  | { state: 'found'; object: CachedObject; readiness: Readiness }
  | { state: 'missing'; similar: readonly string[] };

/** ReferentLookup answers from caches already held, without a request. */
export interface ReferentLookup {
  lookup(referent: ObjectKey): ReferentState;
}
