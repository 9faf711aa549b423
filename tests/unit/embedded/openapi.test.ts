import https from 'node:https';
import { describe, expect, it } from 'vitest';
import { demoManifests } from '@/server/cluster';
import { api, start } from './harness';

describe('embedded API server: OpenAPI v3 and TLS', () => {
  it('indexes every served group version and follows CRDs', async () => {
    const s = await start({ objects: demoManifests() });
    const index = await api(s, 'GET', '/openapi/v3');
    expect(Object.keys(index.body.paths)).toEqual(
      expect.arrayContaining([
        'api/v1',
        'apis/apps/v1',
        'apis/demo.refwatch.dev/v1alpha1',
        'apis/apiextensions.k8s.io/v1',
      ]),
    );
    const url: string = index.body.paths['apis/demo.refwatch.dev/v1alpha1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/demo\.refwatch\.dev\/v1alpha1\?hash=[0-9A-F]+$/);
    expect((await api(s, 'GET', '/openapi/v3/apis/nowhere.example.com/v1')).status).toBe(404);

    await api(s, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.demo.refwatch.dev');
    const after = await api(s, 'GET', '/openapi/v3');
    expect(after.body.paths['apis/demo.refwatch.dev/v1alpha1'].serverRelativeURL).not.toBe(url);
  });

  it('gives each kind its PATCH operation with fieldValidation, and a CRD its own schema', async () => {
    const s = await start({ objects: demoManifests() });
    const doc = (await api(s, 'GET', '/openapi/v3/apis/demo.refwatch.dev/v1alpha1')).body;
    const patch = doc.paths['/apis/demo.refwatch.dev/v1alpha1/namespaces/{namespace}/databases/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      kind: 'Database',
    });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
    const schema = doc.components.schemas['dev.refwatch.demo.v1alpha1.Database'];
    expect(schema.properties.spec.properties.readyAfterMs).toMatchObject({ type: 'integer', minimum: 0 });
    expect(schema.properties).toHaveProperty('metadata');

    const core = (await api(s, 'GET', '/openapi/v3/api/v1')).body;
    expect(core.paths['/api/v1/namespaces/{name}'].patch['x-kubernetes-group-version-kind']).toEqual({
      group: '',
      version: 'v1',
      kind: 'Namespace',
    });
    // Built-in kinds carry kube-apiserver's structure (scripts/openapi-builtins.ts), without descriptions.
    const schemas = core.components.schemas;
    expect(schemas['io.k8s.api.core.v1.Pod'].properties.spec.allOf).toEqual([
      { $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' },
    ]);
    expect(schemas['io.k8s.api.core.v1.PodSpec'].required).toEqual(['containers']);
    expect(schemas['io.k8s.api.core.v1.PodSpec'].properties.volumes).toMatchObject({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    expect(schemas['io.k8s.api.core.v1.Volume']).toBeDefined();
    const described = JSON.stringify(schemas).match(/"description":"/g);
    expect(described).toBeNull();
    // Every reference resolves within the document.
    for (const ref of JSON.stringify(schemas).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas, ref[1]).toHaveProperty([ref[1]!]);
  });

  it('serves HTTPS with a certificate its kubeconfig trusts', async () => {
    const s = await start({ tls: true, token: 't'.repeat(32) });
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const cluster = (s.kubeconfig() as { clusters: { cluster: Record<string, string> }[] }).clusters[0]!.cluster;
    expect(cluster['insecure-skip-tls-verify']).toBeUndefined();
    const ca = Buffer.from(cluster['certificate-authority-data']!, 'base64').toString();
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${s.url}/api/v1/namespaces`, { ca, headers: { authorization: `Bearer ${'t'.repeat(32)}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
  });
});
