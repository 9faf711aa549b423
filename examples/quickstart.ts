import { Manager } from 'refwatch/engine';
import { SharedInformerPool } from 'refwatch/kube';
import { startTestCluster } from 'refwatch/testing';

// A cluster to talk to: here an embedded API server of its own; use KubeClient.fromFile(path, { context }) for yours.
const cluster = await startTestCluster({
  namespaces: ['shop'],
  objects: [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web', namespace: 'shop', annotations: { 'needs-secret': 'db-password' } },
    },
  ],
});
const manager = new Manager({ source: new SharedInformerPool({ client: cluster.client }), grace: 5_000 });

// A controller whose ConfigMaps need a Secret: it declares the reference through resolve()
// and is woken the moment the Secret appears — no polling, no backoff.
manager.addController({
  name: 'configmap-controller',
  for: { group: '', kind: 'ConfigMap' },
  reconcile(ctx) {
    const secret = ctx.object?.metadata.annotations?.['needs-secret'];
    if (!secret) return;
    const r = ctx.resolve(`Secret/${ctx.object!.metadata.namespace}/${secret}`, "metadata.annotations['needs-secret']");
    console.log(`${ctx.key}: ${r.state}`);
  },
});
manager.start();

await new Promise((r) => setTimeout(r, 500)); // prints NotPrimed (cache loading), then NotFound
await cluster.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password', namespace: 'shop' } });
await new Promise((r) => setTimeout(r, 500)); // prints: ConfigMap/shop/web: Ready

await manager.stop();
await cluster.stop();
