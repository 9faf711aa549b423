import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StuckEntry } from '@/lib/changelog';
import {
  MAX_CHAIN_DEPTH,
  chainText,
  explain,
  foldWorkloads,
  groupByRootCause,
  groupTitle,
  ownedText,
  rootCause,
  stuck,
  type Blocker,
  type BlockerSource,
  type ReferenceExplanation,
} from '@/lib/diagnose';
import type { KubeObject } from '@/lib/model';
import type { ReconcileContext } from '@/lib/engine';
import { app, appKey, database, dbKey, harness, type Harness } from './fixtures';

/** A fake graph: each blocked object names the object it waits on and how. */
function graph(edges: Record<string, { referent: string; state?: ReferenceExplanation['state']; message?: string }>) {
  const asked: string[] = [];
  const src: BlockerSource = {
    blockerOf(key: string): Blocker | undefined {
      asked.push(key);
      const e = edges[key];
      if (!e) return undefined;
      const state = e.state ?? 'NotReady';
      return {
        controller: 'c',
        via: {
          referent: e.referent,
          fieldPath: 'spec.ref',
          state,
          reason: state,
          message: e.message ?? `${e.referent} is not ready`,
          fix: `fix ${e.referent}`,
        },
      };
    },
  };
  return { src, asked };
}

const SECRET = 'Secret/shop/db-passwd';
const missing = {
  referent: SECRET,
  state: 'NotFound' as const,
  message: `${SECRET} not found; did you mean db-password?`,
};

describe('rootCause (the walk)', () => {
  it('is undefined when the referrer is not blocked, or when its blocking referent waits on nothing', () => {
    const { src } = graph({ 'App/shop/a': missing });
    expect(rootCause(src, 'App/shop/ok')).toBeUndefined();
    expect(rootCause(src, 'App/shop/a')).toBeUndefined();
  });

  for (const depth of [2, 3, 4, 6]) {
    it(`names the deepest cause and the path to it through a chain of ${depth} references`, () => {
      const edges: Record<string, { referent: string; state?: ReferenceExplanation['state']; message?: string }> = {};
      const keys = Array.from({ length: depth }, (_, i) => `Thing/shop/t${i}`);
      for (let i = 0; i < depth - 1; i++) edges[keys[i]!] = { referent: keys[i + 1]! };
      edges[keys[depth - 1]!] = missing;
      const rc = rootCause(graph(edges).src, keys[0]!);
      expect(rc).toEqual({
        path: [...keys, SECRET],
        referent: SECRET,
        state: 'NotFound',
        reason: 'NotFound',
        message: missing.message,
        fix: `fix ${SECRET}`,
      });
      expect(chainText(rc!)).toBe(`${[...keys, SECRET].join(' → ')}: ${missing.message}`);
    });
  }

  it('reports a cycle, with the object it came back to, and stops there', () => {
    const { src, asked } = graph({
      'App/shop/a': { referent: 'App/shop/b' },
      'App/shop/b': { referent: 'App/shop/c' },
      'App/shop/c': { referent: 'App/shop/a' },
    });
    const rc = rootCause(src, 'App/shop/a');
    expect(rc).toMatchObject({ path: ['App/shop/a', 'App/shop/b', 'App/shop/c', 'App/shop/a'], cycle: true });
    expect(rc!.referent).toBe('App/shop/a');
    expect(chainText(rc!)).toBe('App/shop/a → App/shop/b → App/shop/c → App/shop/a (a cycle: each waits on the next)');
    expect(asked).toEqual(['App/shop/a', 'App/shop/b', 'App/shop/c']);
  });

  it('a referrer that waits on itself is a cycle of one', () => {
    const rc = rootCause(graph({ 'App/shop/a': { referent: 'App/shop/a' } }).src, 'App/shop/a');
    expect(rc).toMatchObject({ path: ['App/shop/a', 'App/shop/a'], cycle: true });
  });

  it('stops at its depth bound and says the chain goes on', () => {
    const edges: Record<string, { referent: string }> = {};
    for (let i = 0; i < 50; i++) edges[`Thing/shop/t${i}`] = { referent: `Thing/shop/t${i + 1}` };
    const { src, asked } = graph(edges);
    const rc = rootCause(src, 'Thing/shop/t0');
    expect(rc?.truncated).toBe(true);
    expect(rc?.path).toHaveLength(MAX_CHAIN_DEPTH + 1);
    expect(rc?.referent).toBe(`Thing/shop/t${MAX_CHAIN_DEPTH}`);
    expect(asked.length).toBeLessThanOrEqual(MAX_CHAIN_DEPTH + 1);
    expect(chainText(rc!)).toMatch(/→ … \(longer than 8 references; explain Thing\/shop\/t8\)$/);
    const short = rootCause(src, 'Thing/shop/t0', undefined, 3);
    expect(short).toMatchObject({
      truncated: true,
      path: ['Thing/shop/t0', 'Thing/shop/t1', 'Thing/shop/t2', 'Thing/shop/t3'],
    });
    // A chain exactly as long as the bound is not truncated.
    const exact = graph({ 'T/a/x0': { referent: 'T/a/x1' }, 'T/a/x1': { referent: 'T/a/x2' }, 'T/a/x2': missing });
    expect(rootCause(exact.src, 'T/a/x0', undefined, 3)).toMatchObject({
      path: ['T/a/x0', 'T/a/x1', 'T/a/x2', SECRET],
    });
    expect(rootCause(exact.src, 'T/a/x0', undefined, 3)?.truncated).toBeUndefined();
  });
});

