import { describe, expect, it } from 'vitest';
import { api, DATABASE_CRD, DB_PATH, start } from './harness';

describe('embedded API server: discovery', () => {
  it('serves /api, /apis, group versions and /version like kube-apiserver', async () => {
    const s = await start();
    const versions = await api(s, 'GET', '/api');
    expect(versions.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });

    const core = await api(s, 'GET', '/api/v1');
    expect(core.body.kind).toBe('APIResourceList');
    expect(core.body.groupVersion).toBe('v1');
    const pods = core.body.resources.find((r: { name: string }) => r.name === 'pods');
    expect(pods).toMatchObject({ singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'] });
    expect(pods.verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']));
    expect(core.body.resources.map((r: { name: string }) => r.name)).toContain('pods/status');
    expect(core.body.resources.find((r: { name: string }) => r.name === 'namespaces').namespaced).toBe(false);

    const groups = await api(s, 'GET', '/apis');
    expect(groups.body.kind).toBe('APIGroupList');
    const names = groups.body.groups.map((g: { name: string }) => g.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'apps',
        'networking.k8s.io',
        'rbac.authorization.k8s.io',
        'storage.k8s.io',
        'autoscaling',
        'apiextensions.k8s.io',
      ]),
    );
    expect(names).not.toContain('gateway.networking.k8s.io');

    const apps = await api(s, 'GET', '/apis/apps/v1');
    expect(apps.body).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1' });
    expect((await api(s, 'GET', '/apis/autoscaling')).body.preferredVersion).toEqual({
      groupVersion: 'autoscaling/v2',
      version: 'v2',
    });

    const version = await api(s, 'GET', '/version');
    expect(version.body.gitVersion).toBe('v1.35.0-refwatch.embedded');
    for (const probe of ['/healthz', '/readyz', '/livez'])
      expect(await api(s, 'GET', probe)).toMatchObject({ status: 200, body: 'ok' });
  });

  it('adds a CRD group to discovery when the CRD is created and removes it when deleted', async () => {
    const s = await start();
    expect((await api(s, 'GET', DB_PATH)).status).toBe(404);

    const created = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', DATABASE_CRD);
    expect(created.status).toBe(201);
    const conditions = Object.fromEntries(
      created.body.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]),
    );
    expect(conditions).toEqual({ NamesAccepted: 'True', Established: 'True' });
    expect(created.body.status.acceptedNames).toMatchObject({
      plural: 'databases',
      kind: 'Database',
      listKind: 'DatabaseList',
    });

    const list = await api(s, 'GET', DB_PATH);
    expect(list.body.resources).toEqual([
      {
        name: 'databases',
        singularName: 'database',
        namespaced: true,
        kind: 'Database',
        verbs: expect.any(Array),
        shortNames: ['db'],
      },
      {
        name: 'databases/status',
        singularName: '',
        namespaced: true,
        kind: 'Database',
        verbs: ['get', 'patch', 'update'],
      },
    ]);
    const groups = await api(s, 'GET', '/apis');
    expect(groups.body.groups).toContainEqual({
      name: 'demo.refwatch.dev',
      versions: [{ groupVersion: 'demo.refwatch.dev/v1alpha1', version: 'v1alpha1' }],
      preferredVersion: { groupVersion: 'demo.refwatch.dev/v1alpha1', version: 'v1alpha1' },
    });

    const deleted = await api(
      s,
      'DELETE',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/databases.demo.refwatch.dev',
    );
    expect(deleted.status).toBe(200);
    expect((await api(s, 'GET', DB_PATH)).status).toBe(404);
    expect((await api(s, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name)).not.toContain(
      'demo.refwatch.dev',
    );
  });

  it('prefers GA over beta over alpha among a CRD group’s served versions', async () => {
    const s = await start();
    const crd = structuredClone(DATABASE_CRD);
    crd.spec.versions = [
      { ...crd.spec.versions[0]!, name: 'v1alpha1', storage: false },
      { ...crd.spec.versions[0]!, name: 'v1', storage: true },
      { ...crd.spec.versions[0]!, name: 'v1beta1', storage: false },
    ];
    expect((await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const group = await api(s, 'GET', '/apis/demo.refwatch.dev');
    expect(group.body.versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v1beta1', 'v1alpha1']);
    expect(group.body.preferredVersion.version).toBe('v1');
  });

  it('rejects an invalid CRD with 422 naming the field', async () => {
    const s = await start();
    const bad = structuredClone(DATABASE_CRD);
    bad.metadata.name = 'wrong.demo.refwatch.dev';
    const res = await api(s, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', bad);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      details: { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
    });
    expect(res.body.details.causes).toContainEqual(expect.objectContaining({ field: 'metadata.name' }));
  });
});
