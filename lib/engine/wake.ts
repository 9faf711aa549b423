import { RefwatchError, type KubeObject, type ObjectKey } from '../model';
import type { ReferenceRegistry, Referrer } from '../registry';
import type { ReadinessPredicate } from './readiness';

/**
 * WakeOn says which changes of a referent wake its referrer:
 *   change      any new resourceVersion (the default, as controller-runtime does)
 *   readiness   the readiness verdict changed, or the referent appeared or went
 *   generation  metadata.generation changed (the spec), or the referent appeared or went
 */
export type WakeOn = 'change' | 'readiness' | 'generation';

/** ResolveOptions tune one resolve() call. */
export interface ResolveOptions {
  /** What wakes the referrer when this referent changes (default 'change'). */
  wakeOn?: WakeOn;
}

/** Change bits: what a referent event changed. A referrer wakes when its mask and the event's share a bit. */
export const WAKE_CHANGE = 1;
export const WAKE_READINESS = 2;
export const WAKE_GENERATION = 4;
/** Appearing, going or a full resync: every referrer wakes. */
export const WAKE_ALL = WAKE_CHANGE | WAKE_READINESS | WAKE_GENERATION;

const BITS: Record<WakeOn, number> = { change: WAKE_CHANGE | WAKE_READINESS | WAKE_GENERATION, readiness: WAKE_READINESS, generation: WAKE_GENERATION };

/** wakeMask turns a WakeOn into the change bits that wake; an unknown value is a RefwatchError naming the field. */
export function wakeMask(wakeOn: WakeOn | undefined): number {
  if (wakeOn === undefined) return BITS.change;
  const bits = BITS[wakeOn];
  if (bits === undefined) throw new RefwatchError('InvalidWakeOn', `wakeOn must be "change", "readiness" or "generation", got ${JSON.stringify(wakeOn)}`, { field: 'wakeOn', example: "{ wakeOn: 'readiness' }" });
  return bits;
}

/** updateVerdict is what an update changed, computed once per referent event whatever the number of referrers. */
export function updateVerdict(old: KubeObject, object: KubeObject, readiness: ReadinessPredicate): number {
  let bits = WAKE_CHANGE;
  if (readiness(old).ready !== readiness(object).ready) bits |= WAKE_READINESS;
  if (old.metadata.generation !== object.metadata.generation) bits |= WAKE_GENERATION;
  return bits;
}

/**
 * WakeFilters holds the referrers that asked to be woken by less than every
 * change of a referent. Only those are stored: a referent without filters
 * dispatches exactly as before, so the default costs one map lookup per event.
 * A referrer's filter follows its references: set by resolve() each
 * reconcile, dropped when its last reference to the referent goes.
 */
export class WakeFilters {
  // referent -> `${controller}|${referrer}` -> the change bits that wake it
  private readonly byReferent = new Map<ObjectKey, Map<string, number>>();

  constructor(private readonly registry: ReferenceRegistry) {
    registry.subscribe({
      onDelta: (d) => {
        if (this.byReferent.size === 0) return;
        for (const r of d.removed) {
          if (registry.multiplicity(d.referrer.controller, d.referrer.key, r.referent) === 0) this.set(d.referrer.controller, d.referrer.key, r.referent, BITS.change);
        }
      },
    });
  }

  /** set records what wakes the referrer for this referent; the default (every change) is stored as nothing. */
  set(controller: string, referrer: ObjectKey, referent: ObjectKey, mask: number): void {
    let m = this.byReferent.get(referent);
    if (mask === BITS.change && !m) return;
    const id = `${controller}|${referrer}`;
    if (mask === BITS.change) {
      if (m!.delete(id) && m!.size === 0) this.byReferent.delete(referent);
      return;
    }
    if (!m) this.byReferent.set(referent, (m = new Map()));
    m.set(id, mask);
  }

  /** filtered says whether any referrer of the referent asked for less than every change. */
  filtered(referent: ObjectKey): boolean {
    return this.byReferent.size > 0 && this.byReferent.has(referent);
  }

  /** wakes says whether a change with these bits wakes the referrer. */
  wakes(referent: ObjectKey, r: Referrer, bits: number): boolean {
    const mask = this.byReferent.get(referent)?.get(`${r.controller}|${r.key}`);
    return mask === undefined || (mask & bits) !== 0;
  }

  /** size is the number of referents with filters, for tests. */
  get size(): number {
    return this.byReferent.size;
  }
}