function entry(key: string, over: Partial<StuckEntry> = {}): StuckEntry {
  return {
    id: `c|${key}`,
    key,
    controller: 'c',
    state: 'NotFound',
    since: 1000,
    ageMs: 5000,
    reason: 'NotFound',
    message: `${SECRET} not found`,
    fix: 'create it',
    referent: SECRET,
    ...over,
  };
}

describe('grouping stuck entries', () => {
  it('groups by the deepest referent, biggest group first, owned Pods folded into their workload', () => {
    const deploy = 'Deployment.apps/shop/web';
    const entries = [
      entry('Pod/shop/web-1', { workload: deploy, since: 10 }),
      entry('Ingress.networking.k8s.io/shop/web', {
        referent: 'Service/shop/web',
        reason: 'NotReady',
        rootCause: {
          path: ['Ingress.networking.k8s.io/shop/web', 'Service/shop/web', SECRET],
          referent: SECRET,
          state: 'NotFound',
          reason: 'NotFound',
          message: `${SECRET} not found`,
          fix: 'create it',
        },
        since: 20,
      }),
      entry(deploy, { since: 30 }),
      entry('Pod/shop/web-2', { workload: deploy, since: 40 }),
      entry('ReplicaSet.apps/shop/web-7c9', { workload: deploy, since: 45 }),
      entry('App.demo.refwatch.dev/shop/other', { referent: 'Secret/shop/other', since: 5 }),
      entry('App.demo.refwatch.dev/shop/broken', { referent: undefined, reason: 'ReconcileError', since: 1 }),
    ];
    const groups = groupByRootCause(entries);
    expect(groups.map(groupTitle)).toEqual([
      `5 referrers blocked by ${SECRET}`,
      '1 referrer: ReconcileError',
      '1 referrer blocked by Secret/shop/other',
    ]);
    const [first] = groups;
    expect(first!.items.map((i) => i.entry.key)).toEqual(['Ingress.networking.k8s.io/shop/web', deploy]);
    expect(first!.items[1]!.owned.map((e) => e.key)).toEqual([
      'Pod/shop/web-1',
      'Pod/shop/web-2',
      'ReplicaSet.apps/shop/web-7c9',
    ]);
    expect(ownedText(first!.items[1]!.owned)).toBe('and its ReplicaSet and 2 Pods');
    expect(first!.message).toBe(`${SECRET} not found`);
  });

  it('keeps an entry whose workload is not listed as a line of its own', () => {
    const items = foldWorkloads([entry('Pod/shop/a', { workload: 'Deployment.apps/shop/gone' }), entry('Pod/shop/b')]);
    expect(items.map((i) => [i.entry.key, i.owned.length])).toEqual([
      ['Pod/shop/a', 0],
      ['Pod/shop/b', 0],
    ]);
    expect(ownedText([])).toBe('');
    expect(ownedText([entry('Pod/shop/a'), entry('Pod/shop/b'), entry('Pod/shop/c')])).toBe('and its 3 Pods');
  });
});

const DB_OF = 'db';

