import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DATABASE_CRD, database, namespace, start } from './harness';

describe('embedded API server with @kubernetes/client-node', () => {
  it('lists, creates and watches through client-node as against a real cluster', async () => {
    const s = await start({ objects: [DATABASE_CRD, namespace('shop'), database('orders')], token: 't0ken' });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // client-node only speaks plain HTTP to a server marked skipTLSVerify.
      clusters: [{ name: 'embedded', server: s.url, skipTLSVerify: true }],
      users: [{ name: 'embedded', token: 't0ken' }],
      contexts: [{ name: 'embedded', cluster: 'embedded', user: 'embedded' }],
      currentContext: 'embedded',
    });
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);

    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(expect.arrayContaining(['default', 'shop']));

    const dbs = (await custom.listNamespacedCustomObject({
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      namespace: 'shop',
      plural: 'databases',
    })) as {
      items: { metadata: { name: string } }[];
      metadata: { resourceVersion: string };
    };
    expect(dbs.items.map((d) => d.metadata.name)).toEqual(['orders']);

    const seen: string[] = [];
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const req = await new Watch(kc).watch(
      '/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases',
      { resourceVersion: dbs.metadata.resourceVersion, allowWatchBookmarks: true },
      (phase: string, obj: { metadata?: { name?: string } }) =>
        seen.push(`${phase} ${obj.metadata?.name ?? ''}`.trim()),
      () => ended(),
    );
    await expect.poll(() => s.openWatches()['databases.demo.refwatch.dev']).toBe(1);
    await custom.createNamespacedCustomObject({
      group: 'demo.refwatch.dev',
      version: 'v1alpha1',
      namespace: 'shop',
      plural: 'databases',
      body: database('payments'),
    });
    await expect.poll(() => seen).toContain('ADDED payments');
    req.abort();
    await done;
    await expect.poll(() => s.openWatches()['databases.demo.refwatch.dev'] ?? 0).toBe(0);

    // The kubeconfig the server hands out loads too.
    const fromFile = new KubeConfig();
    fromFile.loadFromString(JSON.stringify(s.kubeconfig()));
    const cm = await fromFile
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'via-kubeconfig' } } });
    expect(cm.metadata?.resourceVersion).toMatch(/^\d+$/);
  });
});
