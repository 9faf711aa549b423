import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeClient } from '@/lib/kube';
import { getObjectDetails } from '@/server/api';
import { getObject, listEvents } from '@/server/details/read';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { callHandler, type Answer } from '../unit/server/call';
import { getTestCluster } from '../setup/cluster';

/*
 * GET /api/v1/objects on a live cluster: the server's runtime observes the
 * cluster with the core rule pack, and a Pod refers to a Secret, a missing
 * Secret and a PersistentVolumeClaim that never binds.
 */

const clusterKind = inject('refwatchCluster').kind;
const PASSWORD = 'S3cr3t-value-xyz';
let rt: Runtime;
let client: KubeClient;
let dir: string;
let ns: string;

const details = (key: string): Promise<Answer> =>
  callHandler(rt, getObjectDetails, `/api/v1/objects?key=${encodeURIComponent(key)}`);

beforeAll(async () => {
  const cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-details-'));
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  fs.writeFileSync(kubeconfig, JSON.stringify(cluster.kubeconfig), { mode: 0o600 });
  rt = await startRuntime(
    parseConfig({
      REFWATCH_CLUSTER: 'kubeconfig',
      KUBECONFIG: kubeconfig,
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_GRACE: '1s',
    }),
  );
  ns = await cluster.newNamespace('details');
  const post = (resource: string, body: object) =>
    client.request('POST', `/api/v1/namespaces/${ns}/${resource}`, { body }) as Promise<{ metadata: { uid: string } }>;
  const applied = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db-password', namespace: ns },
    stringData: { password: PASSWORD },
  });
  await post('secrets', {
    metadata: { name: 'db-password', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied } },
    stringData: { password: PASSWORD },
  });
  const owner = await post('configmaps', { metadata: { name: 'owner' }, data: { role: 'owner' } });
  await post('configmaps', {
    metadata: {
      name: 'settings',
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true },
      ],
    },
    data: { mode: 'fast' },
  });
  await post('persistentvolumeclaims', {
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const pod = await post('pods', {
    metadata: { name: 'web' },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.k8s.io/pause:3.10',
          env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db-password', key: 'password' } } }],
          envFrom: [{ configMapRef: { name: 'settings' } }],
        },
      ],
      volumes: [
        { name: 'api', secret: { secretName: 'api-key' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      ],
    },
  });
  const now = new Date();
  await post('events', {
    metadata: { name: 'web.failedmount' },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: ns, uid: pod.metadata.uid },
    reason: 'FailedMount',
    message: 'MountVolume.SetUp failed for volume "api" : secret "api-key" not found',
    type: 'Warning',
    count: 3,
    firstTimestamp: new Date(now.getTime() - 60_000).toISOString(),
    lastTimestamp: now.toISOString(),
    source: { component: 'kubelet' },
  });
  // An Event of another object with the same name must not show.
  await post('events', {
    metadata: { name: 'other.scheduled' },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'web', namespace: ns },
    reason: 'Other',
    message: 'not about the Pod',
    type: 'Normal',
    firstTimestamp: now.toISOString(),
    lastTimestamp: now.toISOString(),
    source: { component: 'test' },
  });
}, 120_000);

