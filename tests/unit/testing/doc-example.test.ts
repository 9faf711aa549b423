import { afterAll, beforeAll, expect, it } from 'vitest';
import { Manager } from 'refwatch/engine';
import { SharedInformerPool } from 'refwatch/kube';
import { startTestCluster, type TestCluster } from 'refwatch/testing';

let cluster: TestCluster;
let manager: Manager;

beforeAll(async () => {
  // A cluster of this file's own: the embedded API server, or kube-apiserver with REFWATCH_TEST_CLUSTER=real.
  cluster = await startTestCluster({
    namespaces: ['shop'],
    objects: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web', namespace: 'shop', annotations: { 'needs-secret': 'db-password' } },
      },
    ],
  });
  // The controller under test: it marks a ConfigMap resolved once the Secret it names exists.
  manager = new Manager({ source: new SharedInformerPool({ client: cluster.client }) });
  manager.addController({
    name: 'configmap-controller',
    for: { group: '', kind: 'ConfigMap' },
    async reconcile(ctx) {
      const secret = ctx.object?.metadata.annotations?.['needs-secret'];
      if (!secret) return;
      const r = ctx.resolve(`Secret/shop/${secret}`, "metadata.annotations['needs-secret']");
      await cluster.client.request('PATCH', `/api/v1/namespaces/shop/configmaps/${ctx.object!.metadata.name}`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { resolved: String(r.state === 'Ready') } } },
      });
    },
  });
  manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await cluster?.stop(); // no port, timer or file left behind
});

it('marks the ConfigMap resolved once its Secret exists', async () => {
  // waitFor rejects, saying what it saw last, if the predicate does not hold within 10 s.
  const waiting = await cluster.waitFor('ConfigMap/shop/web', (cm) => cm?.metadata.labels?.resolved !== undefined);
  expect(waiting?.metadata.labels?.resolved).toBe('false');
  await cluster.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password', namespace: 'shop' } });
  await cluster.waitFor('ConfigMap/shop/web', (cm) => cm?.metadata.labels?.resolved === 'true');
});
