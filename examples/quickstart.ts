import { Manager } from '../lib/engine';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import { startEmbeddedServer } from '../lib/embedded';

// A cluster to talk to: here the embedded API server; use KubeClient.fromFile(path, { context }) for yours.
const cluster = await startEmbeddedServer({
  objects: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web', namespace: 'shop', annotations: { 'needs-secret': 'db-password' } },
    },
  ],
});
const client = KubeClient.fromKubeconfig(cluster.kubeconfig());
const manager = new Manager({ source: new SharedInformerPool({ client }), grace: 5_000 });

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
await client.request('POST', '/api/v1/namespaces/shop/secrets', { body: { metadata: { name: 'db-password' } } });
await new Promise((r) => setTimeout(r, 500)); // prints: ConfigMap/shop/web: Ready

await manager.stop();
await cluster.stop();
