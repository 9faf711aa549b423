/**
 * A synthetic registry for the wire benchmarks: a Manager over
 * MemoryInformerSource reconciles `apps` Apps, each declaring three
 * references (its own Database, a Cache shared by ten Apps, a Secret shared
 * per namespace). One Database in ten is not Ready, one App in fifty names
 * its Database with a typo, one Cache in four is not Ready. Objects carry
 * UUIDs and numeric resourceVersions as a real API server's do.
 */
import { randomUUID } from 'node:crypto';
import { ChangeLog } from '../../lib/changelog';
import { Manager, MemoryInformerSource, conditionReadiness, existsReadiness } from '../../lib/engine';
import type { KubeObject } from '../../lib/model';

const GROUP = 'demo.refwatch.dev';
const API = `${GROUP}/v1alpha1`;
const NAMESPACES = 50;
const APPS_PER_CACHE = 10;

const ns = (i: number) => `team-${i % NAMESPACES}`;
const ready = (ok: boolean) => ({
  conditions: [
    ok
      ? { type: 'Ready', status: 'True', reason: 'Provisioned' }
      : { type: 'Ready', status: 'False', reason: 'Provisioning', message: 'creating volume pvc-data-0' },
  ],
});
const cacheOf = (i: number) => Math.floor(i / (NAMESPACES * APPS_PER_CACHE));
const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace !== undefined ? { namespace } : {}),
  uid: randomUUID(),
});

function app(i: number): KubeObject {
  const database = i % 50 === 7 ? `orders-db-${i}x` : `orders-db-${i}`;
  return {
    apiVersion: API,
    kind: 'App',
    metadata: meta(`storefront-${i}`, ns(i)),
    spec: {
      databaseRef: { name: database },
      cacheRef: { name: `sessions-${cacheOf(i)}` },
      secretRef: { name: 'db-credentials' },
    },
  };
}

export interface SyntheticRegistry {
  manager: Manager;
  references: number;
  setupMs: number;
}

/** buildRegistry starts the Manager and resolves once every App is reconciled and the queue is idle. */
export async function buildRegistry(apps: number): Promise<SyntheticRegistry> {
  const started = performance.now();
  const source = new MemoryInformerSource({ priming: 'sync' });
  const readyCondition = conditionReadiness('Ready');
  // A log of its own, written as the reconciles go, as the server gives its Manager (server/runtime.ts).
  const manager = new Manager({
    source,
    changelog: new ChangeLog(),
    statsIntervalMs: 0,
    readiness: (kind) => (kind === 'Secret' ? existsReadiness : kind.endsWith(GROUP) ? readyCondition : undefined),
  });
  for (let i = 0; i < apps; i++)
    source.apply({
      apiVersion: API,
      kind: 'Database',
      metadata: meta(`orders-db-${i}`, ns(i)),
      status: ready(i % 10 !== 3),
    });
  for (let i = 0; i < Math.ceil(apps / APPS_PER_CACHE); i++) {
    source.apply({
      apiVersion: API,
      kind: 'Cache',
      metadata: meta(`sessions-${Math.floor(i / NAMESPACES)}`, ns(i)),
      status: ready(i % 4 !== 0),
    });
  }
  for (let n = 0; n < NAMESPACES; n++)
    source.apply({ apiVersion: 'v1', kind: 'Secret', metadata: meta('db-credentials', `team-${n}`) });

  manager.addController({
    name: 'watch',
    for: { group: GROUP, kind: 'App' },
    workers: 4,
    reconcile(ctx) {
      const spec = ctx.object?.spec as
        { databaseRef: { name: string }; cacheRef: { name: string }; secretRef: { name: string } } | undefined;
      if (!spec) return;
      const namespace = ctx.object!.metadata.namespace!;
      ctx.resolve(`Database.${GROUP}/${namespace}/${spec.databaseRef.name}`, 'spec.databaseRef');
      ctx.resolve(`Cache.${GROUP}/${namespace}/${spec.cacheRef.name}`, 'spec.cacheRef');
      ctx.resolve(`Secret/${namespace}/${spec.secretRef.name}`, 'spec.secretRef');
    },
  });
  manager.start();
  for (let i = 0; i < apps; i++) source.apply(app(i));

  const queue = manager.controller('watch')!.queue;
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const referrers = manager.changelog.size('referrer');
    if (referrers === apps && queue.len() === 0 && queue.stats().processing === 0) break;
    if (Date.now() > deadline)
      throw new Error(`setup did not settle: ${referrers}/${apps} referrers reported, queue depth ${queue.len()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  manager.publishStats();
  const references = manager.changelog.size('reference');
  if (references !== apps * 3) throw new Error(`expected ${apps * 3} references, have ${references}`);
  return { manager, references, setupMs: performance.now() - started };
}
