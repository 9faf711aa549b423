import type { DemoMode } from '../../lib/demo/wire';
import { conditionReadiness, type InformerSource, type InformerSubscription, type WatchTarget } from '../../lib/engine';
import { Discovery, KubeRequestError, isAbortError, resourcePath } from '../../lib/kube';
import type { KubeObject, ObjectKey } from '../../lib/model';
import {
  RateLimitingQueue,
  crossplaneRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from '../../lib/queue';
import type { BackoffPreset } from './config';
import type { CountedClient, DemoClient } from './counted-client';
import { demoPath } from './kinds';
import { appReferences, type AppReference } from './scenario';

/** The rate limiter of a preset: client-go's default controller limiter, or Crossplane's 1 s → 60 s. */
export function presetRateLimiter(preset: BackoffPreset): RateLimiter {
  return preset === 'crossplane' ? crossplaneRateLimiter() : defaultControllerRateLimiter();
}

export interface BackoffControllerOptions {
  /** Where the App informer comes from: Apps are watched, referents never are. */
  source: InformerSource;
  apps: WatchTarget;
  client: CountedClient;
  preset: BackoffPreset;
  workers: number;
  /** Told at the start of each reconcile of an App. */
  onReconcile(key: ObjectKey): void;
  /** Told once a reconcile found every referent Ready and recorded it; resolvedAt is epoch ms. */
  onResolved(key: ObjectKey, resolvedAt: number): void;
  /** How many reconciles the App has had, written to its status. */
  reconcilesOf(key: ObjectKey): number;
  /** Told of each request made on behalf of an App. */
  onRequest(key: ObjectKey): void;
}

const readyCondition = conditionReadiness('Ready');

/**
 * BackoffController reconciles Apps the classic way: a work queue with
 * per-item exponential backoff, fed only by App changes. Its reconcile GETs
 * each referent from the API server (an uncached read, as a reconciler that
 * calls the API directly does), returns at the first that is missing or not
 * Ready, and requeues the App rate-limited, as returning an error or
 * `Requeue: true` does in controller-runtime. It is never woken by a
 * referent: it learns of one only on its next retry.
 */
export class BackoffController {
  readonly queue: RateLimitingQueue;
  private readonly discovery: Discovery;
  private readonly abort = new AbortController();
  private readonly workers: Promise<void>[] = [];
  private subscription: InformerSubscription | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: BackoffControllerOptions) {
    this.queue = new RateLimitingQueue({ name: 'demo/backoff', rateLimiter: presetRateLimiter(opts.preset) });
    // Discovery requests count against this controller, not against any one App.
    this.discovery = new Discovery(opts.client);
  }

  start(): void {
    if (this.subscription || this.abort.signal.aborted) return;
    this.subscription = this.opts.source.acquire(this.opts.apps, (event) => {
      // New Apps and spec changes (a new generation) queue the App; status writes do not.
      if (event.type === 'added') this.queue.add(event.key);
      else if (event.type === 'updated' && event.object.metadata.generation !== event.old.metadata.generation)
        this.queue.add(event.key);
      else if (event.type === 'deleted') this.queue.forget(event.key);
    });
    for (let i = 0; i < Math.max(1, this.opts.workers); i++) this.workers.push(this.work());
  }

  /** stop aborts requests in flight, clears every backoff timer, drains the workers and releases the App informer. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await this.queue.shutdownWithDrain();
      await Promise.all(this.workers);
      await this.subscription?.release();
    })();
    return this.stopping;
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcile(key);
      } catch (e) {
        if (!this.abort.signal.aborted && !isAbortError(e)) this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcile(key: ObjectKey): Promise<void> {
    const app = this.subscription?.store.get(key);
    if (!app) {
      this.queue.forget(key);
      return;
    }
    this.opts.onReconcile(key);
    const client = this.opts.client.for(() => this.opts.onRequest(key));
    for (const ref of appReferences(app)) {
      if (!(await this.isReady(client, ref))) {
        this.queue.addRateLimited(key);
        return;
      }
    }
    if (resolvedBy(app, 'backoff')) {
      this.queue.forget(key);
      return;
    }
    const resolvedAt = Date.now();
    // A failed write throws, and the worker requeues the App rate-limited.
    await patchResolved(client, app, 'backoff', resolvedAt, this.opts.reconcilesOf(key), {
      signal: this.abort.signal,
      optimisticLock: false,
    });
    this.opts.onResolved(key, resolvedAt);
    this.queue.forget(key);
  }

  /** isReady GETs one referent: missing, of an unknown kind, or without Ready=True means not ready. */
  private async isReady(client: DemoClient, ref: AppReference): Promise<boolean> {
    let path: string;
    try {
      const info = await this.discovery.resolve({ group: ref.group, kind: ref.kind });
      path = `${resourcePath({ ...info, version: ref.version ?? info.version }, ref.namespace)}/${ref.name}`;
    } catch (e) {
      if (isAbortError(e)) throw e;
      return false;
    }
    let object: KubeObject;
    try {
      object = await client.getJSON<KubeObject>(path, {}, this.abort.signal);
    } catch (e) {
      if (e instanceof KubeRequestError && e.status === 404) return false;
      throw e;
    }
    return ref.group === '' || readyCondition(object).ready;
  }
}

export type { DemoMode };

/** resolvedBy reads status.resolvedBy.<mode> of an App, if that controller recorded it. */
export function resolvedBy(app: KubeObject, mode: DemoMode): { resolvedAt?: string; reconciles?: number } | undefined {
  const status = app.status as
    { resolvedBy?: Record<string, { resolvedAt?: string; reconciles?: number }> } | undefined;
  return status?.resolvedBy?.[mode];
}

/**
 * patchResolved records on the App's status that mode resolved it, with a
 * merge patch that touches only status.resolvedBy.<mode>. With optimisticLock
 * the patch carries the App's resourceVersion, so a stale read gets 409
 * instead of writing twice.
 */
export async function patchResolved(
  client: DemoClient,
  app: KubeObject,
  mode: DemoMode,
  resolvedAt: number,
  reconciles: number,
  opts: { signal: AbortSignal; optimisticLock: boolean },
): Promise<void> {
  const body = {
    ...(opts.optimisticLock ? { metadata: { resourceVersion: app.metadata.resourceVersion } } : {}),
    status: { resolvedBy: { [mode]: { resolvedAt: new Date(resolvedAt).toISOString(), reconciles } } },
  };
  await client.request('PATCH', demoPath('App', app.metadata.namespace ?? '', app.metadata.name, 'status'), {
    body,
    contentType: 'application/merge-patch+json',
    signal: opts.signal,
  });
}
