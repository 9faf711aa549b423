import type { KubeObject } from '@/lib/model';
import { Manager, MemoryInformerSource, type ReconcileContext, type Resolution } from '@/lib/engine';

export const APP_KIND = { group: 'demo.refwatch.dev', kind: 'App' };

export function app(name: string, spec: Record<string, string>, namespace = 'shop'): KubeObject {
  return { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'App', metadata: { name, namespace }, spec };
}

export function database(name: string, ready: boolean | undefined, namespace = 'shop'): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name, namespace },
    status:
      ready === undefined
        ? {}
        : {
            conditions: [
              {
                type: 'Ready',
                status: ready ? 'True' : 'False',
                reason: ready ? 'Provisioned' : 'Provisioning',
                message: ready ? '' : 'creating volume',
              },
            ],
          },
  };
}

export const dbKey = (name: string, ns = 'shop') => `Database.demo.refwatch.dev/${ns}/${name}`;
export const appKey = (name: string, ns = 'shop') => `App.demo.refwatch.dev/${ns}/${name}`;

export interface Harness {
  source: MemoryInformerSource;
  manager: Manager;
  seen: Map<string, Resolution[][]>;
  reconciles: (key: string) => number;
}

/**
 * A manager with one controller "watch" reconciling Apps: each App resolves
 * spec.*Ref Databases, in its own namespace, or in another one for a value `namespace/name`.
 */
export function harness(
  opts: {
    grace?: number;
    priming?: 'sync' | 'microtask' | 'manual';
    reconcile?: (ctx: ReconcileContext) => unknown;
    source?: MemoryInformerSource;
    namespaces?: string[];
  } = {},
): Harness {
  const source = opts.source ?? new MemoryInformerSource({ priming: opts.priming ?? 'microtask' });
  const manager = new Manager({
    source,
    grace: opts.grace ?? 50,
    statsIntervalMs: 0,
    ...(opts.namespaces ? { namespaces: opts.namespaces } : {}),
  });
  const seen = new Map<string, Resolution[][]>();
  manager.addController({
    name: 'watch',
    for: APP_KIND,
    workers: 2,
    reconcile:
      (opts.reconcile as never) ??
      ((ctx: ReconcileContext) => {
        const spec = (ctx.object?.spec ?? {}) as Record<string, string>;
        const ns = ctx.object!.metadata.namespace!;
        const rs = Object.entries(spec)
          .filter(([f]) => f.endsWith('Ref'))
          .map(([field, name]) => {
            const [other, otherName] = name.split('/');
            return ctx.resolve(otherName ? dbKey(otherName, other) : dbKey(name, ns), `spec.${field}`);
          });
        if (!seen.has(ctx.key)) seen.set(ctx.key, []);
        seen.get(ctx.key)!.push(rs);
      }),
  });
  return { source, manager, seen, reconciles: (key) => seen.get(key)?.length ?? 0 };
}

export function lastStates(h: Harness, key: string): string[] {
  return (h.seen.get(key)?.at(-1) ?? []).map((r) => r.state);
}
