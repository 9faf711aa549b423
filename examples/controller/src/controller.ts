import { Manager, conditionReadiness, resolvedCondition, setCondition, type StatusCondition } from 'refwatch/engine';
import { KubeClient, KubeRequestError, SharedInformerPool } from 'refwatch/kube';

const GROUP = 'demo.refwatch.dev';
const client = process.env.KUBECONFIG ? KubeClient.fromFile(process.env.KUBECONFIG) : KubeClient.inCluster();
const manager = new Manager({
  source: new SharedInformerPool({ client }),
  // Databases and Caches are ready when their Ready condition is True; Secrets when they exist.
  readiness: (kind) => (kind.endsWith(`.${GROUP}`) ? conditionReadiness('Ready') : undefined),
});

manager.addController({
  name: 'app-controller',
  for: { group: GROUP, kind: 'App' },
  async reconcile(ctx) {
    const app = ctx.object!; // present: the controller watches Apps, and a deleted App is not reconciled
    const { namespace, name, resourceVersion } = app.metadata;
    const spec = app.spec as { databaseRef: { name: string }; cacheRef: { name: string }; secretRef: { name: string } };
    // Each resolve() subscribes the App to its referent, then reads the referent from the shared cache.
    const ready = resolvedCondition([
      ctx.resolve(`Database.${GROUP}/${namespace}/${spec.databaseRef.name}`, 'spec.databaseRef'),
      ctx.resolve(`Cache.${GROUP}/${namespace}/${spec.cacheRef.name}`, 'spec.cacheRef'),
      ctx.resolve(`Secret/${namespace}/${spec.secretRef.name}`, 'spec.secretRef'),
    ]);
    const conditions = setCondition((app.status as { conditions?: StatusCondition[] } | undefined)?.conditions, ready);
    if (!conditions) return; // the status already says so
    try {
      await client.request('PATCH', `/apis/${GROUP}/v1alpha1/namespaces/${namespace}/apps/${name}/status`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion }, status: { conditions } },
        signal: ctx.signal,
      });
    } catch (e) {
      if (e instanceof KubeRequestError && e.status === 409) return; // a newer App is on its way and queues it again
      throw e;
    }
    console.log(
      `App ${namespace}/${name} ${ready.status === 'True' ? 'resolved' : `waiting: ${ready.reason} ${ready.message}`}`,
    );
  },
});

manager.start();
console.log('app-controller started');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    await manager.stop(); // drains the workers and closes every watch
    client.close();
    console.log('app-controller stopped');
  });
}
