import { RefwatchError, type KubeObject, type ObjectKey } from '../model';
import type { ReferenceRegistry, Referrer } from '../registry';
import type { ReadinessPredicate } from './readiness';

/**
 * WakeOn says which changes of a referent wake its referrer:
 *   change      any new resourceVersion (the default, as controller-runtime does)
 *   readiness   the readiness verdict changed, or the referent appeared or went
 *   generation  metadata.generation changed (the spec), or the referent appeared or went
 *   resolution  the referrer may have become resolved or stopped being so: the
 *               referent's verdict flipped (a missing referent is not ready) while
 *               every other referent of the referrer is Ready; a cache that primes
 *               wakes it only when all its referents are Ready
 */
export type WakeOn = 'change' | 'readiness' | 'generation' | 'resolution';

/** ForWakeOn says which updates of a controller's own objects (its `for` kind) queue them; creation and deletion always do. */
export type ForWakeOn = 'change' | 'generation';

/** ResolveOptions tune one resolve() call. */
export interface ResolveOptions {
  /** What wakes the referrer when this referent changes (default 'change'). */
  wakeOn?: WakeOn;
  /**
   * false: the reference is registered, watched and explained, but its state
   * never makes the referrer unresolved (an owner that is gone, a
   * back-pointer). Default true.
   */
  blocking?: boolean;
  /**
   * The referrer may not use this referent whatever its state (Gateway API's
   * RefNotPermitted): the resolution is NotReady with this reason and
   * message, and the referrer waits on it.
   */
  deny?: { reason: string; message: string };
}

/** Change bits: what a referent event changed. A referrer wakes when its mask and the event's share a bit. */
export const WAKE_CHANGE = 1;
/** The readiness verdict flipped, or the referent appeared or went. */
export const WAKE_READINESS = 2;
export const WAKE_GENERATION = 4;
/** The verdict "exists and Ready" flipped: appearing not ready, or going while not ready, leaves it. */
export const WAKE_VERDICT = 8;
/** Every change bit: what an event wakes when no referrer of its referent filters. */
export const WAKE_ALL = WAKE_CHANGE | WAKE_READINESS | WAKE_GENERATION | WAKE_VERDICT;
/** A mask flag, never an event bit: wake only while the referrer's other referents are all Ready. */
const GATED = 16;
/**
 * A mask flag, never an event bit: the reference is a selection's match. Its referrer is judged by its
 * selections, which only a reconcile computes, so an event it sleeps through has nothing to restate.
 */
export const WAKE_SELECTED = 64;
/** A cache primed, or an observer polled a referent for the first time: what the referrer was told (NotPrimed) is now known. */
export const WAKE_PRIMED = WAKE_ALL | 32;

const BITS: Record<WakeOn, number> = {
  change: WAKE_ALL,
  readiness: WAKE_READINESS,
  generation: WAKE_GENERATION,
  resolution: WAKE_VERDICT | GATED,
};

/** wakeMask turns a WakeOn into the change bits that wake; an unknown value is a RefwatchError naming the field. */
export function wakeMask(wakeOn: WakeOn | undefined): number {
  if (wakeOn === undefined) return BITS.change;
  const bits = Object.hasOwn(BITS, wakeOn) ? BITS[wakeOn] : undefined;
  if (bits === undefined) {
    throw new RefwatchError(
      'InvalidWakeOn',
      `wakeOn must be "change", "readiness", "generation" or "resolution", got ${JSON.stringify(wakeOn)}`,
      { field: 'wakeOn', example: "{ wakeOn: 'readiness' }" },
    );
  }
  return bits;
}

/**
 * unionMask is what wakes a referrer that resolve()d one referent twice: either
 * call's changes. The gate stays only when both asked for it, so the union
 * wakes at least whenever either alone would.
 */
export function unionMask(a: number | undefined, b: number): number {
  if (a === undefined) return b;
  // A flag stays only when both calls carry it: either alone asks for the wake (or restate) it leaves out.
  return (a | b) & ~((GATED | WAKE_SELECTED) & ~(a & b));
}

