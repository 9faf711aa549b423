import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedServer, type EmbeddedServer } from '@/lib/embedded';
import { getTestCluster } from '../setup/cluster';
import { kubeRequest, type KubeEndpoint } from '../setup/kube-http';

/*
 * Server-side apply, side by side: the same applies, updates and conflicts go
 * to the cluster under test and, on the real tier, to an embedded server
 * beside it. The objects, the managers (name and operation), the field sets
 * of the appliers and each conflict (status, field path, manager) must agree;
 * the expectations below are kube-apiserver 1.35's answers. Update managers'
 * field sets are not compared: kube-apiserver computes them against a typed
 * empty object, which holds some fields (spec: {}) that an absent one lacks.
 */

const clusterKind = inject('refwatchCluster').kind;
const APPLY = 'application/apply-patch+yaml';
const NS = `ssa-${Date.now().toString(36)}`;

type Obj = Record<string, any>;
interface Answer {
  status: number;
  body: Obj;
}

const targets: { name: string; endpoint: KubeEndpoint }[] = [];
let embedded: EmbeddedServer | undefined;

beforeAll(async () => {
  const cluster = await getTestCluster();
  const ca = cluster.kubeconfig.clusters[0]!.cluster['certificate-authority-data'];
  targets.push({
    name: clusterKind,
    endpoint: { url: cluster.url, token: cluster.token, ...(ca ? { ca: Buffer.from(ca, 'base64').toString() } : {}) },
  });
  if (clusterKind === 'real') {
    embedded = await startEmbeddedServer({ token: 'ssa' });
    targets.push({ name: 'embedded beside real', endpoint: { url: embedded.url, token: 'ssa' } });
  }
  for (const t of targets) {
    const ns = await kubeRequest(t.endpoint, 'POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    expect(ns.status, `${t.name}: ${ns.body}`).toBe(201);
  }
});
afterAll(async () => {
  for (const t of targets) await kubeRequest(t.endpoint, 'DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await embedded?.stop();
});

/** onEach sends one request to every target and gives the projections of the answers, which must agree. */
async function onEach(
  method: string,
  path: string,
  body: unknown,
  contentType: string,
  project: (a: Answer) => unknown,
): Promise<any> {
  const out: unknown[] = [];
  for (const t of targets) {
    const r = await kubeRequest(t.endpoint, method, path, { body, contentType });
    out.push(project({ status: r.status, body: JSON.parse(r.body) as Obj }));
  }
  for (const o of out.slice(1)) expect(o, 'the embedded server answers as kube-apiserver').toEqual(out[0]);
  return out[0];
}

type Entry = { manager: string; operation: string; fieldsV1: object };
/** managers are the managedFields entries by name and operation; an applier's field set with it. */
const managers = (o: Obj) =>
  ((o.metadata?.managedFields ?? []) as Entry[])
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      ...(e.operation === 'Apply' ? { fields: e.fieldsV1 } : {}),
    }))
    .sort((a, b) => (`${a.manager} ${a.operation}` < `${b.manager} ${b.operation}` ? -1 : 1));
const failure = (a: Answer) => ({
  status: a.status,
  reason: a.body.reason,
  message: a.body.message,
  causes: a.body.details?.causes,
});
const configMap = (a: Answer) =>
  a.status >= 300
    ? failure(a)
    : { status: a.status, data: a.body.data, labels: a.body.metadata.labels, managers: managers(a.body) };

const CM = `/api/v1/namespaces/${NS}/configmaps`;
const settings = (data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', ...(labels ? { labels } : {}) },
  data,
});

