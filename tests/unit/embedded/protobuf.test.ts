import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { encodeProtobuf, PROTOBUF } from '@/lib/embedded/protobuf';
import { api, start } from './harness';

async function postProtobuf(url: string, body: Buffer): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': PROTOBUF, accept: `${PROTOBUF},application/json` },
    body: new Uint8Array(body),
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: await res.json() };
}

describe('protobuf request bodies (kubectl typed clients)', () => {
  it('creates a Secret, ConfigMap, Namespace and ServiceAccount from k8s\\0 + runtime.Unknown, answering JSON', async () => {
    const s = await start({ objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }] });
    const secret = await postProtobuf(
      `${s.url}/api/v1/namespaces/shop/secrets`,
      encodeProtobuf({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db', namespace: 'shop', labels: { app: 'web' }, generateName: '' },
        data: { password: Buffer.from('hunter2').toString('base64') },
      }),
    );
    expect(secret.status).toBe(201);
    expect(secret.body.metadata).toMatchObject({ name: 'db', namespace: 'shop', labels: { app: 'web' } });
    expect(secret.body.metadata.generateName).toBeUndefined();
    expect(Buffer.from(secret.body.data.password, 'base64').toString()).toBe('hunter2');

    const cm = await postProtobuf(
      `${s.url}/api/v1/namespaces/shop/configmaps`,
      encodeProtobuf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { K: 'V' } }),
    );
    expect(cm.status).toBe(201);
    expect(cm.body.data).toEqual({ K: 'V' });

    const ns = await postProtobuf(
      `${s.url}/api/v1/namespaces`,
      encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }),
    );
    expect(ns.status).toBe(201);
    expect(ns.body.status.phase).toBe('Active');

    const sa = await postProtobuf(
      `${s.url}/api/v1/namespaces/shop/serviceaccounts`,
      encodeProtobuf({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } }),
    );
    expect(sa.status).toBe(201);
    expect((await api(s, 'GET', '/api/v1/namespaces/shop/serviceaccounts/robot')).body.metadata.name).toBe('robot');
  });

  it('answers 415 for a kind it has no message for (clients fall back to JSON), and 400 for a body without the envelope', async () => {
    const s = await start();
    const unknown = protobuf
      .parse(
        'syntax = "proto2"; message T { optional string apiVersion = 1; optional string kind = 2; } message U { optional T typeMeta = 1; optional bytes raw = 2; }',
      )
      .root.lookupType('U');
    const pod = Buffer.concat([
      Buffer.from('k8s\0', 'latin1'),
      unknown
        .encode(unknown.fromObject({ typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw: Buffer.alloc(0) }))
        .finish(),
    ]);
    const refused = await postProtobuf(`${s.url}/api/v1/namespaces/default/pods`, pod);
    expect(refused.status).toBe(415);
    expect(refused.body.message).toMatch(/accepted media types include: application\/json, application\/yaml/);
    expect(refused.body.details.kind).toBe('application/vnd.kubernetes.protobuf (v1, Kind=Pod)');
    const noEnvelope = await postProtobuf(`${s.url}/api/v1/namespaces/default/configmaps`, Buffer.from('{}'));
    expect(noEnvelope.status).toBe(400);
    expect(noEnvelope.body.message).toMatch(/k8s\\x00/);
  });
});

describe('authorization.k8s.io self reviews (kubectl auth can-i)', () => {
  it('is discovered, and allows every SelfSubjectAccessReview, in JSON and in protobuf', async () => {
    const s = await start();
    const groups = (await api(s, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).toContain('authorization.k8s.io');
    const resources = (await api(s, 'GET', '/apis/authorization.k8s.io/v1')).body.resources;
    expect(resources.map((r: { name: string; verbs: string[] }) => [r.name, r.verbs])).toEqual([
      ['selfsubjectaccessreviews', ['create']],
      ['selfsubjectrulesreviews', ['create']],
    ]);
    const review = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'shop', verb: 'watch', resource: 'secrets' } },
    };
    const json = await api(s, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review);
    expect(json.status).toBe(201);
    expect(json.body.status.allowed).toBe(true);
    expect(json.body.spec).toEqual(review.spec);
    const proto = await postProtobuf(
      `${s.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`,
      encodeProtobuf(review),
    );
    expect(proto.status).toBe(201);
    expect(proto.body.spec.resourceAttributes).toEqual({ namespace: 'shop', verb: 'watch', resource: 'secrets' });
    expect(proto.body.status.allowed).toBe(true);
  });

  it('lists every rule in a SelfSubjectRulesReview, and refuses other methods and kinds', async () => {
    const s = await start();
    const rules = await api(s, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'shop' },
    });
    expect(rules.status).toBe(201);
    expect(rules.body.status.resourceRules).toEqual([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
    expect((await api(s, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).status).toBe(405);
    expect((await api(s, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {})).status).toBe(404);
    const wrong = await api(s, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      kind: 'SelfSubjectRulesReview',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/not a SelfSubjectAccessReview/);
  });
});

describe('server-side apply', () => {
  it('takes a YAML body and creates an object that does not exist yet', async () => {
    const s = await start();
    const res = await api(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/new?fieldManager=kubectl',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\ndata:\n  key: value\n',
      { 'content-type': 'application/apply-patch+yaml' },
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ key: 'value' });
    expect(res.body.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'kubectl', operation: 'Apply' }),
    ]);
  });
});
