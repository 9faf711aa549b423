import { formatTime } from '../model';
import type { Resolution } from './resolution';

/** StatusCondition is a Kubernetes status condition (metav1.Condition), as a controller writes it. */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  /** RFC 3339; set by setCondition when the status changes. */
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/**
 * setCondition returns `conditions` with `next` in place of the condition of
 * its type, or undefined when that condition already says the same thing, so
 * a reconciler writes status only on a change (a write would queue the
 * referrer again). Like apimachinery's meta.SetStatusCondition, the
 * lastTransitionTime moves only when the status does.
 */
export function setCondition(
  conditions: readonly StatusCondition[] | undefined,
  next: Omit<StatusCondition, 'lastTransitionTime'>,
  now: Date = new Date(),
): StatusCondition[] | undefined {
  const list = conditions ?? [];
  const prev = list.find((c) => c.type === next.type);
  if (
    prev &&
    prev.status === next.status &&
    prev.reason === next.reason &&
    prev.message === next.message &&
    prev.observedGeneration === next.observedGeneration
  )
    return undefined;
  const lastTransitionTime =
    prev && prev.status === next.status && prev.lastTransitionTime
      ? prev.lastTransitionTime
      : formatTime(now.getTime(), 0);
  const merged: StatusCondition = { ...next, lastTransitionTime };
  return prev ? list.map((c) => (c === prev ? merged : c)) : [...list, merged];
}

/**
 * resolvedCondition summarises one reconcile's resolutions as a condition:
 * True with reason Resolved when every referent is Ready; otherwise False,
 * with the first blocking referent's state as reason (NotFound before
 * NotReady and NotPrimed) and its key and message as message.
 */
export function resolvedCondition(
  resolutions: readonly Resolution[],
  type = 'Ready',
): Omit<StatusCondition, 'lastTransitionTime'> {
  const blocking = blockingResolution(resolutions);
  if (!blocking)
    return { type, status: 'True', reason: 'Resolved', message: `${resolutions.length} references resolved` };
  const why = blocking.message ?? blocking.error?.message;
  return {
    type,
    status: 'False',
    reason: blocking.state,
    message: `${blocking.fieldPath}: ${blocking.referent}${why ? `: ${why}` : ''}`,
  };
}

/** blockingResolution is the referent that keeps a referrer unresolved: a missing one first, then any not Ready. */
export function blockingResolution(resolutions: readonly Resolution[]): Resolution | undefined {
  return resolutions.find((r) => r.state === 'NotFound') ?? resolutions.find((r) => r.state !== 'Ready');
}