afterAll(async () => {
  await rt?.dispose();
  client?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe(`GET /api/v1/objects (${clusterKind} cluster)`, () => {
  it('shows a stuck Pod: its YAML, its Events, its state history, and the kubectl command that fixes it', async () => {
    const key = `Pod/${ns}/web`;
    await expect
      .poll(async () => (await details(key)).body?.fixes?.map((f: { referent: string }) => f.referent), {
        timeout: 30_000,
      })
      .toContain(`Secret/${ns}/api-key`);
    const a = await details(key);
    expect(a.status).toBe(200);
    expect(a.body.key).toBe(key);
    expect(a.body.yaml).toContain('kind: Pod');
    expect(a.body.yaml).toContain('secretName: api-key');
    expect(a.body.yaml).not.toContain('managedFields');
    expect(a.body.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'FailedMount',
        count: 3,
        source: 'kubelet',
        message: expect.stringContaining('secret "api-key" not found'),
      }),
    ]);
    expect(a.body.eventsProblem).toBeUndefined();
    const missing = a.body.fixes.find((f: { referent: string }) => f.referent === `Secret/${ns}/api-key`);
    expect(missing).toMatchObject({
      state: 'NotFound',
      fieldPath: 'spec.volumes[0].secret.secretName',
      commands: [`kubectl -n ${ns} create secret generic api-key --from-literal=KEY=VALUE`],
    });
    expect(missing.fix).toContain(`create Secret/${ns}/api-key`);
    const pvc = a.body.fixes.find((f: { referent: string }) => f.referent === `PersistentVolumeClaim/${ns}/data`);
    expect(pvc).toMatchObject({
      state: 'NotReady',
      commands: [
        `kubectl -n ${ns} describe persistentvolumeclaims data`,
        `kubectl -n ${ns} get persistentvolumeclaims data -o yaml`,
      ],
    });
    expect(a.body.history[0]).toMatchObject({ role: 'referrer', state: expect.stringMatching(/^(Waiting|NotFound)$/) });
  });

  it('reads an object refwatch watches from its shared cache', async () => {
    const key = `PersistentVolumeClaim/${ns}/data`;
    await expect.poll(async () => (await details(key)).body?.source, { timeout: 30_000 }).toBe('cache');
    const a = await details(key);
    expect(a.body.yaml).toContain('storage: 1Gi');
    expect(a.body.history[0]).toMatchObject({ role: 'referent', state: 'NotReady' });
    expect(a.body.fixes).toEqual([expect.objectContaining({ referent: key, state: 'NotReady' })]);
  });

  it('never shows a Secret’s values: each key with its size, and the last-applied annotation hidden', async () => {
    const a = await details(`Secret/${ns}/db-password`);
    expect(a.status).toBe(200);
    expect(a.body.source).toBe('cluster');
    expect(a.text).not.toContain(PASSWORD);
    expect(a.text).not.toContain(Buffer.from(PASSWORD).toString('base64'));
    expect(a.body.yaml).toContain('password: hidden, 16 bytes');
    expect(a.body.yaml).toContain('kubectl.kubernetes.io/last-applied-configuration: hidden');
  });

  it('lists owner references with the owner’s key', async () => {
    const a = await details(`ConfigMap/${ns}/settings`);
    expect(a.body.ownerReferences).toEqual([
      { key: `ConfigMap/${ns}/owner`, apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', controller: true },
    ]);
  });

  it('shows a missing referent with the command that creates it', async () => {
    const a = await details(`Secret/${ns}/api-key`);
    expect(a.status).toBe(200);
    expect(a.body.source).toBe('none');
    expect(a.body.yaml).toBeUndefined();
    expect(a.body.fixes[0]).toMatchObject({
      state: 'NotFound',
      commands: [`kubectl -n ${ns} create secret generic api-key --from-literal=KEY=VALUE`],
    });
  });

  it('answers 400 naming key for a bad key, and 404 for an object neither the cluster nor refwatch knows', async () => {
    const bad = await details('Pod/web');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      field: 'key',
      message: expect.stringContaining('Kind.group/namespace/name'),
    });
    const missingParam = await callHandler(rt, getObjectDetails, '/api/v1/objects');
    expect(missingParam.status).toBe(400);
    expect(missingParam.body.error.message).toMatch(/key/);
    const unknown = await details(`ConfigMap/${ns}/nobody`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NotFound', field: 'key' });
  });

  it.runIf(clusterKind === 'real')(
    'says which RBAC rule is missing when reading the object or its Events is forbidden',
    async () => {
      const cluster = await getTestCluster();
      const restricted = KubeClient.fromKubeconfig(cluster.restrictedKubeconfig!, { source: 'restricted user' });
      try {
        const ref = { group: '', kind: 'Pod', namespace: ns, name: 'web' };
        const events = await listEvents(restricted, ref);
        expect(events.events).toEqual([]);
        expect(events.problem).toMatchObject({
          reason: 'Forbidden',
          rule: 'apiGroups: [""], resources: ["events"], verbs: ["list"]',
        });
        expect(events.problem!.message).toContain(`a Role in namespace ${ns} or a ClusterRole`);
        const read = await getObject(restricted, ref);
        expect(read).toMatchObject({
          found: false,
          problem: { reason: 'Forbidden', rule: 'apiGroups: [""], resources: ["pods"], verbs: ["get"]' },
        });
      } finally {
        restricted.close();
      }
    },
  );
});
