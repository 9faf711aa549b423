import type { KubeObject } from '@/lib/model';
import { Manager, MemoryInformerSource, type ReconcileContext } from '@/lib/engine';
import type { ReferrerState } from '@/lib/changelog';
import type { Clock } from '@/lib/queue';

export const DB = 'Database.demo.refwatch.dev';
export const CACHE = 'Cache.demo.refwatch.dev';
export const APP = 'App.demo.refwatch.dev';

/** A reference in an App's spec: a name, optionally in another namespace. */
export type Ref = string | { name: string; namespace?: string };

const KIND_OF_FIELD: Record<string, string> = { databaseRef: DB, cacheRef: CACHE, secretRef: 'Secret' };

export function app(name: string, refs: Record<string, Ref>, namespace = 'shop'): KubeObject {
  return { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'App', metadata: { name, namespace }, spec: refs };
}

export function database(
  name: string,
  ready: boolean,
  namespace = 'shop',
  why = { reason: 'Provisioning', message: 'creating volume' },
): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name, namespace },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'Provisioned' : why.reason,
          message: ready ? '' : why.message,
        },
      ],
    },
  };
}

export const dbKey = (name: string, ns = 'shop') => `${DB}/${ns}/${name}`;
export const appKey = (name: string, ns = 'shop') => `${APP}/${ns}/${name}`;

/** reconcileApp resolves each spec.*Ref of an App: a Database, Cache or Secret in the App's namespace unless the ref names one. */
export function reconcileApp(ctx: ReconcileContext): void {
  const spec = (ctx.object?.spec ?? {}) as Record<string, Ref>;
  const own = ctx.object!.metadata.namespace!;
  for (const [field, ref] of Object.entries(spec)) {
    const kind = KIND_OF_FIELD[field];
    if (!kind) continue;
    const { name, namespace } = typeof ref === 'string' ? { name: ref, namespace: undefined } : ref;
    ctx.resolve(
      `${kind}/${namespace ?? own}/${name}`,
      typeof ref === 'string' ? `spec.${field}` : `spec.${field}.name`,
    );
  }
}

export interface Harness {
  source: MemoryInformerSource;
  manager: Manager;
  state(key: string, controller?: string): ReferrerState | undefined;
}

/** A manager with one controller "watch" reconciling Apps with reconcileApp. */
export function harness(
  opts: {
    priming?: 'sync' | 'microtask' | 'manual';
    clock?: Clock;
    reconcile?: (ctx: ReconcileContext) => unknown;
  } = {},
): Harness {
  const source = new MemoryInformerSource({ priming: opts.priming ?? 'microtask' });
  const manager = new Manager({ source, grace: 50, statsIntervalMs: 0, clock: opts.clock });
  manager.addController({
    name: 'watch',
    for: { group: 'demo.refwatch.dev', kind: 'App' },
    reconcile: (opts.reconcile as never) ?? reconcileApp,
  });
  return {
    source,
    manager,
    state: (key, controller = 'watch') => manager.changelog.get('referrer', `${controller}|${key}`)?.state,
  };
}
