import { afterEach, describe, expect, it } from 'vitest';
import { startTestCluster, type KubeObject, type TestCluster } from '@/lib/testing';

const running: TestCluster[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function start(gc: boolean): Promise<TestCluster> {
  const c = await startTestCluster({ mode: 'embedded', gc, namespaces: ['shop'] });
  running.push(c);
  return c;
}

const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop', ...extra },
});

const ownedBy = (owner: KubeObject, blockOwnerDeletion?: boolean) => ({
  apiVersion: owner.apiVersion ?? 'v1',
  kind: owner.kind ?? 'ConfigMap',
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
});

/** owner is a ConfigMap; dependents are ConfigMaps it owns (a finalizer `test/hold` keeps one from going). */
async function family(c: TestCluster, deps: { name: string; block?: boolean; hold?: boolean }[]) {
  const [owner] = await c.apply(cm('owner'));
  await c.apply(
    deps.map((d) =>
      cm(d.name, {
        ownerReferences: [{ ...ownedBy({ ...owner!, apiVersion: 'v1', kind: 'ConfigMap' }, d.block) }],
        ...(d.hold ? { finalizers: ['test/hold'] } : {}),
      }),
    ),
  );
  return owner!;
}

const gone = (o: KubeObject | undefined) => o === undefined;

describe('gc: true (embedded garbage collector)', () => {
  it('background deletion: the dependents of a deleted owner are deleted, and theirs in turn', async () => {
    const c = await start(true);
    await family(c, [{ name: 'child' }]);
    const child = (await c.get('ConfigMap/shop/child'))!;
    await c.apply(cm('grandchild', { ownerReferences: [ownedBy({ ...child, apiVersion: 'v1', kind: 'ConfigMap' })] }));
    await c.delete('ConfigMap/shop/owner');
    await c.waitFor('ConfigMap/shop/child', gone);
    await c.waitFor('ConfigMap/shop/grandchild', gone);
  });

  it('foreground deletion: the owner waits, behind foregroundDeletion, for dependents with blockOwnerDeletion', async () => {
    const c = await start(true);
    await family(c, [{ name: 'blocking', block: true, hold: true }]);
    await c.delete('ConfigMap/shop/owner', { propagationPolicy: 'Foreground' });
    const held = await c.waitFor('ConfigMap/shop/blocking', (o) => o?.metadata.deletionTimestamp !== undefined);
    expect(held?.metadata.finalizers).toEqual(['test/hold']);
    const owner = await c.get('ConfigMap/shop/owner');
    expect(owner?.metadata.deletionTimestamp).toBeDefined();
    expect(owner?.metadata.finalizers).toEqual(['foregroundDeletion']);
    // Releasing the dependent lets it go, and then the owner.
    await c.client.request('PATCH', '/api/v1/namespaces/shop/configmaps/blocking', {
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: null } },
    });
    await c.waitFor('ConfigMap/shop/blocking', gone);
    await c.waitFor('ConfigMap/shop/owner', gone);
  });

  it('foreground deletion does not wait for dependents without blockOwnerDeletion, but deletes them', async () => {
    const c = await start(true);
    await family(c, [{ name: 'free', block: false, hold: true }]);
    await c.delete('ConfigMap/shop/owner', { propagationPolicy: 'Foreground' });
    await c.waitFor('ConfigMap/shop/owner', gone);
    const free = await c.waitFor('ConfigMap/shop/free', (o) => o?.metadata.deletionTimestamp !== undefined);
    expect(free?.metadata.finalizers).toEqual(['test/hold']);
  });

  it('orphan propagation: the dependents stay, without the reference to the deleted owner', async () => {
    const c = await start(true);
    await family(c, [{ name: 'kept', block: true }]);
    await c.delete('ConfigMap/shop/owner', { propagationPolicy: 'Orphan' });
    await c.waitFor('ConfigMap/shop/owner', gone);
    const kept = await c.waitFor(
      'ConfigMap/shop/kept',
      (o) => o !== undefined && o.metadata.ownerReferences === undefined,
    );
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('a dependent with another owner left keeps living, its reference to the deleted owner removed', async () => {
    const c = await start(true);
    const owner = await family(c, []);
    const [other] = await c.apply(cm('other'));
    await c.apply(
      cm('shared', {
        ownerReferences: [
          ownedBy({ ...owner, apiVersion: 'v1', kind: 'ConfigMap' }),
          ownedBy({ ...other!, apiVersion: 'v1', kind: 'ConfigMap' }),
        ],
      }),
    );
    await c.delete('ConfigMap/shop/owner');
    const shared = await c.waitFor(
      'ConfigMap/shop/shared',
      (o) => (o?.metadata.ownerReferences as unknown[] | undefined)?.length === 1,
    );
    expect((shared?.metadata.ownerReferences as { name: string }[])[0]!.name).toBe('other');
  });

  it('without gc, as kube-apiserver alone: dependents stay and a foreground owner stays behind its finalizer', async () => {
    const c = await start(false);
    await family(c, [{ name: 'child' }]);
    await c.delete('ConfigMap/shop/owner', { propagationPolicy: 'Foreground' });
    // Give a collector, were one running, time to act: the state must not change.
    await new Promise((r) => setTimeout(r, 200));
    expect((await c.get('ConfigMap/shop/owner'))?.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(await c.get('ConfigMap/shop/child')).toBeDefined();
  });
});