/** forWakeOnIsGeneration checks a controller's `forWakeOn`; an unknown value is a RefwatchError naming the field. */
export function forWakeOnIsGeneration(forWakeOn: ForWakeOn | undefined): boolean {
  if (forWakeOn === undefined || forWakeOn === 'change') return false;
  if (forWakeOn === 'generation') return true;
  throw new RefwatchError(
    'InvalidWakeOn',
    `forWakeOn must be "change" or "generation", got ${JSON.stringify(forWakeOn)}`,
    { field: 'forWakeOn', example: "{ forWakeOn: 'generation' }" },
  );
}

/**
 * updateVerdict is what an update changed, computed once per referent event whatever the number of referrers.
 * wasReady is the verdict on the old object when the caller knows it (the state it published for it).
 */
export function updateVerdict(
  old: KubeObject,
  object: KubeObject,
  readiness: ReadinessPredicate,
  ready = readiness(object).ready,
  wasReady = readiness(old).ready,
): number {
  let bits = WAKE_CHANGE;
  if (wasReady !== ready) bits |= WAKE_READINESS | WAKE_VERDICT;
  if (old.metadata.generation !== object.metadata.generation) bits |= WAKE_GENERATION;
  return bits;
}

/** existenceVerdict is what a referent appearing or going changed: the verdict only when it was or is Ready. */
export function existenceVerdict(
  object: KubeObject,
  readiness: ReadinessPredicate,
  ready = readiness(object).ready,
): number {
  return WAKE_CHANGE | WAKE_READINESS | WAKE_GENERATION | (ready ? WAKE_VERDICT : 0);
}

/** ReferentFilters are one referent's stored masks, and how many of them sleep through a change of nothing but its resourceVersion. */
interface ReferentFilters {
  byController: Map<string, Map<ObjectKey, number>>;
  /** Masks that neither wake on WAKE_CHANGE nor ask for a restate (a selection's matches): what lets dispatchAll skip the visit. */
  sleepers: number;
}

/** sleepsOnChange says whether a referrer with this mask is neither woken nor restated by a change with only WAKE_CHANGE. */
function sleepsOnChange(mask: number): boolean {
  return (mask & WAKE_CHANGE) === 0 && (mask & WAKE_SELECTED) !== 0;
}

/**
 * WakeFilters holds the referrers that asked to be woken by less than every
 * change of a referent. Only those are stored: a referent without filters
 * dispatches exactly as before, so the default costs one map lookup per event.
 * A referrer's filter follows its references: set by resolve() each
 * reconcile, dropped when its last reference to the referent goes.
 */
export class WakeFilters {
  // referent -> controller -> referrer -> the change bits that wake it. Nested maps look up the engine's
  // own key strings, whose hashes are cached, instead of building and hashing a joined id on every event.
  private readonly byReferent = new Map<ObjectKey, ReferentFilters>();

  /**
   * isReady judges a referent as resolve() would, from its kind's cache or
   * observer, starting nothing; restate refreshes the published state of a
   * referrer an event did not wake.
   */
  constructor(
    private readonly registry: ReferenceRegistry,
    private readonly isReady: (referent: ObjectKey) => boolean = () => false,
    private readonly restate: (controller: string, referrer: ObjectKey) => void = () => {},
  ) {
    registry.subscribe({
      onDelta: (d) => {
        if (this.byReferent.size === 0) return;
        for (const r of d.removed) {
          if (registry.multiplicity(d.referrer.controller, d.referrer.key, r.referent) === 0)
            this.set(d.referrer.controller, d.referrer.key, r.referent, BITS.change);
        }
      },
    });
  }

