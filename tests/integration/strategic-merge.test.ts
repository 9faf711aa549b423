import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedServer, type EmbeddedServer } from '@/lib/embedded';
import { getTestCluster } from '../setup/cluster';
import { kubeRequest, type KubeEndpoint } from '../setup/kube-http';

/*
 * Strategic merge patches, as kubectl patch and client-side kubectl apply send
 * them, to a Deployment, a Pod and a ConfigMap. Each patch goes to the cluster
 * under test and, on the real tier, to an embedded server beside it; the
 * fields patched must come out as the expectations below say, which are
 * kube-apiserver 1.35's answers, on both. Only patched fields are compared:
 * the real server also defaults fields (imagePullPolicy, a volume's
 * defaultMode) that the embedded one keeps as sent.
 */

const clusterKind = inject('refwatchCluster').kind;
const SMP = 'application/strategic-merge-patch+json';
const NS = `smp-${Date.now().toString(36)}`;

type Obj = Record<string, any>;

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
    embedded = await startEmbeddedServer({ token: 'smp' });
    targets.push({ name: 'embedded beside real', endpoint: { url: embedded.url, token: 'smp' } });
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

/** Creates the object on every target; then `patch` sends a patch to each and gives the projections, which must agree. */
async function onEach(path: string, created: Obj, project: (o: Obj) => unknown) {
  for (const t of targets) {
    const r = await kubeRequest(t.endpoint, 'POST', path, { body: created });
    expect(r.status, `${t.name}: ${r.body}`).toBe(201);
  }
  const name = (created.metadata as { name: string }).name;
  return async (patch: unknown): Promise<unknown> => {
    const out: unknown[] = [];
    for (const t of targets) {
      const r = await kubeRequest(t.endpoint, 'PATCH', `${path}/${name}`, { body: patch, contentType: SMP });
      expect(r.status, `${t.name}: ${r.body}`).toBe(200);
      out.push(project(JSON.parse(r.body) as Obj));
    }
    for (const o of out.slice(1)) expect(o, 'the embedded server answers as kube-apiserver').toEqual(out[0]);
    return out[0];
  };
}

const container = (c: Obj) => ({
  name: c.name,
  image: c.image,
  ...(c.env ? { env: (c.env as Obj[]).map((e) => `${e.name}=${e.value}`) } : {}),
  ...(c.ports ? { ports: (c.ports as Obj[]).map((p) => p.containerPort) } : {}),
  ...(c.volumeMounts ? { volumeMounts: (c.volumeMounts as Obj[]).map((m) => `${m.name}:${m.mountPath}`) } : {}),
});
const volume = (v: Obj) => `${v.name}:${Object.keys(v).filter((k) => k !== 'name')}`;

