import { describe, expect, it } from 'vitest';
import { api, database, DATABASE_CRD, DB_PATH, namespace, start, watch } from './harness';

const CM = '/api/v1/namespaces/shop/configmaps';

async function withShop() {
  return start({ objects: [DATABASE_CRD, namespace('shop')] });
}

describe('embedded API server: CRUD', () => {
  it('creates, reads, updates and deletes with server-owned metadata', async () => {
    const s = await withShop();
    const created = await api(s, 'POST', CM, { metadata: { name: 'settings' }, data: { mode: 'fast' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'shop' },
      data: { mode: 'fast' },
    });
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const rv1 = Number(created.body.metadata.resourceVersion);

    const read = await api(s, 'GET', `${CM}/settings`);
    expect(read.body).toEqual(created.body);

    const updated = await api(s, 'PUT', `${CM}/settings`, { ...created.body, data: { mode: 'slow' } });
    expect(updated.status).toBe(200);
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(rv1);
    expect(updated.body.metadata.uid).toBe(created.body.metadata.uid);

    const deleted = await api(s, 'DELETE', `${CM}/settings`);
    expect(deleted.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'settings', kind: 'configmaps', uid: created.body.metadata.uid },
    });
    expect((await api(s, 'GET', `${CM}/settings`)).status).toBe(404);
  });

  it('answers 404, 409 and 422 with kube-apiserver Status bodies', async () => {
    const s = await withShop();
    expect((await api(s, 'GET', `${DB_PATH}/namespaces/shop/databases/missing`)).body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'databases.demo.refwatch.dev "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', group: 'demo.refwatch.dev', kind: 'databases' },
      code: 404,
    });
    await api(s, 'POST', CM, { metadata: { name: 'a' } });
    const dup = await api(s, 'POST', CM, { metadata: { name: 'a' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({
      reason: 'AlreadyExists',
      message: 'configmaps "a" already exists',
      details: { name: 'a', kind: 'configmaps' },
    });

    const bad = await api(s, 'POST', CM, { metadata: { name: 'Not_Valid' } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ reason: 'Invalid', details: { name: 'Not_Valid', kind: 'ConfigMap' } });
    expect(bad.body.message).toMatch(
      /^ConfigMap "Not_Valid" is invalid: metadata\.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/,
    );

    const nameless = await api(s, 'POST', CM, { metadata: {} });
    expect(nameless.status).toBe(422);
    expect(nameless.body.details.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      },
    ]);

    const noNs = await api(s, 'POST', '/api/v1/namespaces/absent/configmaps', { metadata: { name: 'x' } });
    expect(noNs.status).toBe(404);
    expect(noNs.body).toMatchObject({
      message: 'namespaces "absent" not found',
      details: { name: 'absent', kind: 'namespaces' },
    });

    expect((await api(s, 'PUT', `${CM}/ghost`, { metadata: { name: 'ghost' } })).status).toBe(404);
    expect((await api(s, 'POST', CM, '{not json')).status).toBe(400);
    expect((await api(s, 'POST', `${CM}/a`, { metadata: { name: 'a' } })).status).toBe(405);
    expect((await api(s, 'GET', '/api/v1/widgets')).body).toMatchObject({
      code: 404,
      message: 'the server could not find the requested resource',
    });
  });

  it('rejects a stale resourceVersion with 409 Conflict', async () => {
    const s = await withShop();
    const created = (await api(s, 'POST', CM, { metadata: { name: 'c' }, data: { n: '1' } })).body;
    expect((await api(s, 'PUT', `${CM}/c`, { ...created, data: { n: '2' } })).status).toBe(200);
    const stale = await api(s, 'PUT', `${CM}/c`, { ...created, data: { n: '3' } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('generates names from generateName', async () => {
    const s = await withShop();
    const res = await api(s, 'POST', CM, { metadata: { generateName: 'job-' } });
    expect(res.status).toBe(201);
    expect(res.body.metadata.name).toMatch(/^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const s = await withShop();
    const res = await api(s, 'POST', CM, {
      metadata: { name: 'big' },
      data: { blob: 'x'.repeat(3 * 1024 * 1024 + 10) },
    });
    expect(res.status).toBe(413);
    expect(res.body.reason).toBe('RequestEntityTooLarge');
  });

  it('keeps status and spec apart where /status is a subresource, and bumps generation on spec changes only', async () => {
    const s = await withShop();
    const path = `${DB_PATH}/namespaces/shop/databases`;
    const created = (await api(s, 'POST', path, database('orders', 'shop', { status: { ready: true } }))).body;
    expect(created.status).toBeUndefined();
    expect(created.metadata.generation).toBe(1);

    const statusWrite = await api(s, 'PUT', `${path}/orders/status`, {
      ...created,
      spec: { engine: 'ignored' },
      status: { ready: true },
    });
    expect(statusWrite.body).toMatchObject({
      spec: { engine: 'postgres' },
      status: { ready: true },
      metadata: { generation: 1 },
    });

    const mainWrite = await api(s, 'PUT', `${path}/orders`, {
      ...statusWrite.body,
      spec: { engine: 'mysql' },
      status: { ready: false },
    });
    expect(mainWrite.body).toMatchObject({
      spec: { engine: 'mysql' },
      status: { ready: true },
      metadata: { generation: 2 },
    });

    const statusPatch = await api(
      s,
      'PATCH',
      `${path}/orders/status`,
      { status: { ready: false }, spec: { engine: 'x' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(statusPatch.body).toMatchObject({
      spec: { engine: 'mysql' },
      status: { ready: false },
      metadata: { generation: 2 },
    });
    expect((await api(s, 'GET', `${path}/orders/status`)).body.status).toEqual({ ready: false });
  });

  it('does not write an update that changes nothing', async () => {
    const s = await withShop();
    const created = (await api(s, 'POST', CM, { metadata: { name: 'same' }, data: { a: '1' } })).body;
    const again = await api(s, 'PUT', `${CM}/same`, created);
    expect(again.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('applies merge patches, JSON patches, and strategic merge patches to built-in kinds', async () => {
    const s = await withShop();
    await api(s, 'POST', CM, { metadata: { name: 'p', labels: { a: '1', b: '2' } }, data: { x: '1' } });
    const merged = await api(
      s,
      'PATCH',
      `${CM}/p`,
      { metadata: { labels: { b: null, c: '3' } }, data: { y: '2' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(merged.body.metadata.labels).toEqual({ a: '1', c: '3' });
    expect(merged.body.data).toEqual({ x: '1', y: '2' });

    const json = await api(
      s,
      'PATCH',
      `${CM}/p`,
      [
        { op: 'replace', path: '/data/x', value: 'changed' },
        { op: 'remove', path: '/data/y' },
      ],
      {
        'content-type': 'application/json-patch+json',
      },
    );
    expect(json.body.data).toEqual({ x: 'changed' });

    const smp = await api(
      s,
      'PATCH',
      `${CM}/p`,
      { data: { z: '9' } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    expect(smp.body.data).toEqual({ x: 'changed', z: '9' });

    const crSmp = await api(s, 'POST', `${DB_PATH}/namespaces/shop/databases`, database('d'));
    expect(crSmp.status).toBe(201);
    const refused = await api(
      s,
      'PATCH',
      `${DB_PATH}/namespaces/shop/databases/d`,
      { spec: {} },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    expect(refused.status).toBe(415);
    // It names the types kube-apiserver applies to a custom resource: no strategic merge patch.
    expect(refused.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    const apply = await api(s, 'PATCH', `${CM}/p`, {}, { 'content-type': 'application/apply-patch+yaml' });
    expect(apply.status).toBe(422);
    expect(apply.body.message).toMatch(/fieldManager: Required value: is required for apply patch/);
    expect((await api(s, 'PATCH', `${CM}/absent`, {}, { 'content-type': 'application/merge-patch+json' })).status).toBe(
      404,
    );
  });

  it('serves cluster-scoped resources and all-namespace lists', async () => {
    const s = await start({ objects: [namespace('a'), namespace('b')] });
    const role = await api(s, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'system:reader' },
      rules: [],
    });
    expect(role.status).toBe(201);
    expect(role.body.metadata.namespace).toBeUndefined();
    await api(s, 'POST', '/api/v1/namespaces/a/secrets', { metadata: { name: 's1' } });
    await api(s, 'POST', '/api/v1/namespaces/b/secrets', { metadata: { name: 's2' } });
    const all = await api(s, 'GET', '/api/v1/secrets');
    expect(all.body.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace)).toEqual(['a', 'b']);
    // Typed lists carry kind on the list, not on the items.
    expect(all.body.kind).toBe('SecretList');
    expect(all.body.items[0].kind).toBeUndefined();
  });

  it('deletes a namespace with everything in it, emitting DELETED events', async () => {
    const s = await withShop();
    await api(s, 'POST', CM, { metadata: { name: 'doomed' } });
    await api(s, 'POST', `${DB_PATH}/namespaces/shop/databases`, database('orders'));
    const w = await watch(s, `${DB_PATH}/databases?watch=1`);
    await expect.poll(() => w.names()).toEqual(['ADDED orders']);

    const res = await api(s, 'DELETE', '/api/v1/namespaces/shop');
    expect(res.status).toBe(200);
    expect(res.body.status.phase).toBe('Terminating');
    await expect.poll(() => w.names()).toEqual(['ADDED orders', 'DELETED orders']);
    expect((await api(s, 'GET', '/api/v1/namespaces/shop')).status).toBe(404);
    expect((await api(s, 'GET', `${CM}/doomed`)).status).toBe(404);
    await w.close();
  });

  it('deleting a CRD deletes its objects and ends their watches', async () => {
    const s = await withShop();
    await api(s, 'POST', `${DB_PATH}/namespaces/shop/databases`, database('orders'));
    const w = await watch(s, `${DB_PATH}/databases?watch=1`);
    await expect.poll(() => w.names()).toEqual(['ADDED orders']);
    await api(s, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/databases.demo.refwatch.dev');
    await expect.poll(() => w.ended).toBe(true);
    expect(w.names()).toEqual(['ADDED orders', 'DELETED orders']);
    expect(s.openWatches()['databases.demo.refwatch.dev'] ?? 0).toBe(0);
  });

  it('keeps an object with finalizers until they are removed', async () => {
    const s = await withShop();
    const path = `${DB_PATH}/namespaces/shop/databases/held`;
    await api(
      s,
      'POST',
      `${DB_PATH}/namespaces/shop/databases`,
      database('held', 'shop', {
        metadata: { name: 'held', namespace: 'shop', finalizers: ['demo.refwatch.dev/cleanup'] },
      }),
    );
    const first = await api(s, 'DELETE', path);
    expect(first.status).toBe(200);
    expect(first.body.metadata.deletionTimestamp).toBeDefined();
    expect((await api(s, 'GET', path)).status).toBe(200);

    const added = await api(
      s,
      'PATCH',
      path,
      { metadata: { finalizers: ['demo.refwatch.dev/cleanup', 'another'] } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(added.status).toBe(422);

    const released = await api(
      s,
      'PATCH',
      path,
      { metadata: { finalizers: null } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(released.status).toBe(200);
    expect((await api(s, 'GET', path)).status).toBe(404);
  });

  it('returns the deleted object for kinds whose registry does (pods)', async () => {
    const s = await withShop();
    await api(s, 'POST', '/api/v1/namespaces/shop/pods', { metadata: { name: 'p' }, spec: { containers: [] } });
    const res = await api(s, 'DELETE', '/api/v1/namespaces/shop/pods/p');
    expect(res.body).toMatchObject({ kind: 'Pod', metadata: { name: 'p' } });
  });

  it('applies startup manifests and reports a bad one by name', async () => {
    await expect(start({ objects: [database('orders')] })).rejects.toThrow(/Database shop\/orders.*CRD/);
    const s = await start({ objects: [DATABASE_CRD, namespace('shop'), database('orders')] });
    expect((await api(s, 'GET', `${DB_PATH}/namespaces/shop/databases/orders`)).status).toBe(200);
  });
});