  /** set records what wakes the referrer for this referent; the default (every change) is stored as nothing. */
  set(controller: string, referrer: ObjectKey, referent: ObjectKey, mask: number): void {
    let filters = this.byReferent.get(referent);
    if ((mask & ~WAKE_SELECTED) === BITS.change) {
      // The default is stored as nothing: drop what was stored, and the maps it leaves empty.
      const masks = filters?.byController.get(controller);
      const was = masks?.get(referrer);
      if (was === undefined) return;
      masks!.delete(referrer);
      if (sleepsOnChange(was)) filters!.sleepers--;
      if (masks!.size > 0) return;
      filters!.byController.delete(controller);
      if (filters!.byController.size === 0) this.byReferent.delete(referent);
      return;
    }
    if (!filters) this.byReferent.set(referent, (filters = { byController: new Map(), sleepers: 0 }));
    let masks = filters.byController.get(controller);
    if (!masks) filters.byController.set(controller, (masks = new Map()));
    // A reconcile restates every reference: most find their mask as it was.
    const was = masks.get(referrer);
    if (was === mask) return;
    masks.set(referrer, mask);
    if (was !== undefined && sleepsOnChange(was)) filters.sleepers--;
    if (sleepsOnChange(mask)) filters.sleepers++;
  }

  /** filtered says whether any referrer of the referent asked for less than every change. */
  filtered(referent: ObjectKey): boolean {
    return this.byReferent.size > 0 && this.byReferent.has(referent);
  }

  /**
   * wakes says whether a change with these bits wakes the referrer. A
   * 'resolution' referrer whose other referents are not all Ready cannot have
   * become resolved, nor have stopped being so: it sleeps on. A cache that
   * primed (or an observer's first poll) wakes a 'resolution' referrer only
   * if all its referents are Ready now.
   */
  wakes(referent: ObjectKey, r: Referrer, bits: number): boolean {
    return this.wakesWith(this.byReferent.get(referent)?.byController.get(r.controller)?.get(r.key), referent, r, bits);
  }

  private wakesWith(mask: number | undefined, referent: ObjectKey, r: Referrer, bits: number): boolean {
    if (mask === undefined) return true;
    if ((mask & bits) === 0) return false;
    if ((mask & GATED) === 0) return true;
    const primed = bits === WAKE_PRIMED;
    return this.registry.everyReferentOf(
      r.controller,
      r.key,
      (other) => (!primed && other === referent) || this.isReady(other),
    );
  }

  /** dispatch queues the referrer if a change with these bits wakes it, and otherwise refreshes what it is said to wait for. */
  dispatch(
    referent: ObjectKey,
    r: Referrer,
    bits: number,
    enqueue: (controller: string, referrer: ObjectKey) => void,
  ): void {
    const mask = this.byReferent.get(referent)?.byController.get(r.controller)?.get(r.key);
    if (this.wakesWith(mask, referent, r, bits)) enqueue(r.controller, r.key);
    else if ((mask! & WAKE_SELECTED) === 0) this.restate(r.controller, r.key);
  }

  /** dispatchAll is dispatch for every referrer of the referent, looking the referent's filters up once. */
  dispatchAll(referent: ObjectKey, bits: number, enqueue: (controller: string, referrer: ObjectKey) => void): void {
    const filters = this.byReferent.get(referent);
    // A change that moves nothing a referrer asked about (a label, a status heartbeat), where every referrer
    // is a selection's match that sleeps through it: nobody to wake and nothing to restate, without a visit.
    if (bits === WAKE_CHANGE && filters && filters.sleepers === this.registry.referrerCountOf(referent)) return;
    const byController = filters?.byController;
    this.registry.forEachReferrerOf(referent, (r) => {
      const mask = byController?.get(r.controller)?.get(r.key);
      if (this.wakesWith(mask, referent, r, bits)) enqueue(r.controller, r.key);
      else if ((mask! & WAKE_SELECTED) === 0) this.restate(r.controller, r.key);
    });
  }

  /** size is the number of referents with filters, for tests. */
  get size(): number {
    return this.byReferent.size;
  }
}
