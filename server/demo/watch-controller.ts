import type { ControllerOptions, WakeOn } from '../../lib/engine';
import { KubeRequestError } from '../../lib/kube';
import type { ObjectKey } from '../../lib/model';
import { patchResolved, resolvedBy } from './backoff-controller';
import type { CountedClient } from './counted-client';
import { appReferences, DEMO_GROUP } from './scenario';

/** How long after a 409 Conflict the App is tried again: a watch event reaches the cache within milliseconds. */
const CONFLICT_RETRY_MS = 50;

/** The prefix of every demo watch controller's name on the manager (and on the dashboard). */
export const WATCH_CONTROLLER = 'demo/watch';

/** watchControllerName names a run's watch controller: one per run, as each run keeps its own until deleted. */
export function watchControllerName(runId: string): string {
  return `${WATCH_CONTROLLER}/${runId}`;
}

export interface WatchControllerOptions {
  name: string;
  namespace: string;
  /** While false (the run has ended) a reconcile only declares its references and writes nothing. */
  measuring(): boolean;
  client: CountedClient;
  workers: number;
  /** What wakes an App when one of its referents changes. */
  wakeOn: WakeOn;
  onReconcile(key: ObjectKey): void;
  onResolved(key: ObjectKey, resolvedAt: number): void;
  reconcilesOf(key: ObjectKey): number;
  onRequest(key: ObjectKey): void;
}

/**
 * watchController is refwatch's way of reconciling Apps: declare the three
 * references through ctx.resolve, read the referents from the shared caches,
 * and return while one is not Ready. The engine queues the App again the
 * moment a referent changes (with wakeOn 'resolution': the moment the last of
 * them turns Ready), so there is no requeue and no backoff. Its own status
 * writes, and the backoff controller's, leave the App's generation and so do
 * not queue it (forWakeOn 'generation'). Once the run has ended it keeps
 * declaring the references, so the engine (and the dashboard) still shows the
 * run's graph until the run is deleted.
 */
export function watchController(o: WatchControllerOptions): ControllerOptions {
  return {
    name: o.name,
    for: { group: DEMO_GROUP, kind: 'App', namespace: o.namespace },
    forWakeOn: 'generation',
    workers: o.workers,
    async reconcile(ctx) {
      const app = ctx.object;
      if (!app) return;
      o.onReconcile(ctx.key);
      const resolutions = appReferences(app).map((ref) =>
        ctx.resolve({ referent: ref.key, fieldPath: ref.fieldPath }, { wakeOn: o.wakeOn }),
      );
      if (resolutions.some((r) => r.state !== 'Ready')) return;
      if (!o.measuring() || resolvedBy(app, 'watch')) return;
      const resolvedAt = Date.now();
      try {
        await patchResolved(
          o.client.for(() => o.onRequest(ctx.key)),
          app,
          'watch',
          resolvedAt,
          o.reconcilesOf(ctx.key),
          { signal: ctx.signal, optimisticLock: true },
        );
      } catch (e) {
        // The cached App is older than the server's. Its newer version, on its way, changes only the
        // status and so queues nothing: try again once the cache has it.
        if (e instanceof KubeRequestError && e.status === 409) return { requeueAfter: CONFLICT_RETRY_MS };
        throw e;
      }
      o.onResolved(ctx.key, resolvedAt);
    },
  };
}
