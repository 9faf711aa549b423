import type { ChangeLog, ReferrerEntity } from '../changelog';
import type { Manager } from '../engine';
import type { ObjectKey } from '../model';

/** The kind whose own selector reference (Service → Pods) says whether it has endpoints. */
const SERVICE = 'Service';

/** NoReadyEndpoints is why a Service that exists answers no call, and what to do about it. */
export interface NoReadyEndpoints {
  reason: 'NoReadyEndpoints';
  message: string;
  fix: string;
}

/**
 * noReadyEndpoints reads the Service's own selector reference as its last
 * reconcile judged it (controller `serviceController`): matching no Pod, or
 * no Ready one, leaves the Service without endpoints. Undefined while that is
 * not known (the Service not reconciled yet, the Pods' cache loading), when
 * it has a Ready Pod, and for a Service without a selector, whose endpoints
 * are managed by hand.
 */
export function noReadyEndpoints(
  changelog: ChangeLog,
  serviceController: string,
  service: ObjectKey,
): NoReadyEndpoints | undefined {
  const entity = changelog.get('referrer', `${serviceController}|${service}`);
  const s = entity?.selections?.find((x) => x.kind === 'Pod' && (x.state === 'NoMatch' || x.state === 'NotReady'));
  if (!entity || !s) return undefined;
  // A selection that decided the Service's own state left its full diagnosis there (did you mean app=web?).
  const own = entity.reason?.startsWith(`${s.state}: Pod `) && entity.message !== undefined;
  const why =
    s.state === 'NoMatch'
      ? own
        ? entity.message!
        : `0 Pods in ${s.where} match ${s.selector}`
      : `it selects ${s.matched} Pod${s.matched === 1 ? '' : 's'}, ${s.ready} Ready`;
  return {
    reason: 'NoReadyEndpoints',
    message: `${service} has no ready endpoints: ${why}`,
    fix: `make a Pod that ${service} selects (${s.selector} in ${s.where}) Ready, or correct its ${s.fieldPath} (refwatch explain ${service})`,
  };
}

/**
 * wakeOnEndpoints queues the referrers of a Service, in the controllers
 * `waiting` names, whenever the Service's own state (as a selector referrer)
 * changes: its Pods coming and going, or turning Ready, do not change the
 * Service object, which is all their reference to it would see. Returns the
 * unsubscribe.
 */
export function wakeOnEndpoints(manager: Manager, waiting: ReadonlySet<string>): () => void {
  return manager.changelog.observe((entity, _id, previous, next) => {
    if (entity !== 'referrer') return;
    const before = previous as ReferrerEntity | undefined;
    const after = next as ReferrerEntity | undefined;
    const service = after ?? before;
    if (!service || service.kind !== SERVICE) return;
    if (before?.state === after?.state && before?.message === after?.message) return;
    // After the change log's put returns: an enqueue publishes its queue's state there too.
    queueMicrotask(() => {
      for (const r of manager.registry.referrersOf(service.key))
        if (waiting.has(r.controller)) manager.controller(r.controller)?.enqueue(r.key);
    });
  });
}