/** A manager whose Apps wait on Databases, and whose Databases are referrers too: spec.secretRef → Secret. */
function chainHarness(): Harness {
  const h = harness();
  h.manager.addController({
    name: DB_OF,
    for: { group: 'demo.refwatch.dev', kind: 'Database' },
    reconcile: (ctx: ReconcileContext) => {
      const ref = (ctx.object?.spec as { secretRef?: string } | undefined)?.secretRef;
      if (ref) ctx.resolve(`Secret/${ctx.object!.metadata.namespace}/${ref}`, 'spec.secretRef');
    },
  });
  return h;
}

function secret(name: string, namespace = 'shop'): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } };
}

function withSecretRef(obj: KubeObject, secretRef: string): KubeObject {
  return { ...obj, spec: { ...(obj.spec as object), secretRef } };
}

let current: Harness | undefined;
afterEach(async () => {
  await current?.manager.stop();
  current = undefined;
});

describe('root cause from the registry', () => {
  it('explain and stuck name the deepest cause: App → Database → a missing Secret', async () => {
    const h = (current = chainHarness());
    h.manager.start();
    h.source.apply(secret('db-password'));
    h.source.apply(withSecretRef(database('orders', false), 'db-passwd'));
    h.source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => {
      expect(h.state(appKey('web'))).toBe('Waiting');
      expect(h.state(dbKey('orders'), DB_OF)).toBe('NotFound');
    });
    const expected = {
      path: [appKey('web'), dbKey('orders'), 'Secret/shop/db-passwd'],
      referent: 'Secret/shop/db-passwd',
      state: 'NotFound',
      reason: 'NotFound',
      message: 'Secret/shop/db-passwd not found; did you mean db-password?',
      fix: 'set spec.secretRef to db-password, or create Secret/shop/db-passwd',
    };
    const e = explain(h.manager, appKey('web'));
    expect(e.ok && e.value.controllers.find((c) => c.controller === 'watch')?.rootCause).toEqual(expected);
    const entries = stuck(h.manager, { olderThan: 0, now: Date.now() + 1 });
    const web = entries.find((s) => s.key === appKey('web'));
    expect(web).toMatchObject({ referent: dbKey('orders'), reason: 'NotReady', rootCause: expected });
    // The Database is stuck on the Secret directly: no chain to add.
    expect(entries.find((s) => s.key === dbKey('orders'))?.rootCause).toBeUndefined();
    expect(groupByRootCause(entries).map(groupTitle)).toEqual(['2 referrers blocked by Secret/shop/db-passwd']);

    // The cause fixed, the chain is gone: the Database is Resolved, so the App's not-ready Database is its own cause.
    h.source.apply(withSecretRef(database('orders', false), 'db-password'));
    await vi.waitFor(() => expect(h.state(dbKey('orders'), DB_OF)).toBe('Resolved'));
    const after = explain(h.manager, appKey('web'));
    expect(after.ok && after.value.controllers.find((c) => c.controller === 'watch')?.rootCause).toBeUndefined();
  });

  it('a cycle between two referrers is reported as a cycle', async () => {
    const h = (current = harness({
      reconcile: (ctx) => {
        const other = (ctx.object?.spec as { next?: string } | undefined)?.next;
        if (other) ctx.resolve(appKey(other), 'spec.next');
      },
    }));
    h.manager.start();
    const conditionFalse = { conditions: [{ type: 'Ready', status: 'False', reason: 'Waiting', message: 'waits' }] };
    h.source.apply({ ...app('a', {}), spec: { next: 'b' }, status: conditionFalse });
    h.source.apply({ ...app('b', {}), spec: { next: 'a' }, status: conditionFalse });
    await vi.waitFor(() => {
      expect(h.state(appKey('a'))).toBe('Waiting');
      expect(h.state(appKey('b'))).toBe('Waiting');
    });
    const [first] = stuck(h.manager, { olderThan: 0, now: Date.now() + 1 });
    expect(first?.rootCause).toMatchObject({ cycle: true, path: [first!.key, expect.any(String), first!.key] });
  });
});

