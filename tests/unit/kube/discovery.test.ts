import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Discovery, KubeClient, WatchFailure, resourceForKind, resourcePath, versionsOf } from '@/lib/kube';
import { DATABASE, FakeApiServer, type FakeKind } from './fake-apiserver';

describe('discovery mapping', () => {
  const list = {
    groupVersion: 'demo.refwatch.dev/v1alpha1',
    resources: [
      { name: 'databases/status', kind: 'Database', namespaced: true },
      { name: 'databases', kind: 'Database', namespaced: true, verbs: ['list', 'watch'] },
    ],
  };

  it('maps a kind to its plural resource, skipping subresources', () => {
    expect(resourceForKind(list, { group: 'demo.refwatch.dev', kind: 'Database' })).toEqual({
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      kind: 'Database',
      resource: 'databases',
      namespaced: true,
      verbs: ['list', 'watch'],
    });
    expect(resourceForKind(list, { group: 'other.dev', kind: 'Database' })).toBeUndefined();
    expect(
      resourceForKind(
        { groupVersion: 'v1', resources: [{ name: 'secrets', kind: 'Secret', namespaced: true }] },
        { group: '', kind: 'Secret' },
      ),
    ).toMatchObject({ group: '', version: 'v1' });
  });

  it('tries the preferred version first', () => {
    const groups = {
      groups: [
        {
          name: 'g.dev',
          versions: [
            { groupVersion: 'g.dev/v2', version: 'v2' },
            { groupVersion: 'g.dev/v1', version: 'v1' },
          ],
          preferredVersion: { groupVersion: 'g.dev/v1', version: 'v1' },
        },
      ],
    };
    expect(versionsOf(groups, 'g.dev')).toEqual(['v1', 'v2']);
    expect(versionsOf(groups, 'absent.dev')).toEqual([]);
  });

  it('builds collection paths for each scope', () => {
    const db = {
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      kind: 'Database',
      resource: 'databases',
      namespaced: true,
      verbs: [],
    };
    expect(resourcePath(db, 'shop')).toBe('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases');
    expect(resourcePath(db)).toBe('/apis/demo.refwatch.dev/v1alpha1/databases');
    expect(resourcePath({ ...db, group: '', version: 'v1', resource: 'nodes', namespaced: false }, 'shop')).toBe(
      '/api/v1/nodes',
    );
  });
});

describe('Discovery against a server', () => {
  let server: FakeApiServer;
  let discovery: Discovery;
  const CACHE: FakeKind = {
    group: 'demo.refwatch.dev',
    version: 'v1alpha1',
    kind: 'Cache',
    resource: 'caches',
    namespaced: true,
  };

  beforeEach(async () => {
    server = await FakeApiServer.start([DATABASE]);
    discovery = new Discovery(KubeClient.fromKubeconfig(server.kubeconfig()));
  });
  afterEach(() => server.stop());

  it('caches what it found', async () => {
    await expect(discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Database' })).resolves.toMatchObject({
      resource: 'databases',
    });
    const n = server.requests.length;
    await discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Database' });
    expect(server.requests.length).toBe(n);
  });

  it('says which CRD is missing for an unknown kind, and finds it once installed', async () => {
    const e = await discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Cache' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WatchFailure);
    expect((e as WatchFailure).watchError).toMatchObject({
      reason: 'KindUnknown',
      message: 'no resource serves kind Cache.demo.refwatch.dev: is its CustomResourceDefinition installed?',
    });
    server.addKind(CACHE);
    await expect(discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Cache' })).resolves.toMatchObject({
      resource: 'caches',
    });
  });

  it('reports a kind of an unknown group as unknown too', async () => {
    const e = await discovery.resolve({ group: 'nope.dev', kind: 'Thing' }).catch((x: unknown) => x);
    expect((e as WatchFailure).watchError.reason).toBe('KindUnknown');
  });

  it('asks again after invalidate', async () => {
    await discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Database' });
    server.removeKind(DATABASE);
    discovery.invalidate({ group: 'demo.refwatch.dev', kind: 'Database' });
    const e = await discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Database' }).catch((x: unknown) => x);
    expect((e as WatchFailure).watchError.reason).toBe('KindUnknown');
  });

  it('shares one lookup between concurrent resolves', async () => {
    const before = discovery.requests;
    await Promise.all([1, 2, 3].map(() => discovery.resolve({ group: 'demo.refwatch.dev', kind: 'Database' })));
    expect(discovery.requests - before).toBe(2);
  });
});