describe(`server-side apply (${clusterKind} cluster)`, () => {
  it('conflicts with a client-side applier, takes its field by force, and removes what it stopped applying', async () => {
    const created = await onEach(
      'POST',
      `${CM}?fieldManager=kubectl-client-side-apply`,
      settings({ key: 'one' }),
      'application/json',
      configMap,
    );
    expect(created).toEqual({
      status: 201,
      data: { key: 'one' },
      labels: undefined,
      managers: [{ manager: 'kubectl-client-side-apply', operation: 'Update' }],
    });

    const missingManager = await onEach('PATCH', `${CM}/settings`, settings({ key: 'two' }), APPLY, (a) => ({
      status: a.status,
      fields: (a.body.details?.causes as { field: string }[] | undefined)?.map((c) => c.field),
    }));
    expect(missingManager).toEqual({ status: 422, fields: ['fieldManager'] });

    const conflict = await onEach(
      'PATCH',
      `${CM}/settings?fieldManager=kubectl`,
      settings({ key: 'two', extra: 'e' }, { app: 'web' }),
      APPLY,
      configMap,
    );
    expect(conflict).toEqual({
      status: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key',
      causes: [
        {
          reason: 'FieldManagerConflict',
          message: 'conflict with "kubectl-client-side-apply" using v1',
          field: '.data.key',
        },
      ],
    });

    const forced = await onEach(
      'PATCH',
      `${CM}/settings?fieldManager=kubectl&force=true`,
      settings({ key: 'two', extra: 'e' }, { app: 'web' }),
      APPLY,
      configMap,
    );
    expect(forced).toEqual({
      status: 200,
      data: { key: 'two', extra: 'e' },
      labels: { app: 'web' },
      managers: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          fields: { 'f:data': { 'f:extra': {}, 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
        },
        { manager: 'kubectl-client-side-apply', operation: 'Update' },
      ],
    });

    const pruned = await onEach(
      'PATCH',
      `${CM}/settings?fieldManager=kubectl`,
      settings({ key: 'two' }),
      APPLY,
      configMap,
    );
    expect(pruned).toMatchObject({ status: 200, data: { key: 'two' }, labels: undefined });

    const updated = await onEach(
      'PATCH',
      `${CM}/settings?fieldManager=editor`,
      { data: { key: 'three' } },
      'application/merge-patch+json',
      configMap,
    );
    expect(updated).toMatchObject({ status: 200, data: { key: 'three' } });
    expect(updated.managers.map((m: Entry) => `${m.manager}/${m.operation}`)).toEqual(
      expect.arrayContaining(['editor/Update']),
    );
  });

  it('merges containers by name and ports by their keys, and names a container field in a conflict', async () => {
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/web`;
    const deployment = (containers: Obj[]) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
      },
    });
    const project = (a: Answer) =>
      a.status >= 300
        ? failure(a)
        : {
            status: a.status,
            containers: (a.body.spec.template.spec.containers as Obj[]).map((c) => ({
              name: c.name,
              image: c.image,
              ports: c.ports?.map((p: Obj) => `${p.containerPort}/${p.protocol}`),
              env: c.env?.map((e: Obj) => `${e.name}=${e.value}`),
            })),
            managers: managers(a.body),
          };
    const base = await onEach(
      'PATCH',
      `${path}?fieldManager=base`,
      deployment([
        {
          name: 'app',
          image: 'app:1',
          ports: [
            { containerPort: 80, protocol: 'TCP' },
            { containerPort: 80, protocol: 'UDP' },
          ],
          env: [{ name: 'A', value: '1' }],
        },
      ]),
      APPLY,
      project,
    );
    expect(base.status).toBe(201);

    const sidecar = await onEach(
      'PATCH',
      `${path}?fieldManager=sidecar`,
      deployment([{ name: 'proxy', image: 'proxy:1', env: [{ name: 'B', value: '2' }] }]),
      APPLY,
      project,
    );
    expect(sidecar.containers.map((c: Obj) => c.name)).toEqual(['app', 'proxy']);
    expect(sidecar.containers[0]).toMatchObject({ image: 'app:1', ports: ['80/TCP', '80/UDP'], env: ['A=1'] });

    const conflict = await onEach(
      'PATCH',
      `${path}?fieldManager=sidecar`,
      deployment([{ name: 'app', image: 'app:2' }]),
      APPLY,
      project,
    );
    expect(conflict).toMatchObject({
      status: 409,
      causes: [
        {
          reason: 'FieldManagerConflict',
          message: 'conflict with "base"',
          field: '.spec.template.spec.containers[name="app"].image',
        },
      ],
    });

    const shrunk = await onEach(
      'PATCH',
      `${path}?fieldManager=base`,
      deployment([{ name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }] }]),
      APPLY,
      project,
    );
    expect(shrunk.containers[0]).toMatchObject({ ports: ['80/TCP'] });
    expect(shrunk.containers[0].env).toBeUndefined();
  });

  it('merges a custom resource by its CRD schema: a list map by name, an atomic list replaced whole', async () => {
    const group = `ssa${Date.now().toString(36)}.refwatch.dev`;
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      size: { type: 'integer' },
                      tags: { type: 'array', items: { type: 'string' } },
                      parts: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['name'],
                        items: {
                          type: 'object',
                          required: ['name'],
                          properties: { name: { type: 'string' }, count: { type: 'integer' } },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    for (const t of targets) {
      const r = await kubeRequest(t.endpoint, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: crd,
      });
      expect(r.status, `${t.name}: ${r.body}`).toBe(201);
    }
    const path = `/apis/${group}/v1/namespaces/${NS}/widgets/w`;
    // Established means served: wait until the resource answers on every target.
    await expect
      .poll(
        async () => {
          const codes = [];
          for (const t of targets) codes.push((await kubeRequest(t.endpoint, 'GET', path)).status);
          return codes;
        },
        { timeout: 30_000 },
      )
      .toEqual(targets.map(() => 404));
    try {
      const widget = (spec: Obj) => ({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec });
      const project = (a: Answer) =>
        a.status >= 300 ? failure(a) : { status: a.status, spec: a.body.spec, managers: managers(a.body) };

      const first = await onEach(
        'PATCH',
        `${path}?fieldManager=a`,
        widget({ size: 1, tags: ['x', 'y'], parts: [{ name: 'p', count: 1 }] }),
        APPLY,
        project,
      );
      expect(first).toMatchObject({ status: 201, managers: [{ manager: 'a', operation: 'Apply' }] });
      expect(first.managers[0].fields).toEqual({
        'f:spec': {
          'f:parts': { 'k:{"name":"p"}': { '.': {}, 'f:count': {}, 'f:name': {} } },
          'f:size': {},
          'f:tags': {},
        },
      });

      const second = await onEach(
        'PATCH',
        `${path}?fieldManager=b`,
        widget({ tags: ['z'], parts: [{ name: 'q', count: 2 }] }),
        APPLY,
        project,
      );
      expect(second).toMatchObject({ status: 409, causes: [{ field: '.spec.tags', message: 'conflict with "a"' }] });

      const third = await onEach(
        'PATCH',
        `${path}?fieldManager=b`,
        widget({ parts: [{ name: 'q', count: 2 }] }),
        APPLY,
        project,
      );
      expect(third).toMatchObject({
        status: 200,
        spec: {
          size: 1,
          tags: ['x', 'y'],
          parts: [
            { name: 'p', count: 1 },
            { name: 'q', count: 2 },
          ],
        },
      });

      const dropped = await onEach('PATCH', `${path}?fieldManager=a`, widget({ size: 2 }), APPLY, project);
      expect(dropped).toMatchObject({ status: 200, spec: { size: 2, parts: [{ name: 'q', count: 2 }] } });
      expect(dropped.spec.tags).toBeUndefined();
    } finally {
      for (const t of targets)
        await kubeRequest(
          t.endpoint,
          'DELETE',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`,
        );
    }
  });
});
