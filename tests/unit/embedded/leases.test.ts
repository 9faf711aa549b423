import { describe, expect, it } from 'vitest';
import { api, namespace, start } from './harness';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/shop/leases';
const spec = {
  holderIdentity: 'a',
  leaseDurationSeconds: 15,
  acquireTime: '2026-11-23T13:00:00.123456Z',
  renewTime: '2026-11-23T13:00:00.123456Z',
  leaseTransitions: 0,
};

describe('embedded API server: coordination.k8s.io/v1 leases', () => {
  it('serves leases in discovery, as kube-apiserver does', async () => {
    const s = await start();
    const groups = (await api(s, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).toContain('coordination.k8s.io');
    expect(groups.indexOf('coordination.k8s.io')).toBeGreaterThan(groups.indexOf('apiextensions.k8s.io'));
    const resources = (await api(s, 'GET', '/apis/coordination.k8s.io/v1')).body;
    expect(resources).toMatchObject({ kind: 'APIResourceList', groupVersion: 'coordination.k8s.io/v1' });
    expect(resources.resources).toContainEqual({
      name: 'leases',
      singularName: 'lease',
      namespaced: true,
      kind: 'Lease',
      verbs: expect.arrayContaining(['create', 'get', 'update', 'watch']),
    });
  });

  it('keeps MicroTime as written, and refuses a stale update and a second create with 409', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const created = await api(s, 'POST', LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'ctl' },
      spec,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'ctl', namespace: 'shop' },
      spec,
    });
    expect((await api(s, 'POST', LEASES, { metadata: { name: 'ctl' }, spec })).body).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
    });

    const renewed = await api(s, 'PUT', `${LEASES}/ctl`, {
      ...created.body,
      spec: { ...spec, renewTime: '2026-11-23T13:00:02.000001Z' },
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.spec.renewTime).toBe('2026-11-23T13:00:02.000001Z');
    const stale = await api(s, 'PUT', `${LEASES}/ctl`, { ...created.body, spec: { ...spec, holderIdentity: 'b' } });
    expect(stale.body).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on leases.coordination.k8s.io "ctl": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect((await api(s, 'GET', `${LEASES}/ctl`)).body.spec.holderIdentity).toBe('a');
  });
});
