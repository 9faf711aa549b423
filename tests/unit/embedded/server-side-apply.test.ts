import { describe, expect, it } from 'vitest';
import { keepLastManager } from '@/lib/model';
import { api, DATABASE_CRD, DB_PATH, namespace, start } from './harness';

const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const CM = '/api/v1/namespaces/shop/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/shop/deployments';

type Entry = { manager: string; operation: string; apiVersion: string; fieldsV1: object; time?: string };
const owners = (o: { metadata: { managedFields?: Entry[] } }) =>
  (o.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`).sort();
const fieldsOf = (o: { metadata: { managedFields?: Entry[] } }, manager: string) =>
  o.metadata.managedFields?.find((e) => e.manager === manager)?.fieldsV1;

const configMap = (data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', ...extra },
  data,
});

describe('server-side apply on the embedded API server', () => {
  it('creates on apply (201) and records the applier as an Apply manager in FieldsV1', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const r = await api(
      s,
      'PATCH',
      `${CM}/settings?fieldManager=tool`,
      configMap({ a: '1' }, { labels: { app: 'x' } }),
      APPLY,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data).toEqual({ a: '1' });
    expect(r.body.metadata.managedFields).toEqual([
      {
        manager: 'tool',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    ]);
  });

  it('answers 422 naming fieldManager when an apply leaves it out, and refuses force on other patches', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const r = await api(s, 'PATCH', `${CM}/settings`, configMap({ a: '1' }), APPLY);
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueRequired', field: 'fieldManager' }),
    ]);
    expect(r.body.message).toContain('fieldManager: Required value: is required for apply patch');
    await api(s, 'POST', CM, configMap({ a: '1' }));
    const forced = await api(
      s,
      'PATCH',
      `${CM}/settings?force=true`,
      { data: { a: '2' } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(forced.status).toBe(422);
    expect(forced.body.details.causes).toEqual([expect.objectContaining({ field: 'force' })]);
  });

  it('tracks updates as Update managers named by fieldManager or the User-Agent, and answers a conflict as 409', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const created = await api(s, 'POST', `${CM}?fieldManager=kubectl-client-side-apply`, configMap({ key: 'one' }));
    expect(created.status).toBe(201);
    expect(fieldsOf(created.body, 'kubectl-client-side-apply')).toEqual({ 'f:data': { '.': {}, 'f:key': {} } });
    // What caches keep of these entries, and history records: the writer's name.
    expect(keepLastManager(created.body.metadata)).toEqual([{ manager: 'kubectl-client-side-apply' }]);
    const patched = await api(
      s,
      'PATCH',
      `${CM}/settings`,
      { data: { other: 'x' } },
      {
        'content-type': 'application/merge-patch+json',
        'user-agent': 'patcher/1.0 (linux)',
      },
    );
    expect(owners(patched.body)).toEqual(['kubectl-client-side-apply/Update', 'patcher/Update']);
    expect(fieldsOf(patched.body, 'patcher')).toEqual({ 'f:data': { 'f:other': {} } });

    const conflict = await api(s, 'PATCH', `${CM}/settings?fieldManager=kubectl`, configMap({ key: 'two' }), APPLY);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "kubectl-client-side-apply" using v1',
            field: '.data.key',
          },
        ],
      },
    });
    // The same value is no conflict: both own it.
    const shared = await api(s, 'PATCH', `${CM}/settings?fieldManager=kubectl`, configMap({ key: 'one' }), APPLY);
    expect(shared.status).toBe(200);
    expect(fieldsOf(shared.body, 'kubectl')).toEqual({ 'f:data': { 'f:key': {} } });
    expect(fieldsOf(shared.body, 'kubectl-client-side-apply')).toEqual({ 'f:data': { '.': {}, 'f:key': {} } });

    const forced = await api(
      s,
      'PATCH',
      `${CM}/settings?fieldManager=kubectl&force=true`,
      configMap({ key: 'two' }),
      APPLY,
    );
    expect(forced.status).toBe(200);
    expect(forced.body.data).toEqual({ key: 'two', other: 'x' });
    expect(fieldsOf(forced.body, 'kubectl-client-side-apply')).toEqual({ 'f:data': {} });
    expect(fieldsOf(forced.body, 'kubectl')).toEqual({ 'f:data': { 'f:key': {} } });
  });

  it('removes what the applier owned and leaves out now, unless another manager owns it', async () => {
    const s = await start({ objects: [namespace('shop')] });
    await api(
      s,
      'PATCH',
      `${CM}/settings?fieldManager=a`,
      configMap({ x: '1', y: '2' }, { labels: { l: 'v' } }),
      APPLY,
    );
    await api(s, 'PATCH', `${CM}/settings?fieldManager=b`, configMap({ y: '2' }), APPLY);
    const { data: _data, ...nothing } = configMap({});
    const r = await api(s, 'PATCH', `${CM}/settings?fieldManager=a`, nothing, APPLY);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ y: '2' });
    expect(r.body.metadata.labels).toBeUndefined();
    expect(owners(r.body)).toEqual(['b/Apply']);
  });

  it('merges containers by name and ports by containerPort and protocol, as the schema keys them', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const deployment = (containers: object[]) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
      },
    });
    await api(
      s,
      'PATCH',
      `${DEPLOY}/web?fieldManager=base`,
      deployment([{ name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }] }]),
      APPLY,
    );
    const r = await api(
      s,
      'PATCH',
      `${DEPLOY}/web?fieldManager=sidecar`,
      deployment([{ name: 'proxy', image: 'proxy:1' }]),
      APPLY,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['app', 'proxy']);
    const containers = (fieldsOf(r.body, 'base') as any)['f:spec']['f:template']['f:spec']['f:containers'];
    expect(containers['k:{"name":"app"}']['f:ports']).toEqual({
      'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
    });
    const conflict = await api(
      s,
      'PATCH',
      `${DEPLOY}/web?fieldManager=sidecar`,
      deployment([{ name: 'app', image: 'app:2' }]),
      APPLY,
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.details.causes).toEqual([
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "base"',
        field: '.spec.template.spec.containers[name="app"].image',
      },
    ]);
  });

  it('applies custom resources by their CRD schema, and an identical apply writes nothing', async () => {
    const s = await start({ objects: [namespace('shop'), DATABASE_CRD] });
    const db = {
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'Database',
      metadata: { name: 'orders' },
      spec: { engine: 'pg' },
    };
    const first = await api(s, 'PATCH', `${DB_PATH}/namespaces/shop/databases/orders?fieldManager=ctl`, db, APPLY);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await api(s, 'PATCH', `${DB_PATH}/namespaces/shop/databases/orders?fieldManager=ctl`, db, APPLY);
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(again.body.metadata.managedFields).toEqual(first.body.metadata.managedFields);
  });

  it('takes managedFields a write sets as the new ownership, and lets kubectl take over from its client-side apply', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const lastApplied = JSON.stringify(configMap({ key: 'one' }));
    await api(
      s,
      'POST',
      `${CM}?fieldManager=kubectl-client-side-apply`,
      configMap({ key: 'one' }, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } }),
    );
    // Another manager without kubectl's last-applied takeover conflicts; kubectl itself does not.
    const other = await api(s, 'PATCH', `${CM}/settings?fieldManager=tool`, configMap({ key: 'two' }), APPLY);
    expect(other.status).toBe(409);
    const taken = await api(s, 'PATCH', `${CM}/settings?fieldManager=kubectl`, configMap({ key: 'two' }), APPLY);
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body.data).toEqual({ key: 'two' });
    expect(JSON.parse(taken.body.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'])).toEqual(
      configMap({ key: 'two' }),
    );

    const entries = taken.body.metadata.managedFields as Entry[];
    const rewritten = entries.filter((e) => e.manager === 'kubectl');
    const patched = await api(
      s,
      'PATCH',
      `${CM}/settings?fieldManager=migrator`,
      [{ op: 'replace', path: '/metadata/managedFields', value: rewritten }],
      { 'content-type': 'application/json-patch+json' },
    );
    expect(patched.status).toBe(200);
    expect(owners(patched.body)).toEqual(['kubectl/Apply']);
  });
});