describe('strategic merge patch on built-in kinds', () => {
  it('merges a Deployment template by merge keys, with the directives kubectl sends', async () => {
    const patch = await onEach(
      `/apis/apps/v1/namespaces/${NS}/deployments`,
      {
        metadata: { name: 'web', finalizers: ['example.com/a'] },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'app:1',
                  env: [
                    { name: 'A', value: '1' },
                    { name: 'B', value: '2' },
                  ],
                  ports: [{ containerPort: 8080, protocol: 'TCP' }],
                  volumeMounts: [{ name: 'data', mountPath: '/data' }],
                },
                { name: 'sidecar', image: 'sidecar:1' },
              ],
              volumes: [
                { name: 'data', emptyDir: {} },
                { name: 'cfg', configMap: { name: 'cfg' } },
              ],
              imagePullSecrets: [{ name: 'reg1' }],
            },
          },
        },
      },
      (d) => ({
        finalizers: d.metadata.finalizers,
        strategy: d.spec.strategy,
        containers: (d.spec.template.spec.containers as Obj[]).map(container),
        volumes: ((d.spec.template.spec.volumes ?? []) as Obj[]).map(volume),
        imagePullSecrets: ((d.spec.template.spec.imagePullSecrets ?? []) as Obj[]).map((s) => s.name),
      }),
    );

    // kubectl patch: one env var changed and one added, a port, a container, a volume and a pull secret added.
    expect(
      await patch({
        metadata: { finalizers: ['example.com/b'] },
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'app',
                  env: [
                    { name: 'B', value: '3' },
                    { name: 'C', value: '4' },
                  ],
                  ports: [{ containerPort: 9090, protocol: 'TCP' }],
                },
                { name: 'extra', image: 'extra:1' },
              ],
              volumes: [{ name: 'logs', emptyDir: {} }],
              imagePullSecrets: [{ name: 'reg2' }],
            },
          },
        },
      }),
    ).toEqual({
      // A new item of a merged list comes before the server's items it did not follow.
      finalizers: ['example.com/b', 'example.com/a'],
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: ['A=1', 'B=3', 'C=4'],
          ports: [9090, 8080],
          volumeMounts: ['data:/data'],
        },
        { name: 'extra', image: 'extra:1' },
        { name: 'sidecar', image: 'sidecar:1' },
      ],
      volumes: ['logs:emptyDir', 'data:emptyDir', 'cfg:configMap'],
      imagePullSecrets: ['reg2', 'reg1'],
    });

    // $patch: delete on list elements, $deleteFromPrimitiveList, and $retainKeys where a volume and the strategy change kind.
    expect(
      await patch({
        metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] },
        spec: {
          strategy: { $retainKeys: ['type'], type: 'Recreate' },
          template: {
            spec: {
              containers: [
                { name: 'app', env: [{ name: 'A', $patch: 'delete' }] },
                { name: 'extra', $patch: 'delete' },
              ],
              volumes: [{ name: 'cfg', $retainKeys: ['name', 'secret'], secret: { secretName: 'cfg' } }],
            },
          },
        },
      }),
    ).toEqual({
      finalizers: ['example.com/b'],
      strategy: { type: 'Recreate' },
      containers: [
        { name: 'app', image: 'app:1', env: ['B=3', 'C=4'], ports: [9090, 8080], volumeMounts: ['data:/data'] },
        { name: 'sidecar', image: 'sidecar:1' },
      ],
      volumes: ['logs:emptyDir', 'data:emptyDir', 'cfg:secret'],
      imagePullSecrets: ['reg2', 'reg1'],
    });

    // Client-side kubectl apply: $setElementOrder puts the lists in the manifest's order.
    expect(
      await patch({
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
              containers: [{ name: 'app', image: 'app:2' }],
              '$setElementOrder/volumes': [{ name: 'data' }, { name: 'cfg' }, { name: 'logs' }],
            },
          },
        },
      }),
    ).toMatchObject({
      containers: [
        { name: 'sidecar', image: 'sidecar:1' },
        { name: 'app', image: 'app:2' },
      ],
      volumes: ['data:emptyDir', 'cfg:secret', 'logs:emptyDir'],
    });

    // $patch: replace in a list, and the finalizers emptied so the namespace can go.
    expect(
      await patch({
        metadata: { finalizers: null },
        spec: { template: { spec: { volumes: [{ $patch: 'replace' }, { name: 'data', emptyDir: {} }] } } },
      }),
    ).toMatchObject({ finalizers: undefined, volumes: ['data:emptyDir'] });
  });

  it('merges a Pod’s containers by name when only an image changes', async () => {
    const patch = await onEach(
      `/api/v1/namespaces/${NS}/pods`,
      {
        metadata: { name: 'worker', labels: { a: '1' } },
        spec: {
          containers: [
            { name: 'main', image: 'main:1' },
            { name: 'helper', image: 'helper:1' },
          ],
        },
      },
      (p) => ({ labels: p.metadata.labels, containers: (p.spec.containers as Obj[]).map(container) }),
    );
    expect(
      await patch({
        metadata: { labels: { a: null, b: '2' } },
        spec: { containers: [{ name: 'helper', image: 'helper:2' }] },
      }),
    ).toEqual({
      labels: { b: '2' },
      containers: [
        { name: 'main', image: 'main:1' },
        { name: 'helper', image: 'helper:2' },
      ],
    });
  });

  it('merges a ConfigMap’s data, and replaces it whole on $patch: replace', async () => {
    const patch = await onEach(
      `/api/v1/namespaces/${NS}/configmaps`,
      { metadata: { name: 'settings' }, data: { a: '1', b: '2' } },
      (c) => c.data,
    );
    expect(await patch({ data: { b: null, c: '3' } })).toEqual({ a: '1', c: '3' });
    expect(await patch({ data: { $patch: 'replace', z: '26' } })).toEqual({ z: '26' });
  });
});
