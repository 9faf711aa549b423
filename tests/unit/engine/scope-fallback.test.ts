import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import { Manager, MemoryInformerSource, type ScopeFallback } from '@/lib/engine';
import { app, appKey, APP_KIND, database, dbKey } from './fixtures';
import { LockServer, MemoryLock } from './leader-election-lock';

const APP = 'App.demo.refwatch.dev';
const DB = 'Database.demo.refwatch.dev';
const CRB = 'ClusterRoleBinding.rbac.authorization.k8s.io';
const CRB_KIND = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding' };

const managers: Manager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

function start(
  source: MemoryInformerSource,
  opts: Partial<ConstructorParameters<typeof Manager>[0]> = {},
): { manager: Manager; reported: ScopeFallback[]; states: Map<string, string[]> } {
  const reported: ScopeFallback[] = [];
  const states = new Map<string, string[]>();
  const manager = new Manager({
    source,
    grace: 50,
    statsIntervalMs: 0,
    changelog: new ChangeLog(),
    hooks: { onScopeFallback: (f) => void reported.push(f) },
    ...opts,
  });
  managers.push(manager);
  manager.addController({
    name: 'apps',
    for: APP_KIND,
    reconcile(ctx) {
      const ref = (ctx.object?.spec as { databaseRef?: string } | undefined)?.databaseRef;
      if (ref)
        states.set(ctx.key, [ctx.resolve(dbKey(ref, ctx.object!.metadata.namespace!), 'spec.databaseRef').state]);
    },
  });
  manager.start();
  return { manager, reported, states };
}

describe('a controller whose own kind may not be listed in all namespaces', () => {
  it('falls back to the context namespace as kubectl does, resolves there, and says so', async () => {
    const source = new MemoryInformerSource({ clusterScoped: [CRB] });
    source.forbid(APP);
    source.forbid(DB);
    const { manager, reported, states } = start(source, {
      fallbackNamespaces: [{ namespace: 'team-a', from: 'the context' }],
    });
    await vi.waitFor(() => expect(source.watches().find((w) => w.target.namespace === 'team-a')?.primed).toBe(true));
    source.apply(database('orders', true, 'team-a'));
    source.apply(app('a', { databaseRef: 'orders' }, 'team-a'));
    source.apply(app('b', { databaseRef: 'orders' }, 'team-b'));
    await vi.waitFor(() => expect(states.get(appKey('a', 'team-a'))).toEqual(['Ready']));
    expect(states.has(appKey('b', 'team-b'))).toBe(false);
    const message = `${APP}: cluster-wide list forbidden; watching namespace team-a (from the context)`;
    expect(manager.scopeFallbacks().map((f) => f.message)).toContain(message);
    expect(reported.map((f) => f.message)).toEqual([
      message,
      `${DB}: cluster-wide list forbidden; watching each namespace its referents live in`,
    ]);
    const events = manager.changelog.snapshot({ entities: ['event'] }).entities.event ?? [];
    expect(events.some((e) => e.message === message)).toBe(true);
    // The forbidden cluster-wide watch of the own kind is given up.
    expect(source.watches().map((w) => `${w.target.kind}|${w.target.namespace ?? '*'}`)).not.toContain('App|*');
  });

  it('names every fallback namespace and where it came from', async () => {
    const source = new MemoryInformerSource();
    source.forbid(APP);
    const { manager } = start(source, {
      fallbackNamespaces: [
        { namespace: 'team-a', from: 'the context' },
        { namespace: 'team-b', from: '--namespaces' },
        { namespace: 'team-a', from: '--namespaces' },
      ],
    });
    await vi.waitFor(() => expect(manager.scopeFallbacks()).toHaveLength(1));
    expect(manager.scopeFallbacks()[0]!.message).toBe(
      `${APP}: cluster-wide list forbidden; watching namespaces team-a (from the context), team-b (from --namespaces)`,
    );
    await vi.waitFor(() =>
      expect(source.openedTargets.filter((t) => t.startsWith(APP))).toEqual([
        `${APP}|*|`,
        `${APP}|team-a|`,
        `${APP}|team-b|`,
      ]),
    );
  });

  it('stays forbidden without fallback namespaces', async () => {
    const source = new MemoryInformerSource();
    source.forbid(APP);
    const { manager } = start(source);
    await vi.waitFor(() => expect(source.watches()[0]?.lastError?.reason).toBe('Forbidden'));
    expect(manager.scopeFallbacks()).toEqual([]);
    expect(source.openedTargets).toEqual([`${APP}|*|`]);
  });

  it('never splits a cluster-scoped kind: not by namespaces, not on a 403', async () => {
    const source = new MemoryInformerSource({ clusterScoped: [CRB] });
    source.forbid(CRB);
    const manager = new Manager({
      source,
      statsIntervalMs: 0,
      namespaces: ['team-a', 'team-b'],
      fallbackNamespaces: [{ namespace: 'team-a', from: 'the context' }],
    });
    managers.push(manager);
    manager.addController({ name: 'crbs', for: CRB_KIND, reconcile: () => {} });
    manager.addController({ name: 'apps', for: APP_KIND, reconcile: () => {} });
    manager.start();
    await vi.waitFor(() =>
      expect(source.watches().find((w) => w.target.kind === 'ClusterRoleBinding')?.lastError).toBeDefined(),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(source.openedTargets.filter((t) => t.startsWith(CRB))).toEqual([`${CRB}|*|`]);
    expect(source.openedTargets.filter((t) => t.startsWith(APP)).sort()).toEqual([`${APP}|team-a|`, `${APP}|team-b|`]);
    expect(manager.scopeFallbacks()).toEqual([]);
  });

  it('rejects a fallback namespace that is not a namespace name, naming the field', () => {
    expect(
      () =>
        new Manager({ source: new MemoryInformerSource(), fallbackNamespaces: [{ namespace: 'Team_A', from: 'x' }] }),
    ).toThrow(/fallbackNamespaces\[0\]\.namespace/);
    expect(
      () =>
        new Manager({ source: new MemoryInformerSource(), fallbackNamespaces: [{ namespace: 'team-a', from: '' }] }),
    ).toThrow(/fallbackNamespaces\[0\]\.from must say where team-a came from/);
  });

  it('a standby warms a cluster-scoped kind once, cluster-wide, under namespaces', async () => {
    const source = new MemoryInformerSource({ clusterScoped: [CRB] });
    const server = new LockServer();
    const leader = new Manager({
      source: new MemoryInformerSource(),
      statsIntervalMs: 0,
      leaderElection: {
        lock: new MemoryLock(server),
        identity: 'a',
        leaseDuration: 60_000,
        renewDeadline: 40_000,
        retryPeriod: 50,
      },
    });
    managers.push(leader);
    leader.start();
    await vi.waitFor(() => expect(leader.leadership()?.isLeader).toBe(true));
    const standby = new Manager({
      source,
      statsIntervalMs: 0,
      namespaces: ['team-a', 'team-b'],
      leaderElection: {
        lock: new MemoryLock(server),
        identity: 'b',
        leaseDuration: 60_000,
        renewDeadline: 40_000,
        retryPeriod: 50,
      },
    });
    managers.push(standby);
    standby.addController({ name: 'crbs', for: CRB_KIND, reconcile: () => {} });
    standby.start();
    await vi.waitFor(() => expect(source.openedTargets.length).toBeGreaterThan(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(standby.leadership()?.isLeader).toBe(false);
    expect(source.openedTargets).toEqual([`${CRB}|*|`]);
  });
});
