import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeRequestError } from '@/lib/kube';
import { startTestCluster, type TestCluster } from '@/lib/testing';

// startTestCluster in the mode REFWATCH_TEST_CLUSTER selects, so this file runs on both tiers.
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster({ namespaces: ['gc'] });
});
afterAll(async () => {
  await cluster?.stop();
});

const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'gc', ...extra },
});

/** What kube-apiserver itself does on DELETE, with no garbage collector running (envtest's world). */
describe(`refwatch/testing on the ${process.env.REFWATCH_TEST_CLUSTER ?? 'embedded'} cluster`, () => {
  it('returns the same shape in both modes, and its client lists', async () => {
    expect(cluster.mode).toBe(process.env.REFWATCH_TEST_CLUSTER ?? 'embedded');
    const list = (await cluster.client.getJSON('/api/v1/namespaces')) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((n) => n.metadata.name)).toContain('gc');
  });

  it.each([
    ['Background', undefined],
    ['Foreground', ['foregroundDeletion']],
    ['Orphan', ['orphan']],
  ] as const)(
    'DELETE with propagationPolicy=%s leaves the owner as kube-apiserver does',
    async (policy, finalizers) => {
      const name = `owner-${policy.toLowerCase()}`;
      const [owner] = await cluster.apply(cm(name));
      await cluster.apply(
        cm(`${name}-child`, {
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name, uid: owner!.metadata.uid, blockOwnerDeletion: true },
          ],
        }),
      );
      await cluster.delete(`ConfigMap/gc/${name}`, { propagationPolicy: policy });
      const after = await cluster.get(`ConfigMap/gc/${name}`);
      if (finalizers === undefined) expect(after).toBeUndefined();
      else {
        expect(after?.metadata.finalizers).toEqual(finalizers);
        expect(after?.metadata.deletionTimestamp).toBeDefined();
      }
      // Nothing but a garbage collector deletes the dependent, and neither tier runs one here.
      expect(await cluster.get(`ConfigMap/gc/${name}-child`)).toBeDefined();
    },
  );

  it('refuses an unknown propagationPolicy with 422 naming the field and the supported values', async () => {
    await cluster.apply(cm('policy'));
    const err = await cluster.client
      .request('DELETE', '/api/v1/namespaces/gc/configmaps/policy', {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Sideways' },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as KubeRequestError).status).toBe(422);
    expect((err as Error).message).toMatch(/propagationPolicy: Unsupported value: "Sideways"/);
  });
});