/** Deployment → ReplicaSet → Pods, each a referrer of one Secret through spec.secretRef, Pods owned by the ReplicaSet. */
function workloadHarness(withReplicaSets: boolean): Harness {
  const h = harness();
  const reconcile = (ctx: ReconcileContext) => {
    const ref = (ctx.object?.spec as { secretRef?: string } | undefined)?.secretRef;
    if (ref) ctx.resolve(`Secret/${ctx.object!.metadata.namespace}/${ref}`, 'spec.secretRef');
  };
  h.manager.addController({ name: 'deploy', for: { group: 'apps', kind: 'Deployment' }, reconcile });
  if (withReplicaSets) h.manager.addController({ name: 'rs', for: { group: 'apps', kind: 'ReplicaSet' }, reconcile });
  h.manager.addController({ name: 'pod', for: { group: '', kind: 'Pod' }, reconcile });
  return h;
}

const owned = (apiVersion: string, kind: string, name: string) => [
  { apiVersion, kind, name, uid: `${name}-uid`, controller: true },
];

function workloadObjects(): KubeObject[] {
  const meta = (name: string, ownerReferences?: unknown) => ({
    name,
    namespace: 'shop',
    ...(ownerReferences ? { ownerReferences } : {}),
  });
  return [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('web'), spec: { secretRef: 'db' } },
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: meta('web-7c9', owned('apps/v1', 'Deployment', 'web')),
      spec: { secretRef: 'db' },
    },
    ...['a', 'b'].map((p) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta(`web-7c9-${p}`, owned('apps/v1', 'ReplicaSet', 'web-7c9')),
      spec: { secretRef: 'db' },
    })),
  ];
}

describe('no duplicate noise: Pods under the workload that owns them', () => {
  it('names the Deployment once, "and its ReplicaSet and 2 Pods", when all wait on the same Secret', async () => {
    const h = (current = workloadHarness(true));
    h.manager.start();
    for (const o of workloadObjects()) h.source.apply(o);
    await vi.waitFor(() => expect(h.state('Pod/shop/web-7c9-b', 'pod')).toBe('NotFound'));
    await vi.waitFor(() => expect(h.state('Deployment.apps/shop/web', 'deploy')).toBe('NotFound'));
    const entries = stuck(h.manager, { olderThan: 0, now: Date.now() + 1 });
    expect(Object.fromEntries(entries.map((e) => [e.key, e.workload]))).toEqual({
      'Deployment.apps/shop/web': undefined,
      'ReplicaSet.apps/shop/web-7c9': 'Deployment.apps/shop/web',
      'Pod/shop/web-7c9-a': 'Deployment.apps/shop/web',
      'Pod/shop/web-7c9-b': 'Deployment.apps/shop/web',
    });
    const items = foldWorkloads(entries);
    expect(items).toHaveLength(1);
    expect(items[0]!.entry.key).toBe('Deployment.apps/shop/web');
    expect(ownedText(items[0]!.owned)).toBe('and its ReplicaSet and 2 Pods');
  });

  it('a Pod blocked by another cause than its workload stays a line of its own', async () => {
    const h = (current = workloadHarness(true));
    h.manager.start();
    const objects = workloadObjects();
    objects[3] = { ...objects[3]!, spec: { secretRef: 'other' } };
    for (const o of objects) h.source.apply(o);
    await vi.waitFor(() => expect(h.state('Pod/shop/web-7c9-b', 'pod')).toBe('NotFound'));
    await vi.waitFor(() => expect(h.state('Deployment.apps/shop/web', 'deploy')).toBe('NotFound'));
    const entries = stuck(h.manager, { olderThan: 0, now: Date.now() + 1 });
    expect(entries.find((e) => e.key === 'Pod/shop/web-7c9-a')?.workload).toBe('Deployment.apps/shop/web');
    expect(entries.find((e) => e.key === 'Pod/shop/web-7c9-b')?.workload).toBeUndefined();
    expect(foldWorkloads(entries).map((i) => i.entry.key)).toEqual(
      expect.arrayContaining(['Deployment.apps/shop/web', 'Pod/shop/web-7c9-b']),
    );
  });

  it('without a cached ReplicaSet the climb stops at the Pod: no owner is guessed', async () => {
    const h = (current = workloadHarness(false));
    h.manager.start();
    for (const o of workloadObjects()) h.source.apply(o);
    await vi.waitFor(() => expect(h.state('Pod/shop/web-7c9-b', 'pod')).toBe('NotFound'));
    await vi.waitFor(() => expect(h.state('Deployment.apps/shop/web', 'deploy')).toBe('NotFound'));
    const entries = stuck(h.manager, { olderThan: 0, now: Date.now() + 1 });
    expect(entries.every((e) => e.workload === undefined)).toBe(true);
  });
});
