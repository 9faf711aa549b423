import { describe, expect, it } from 'vitest';
import { buildModel, controllerNodeId, objectNodeId } from '@/components/graph/model';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const APP = 'App.demo.refwatch.dev';
const DB = 'Database.demo.refwatch.dev';

describe('buildModel', () => {
  const model = buildModel(demoSnapshot(NOW), { now: NOW });
  const node = (id: string) => model.nodes.find((n) => n.id === id);

  it('has one node per object key and one per reference controller', () => {
    const ids = model.nodes.map((n) => n.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(node(objectNodeId(`${APP}/shop/storefront`))?.roles).toEqual(['referrer']);
    expect(node(objectNodeId(`${DB}/shop/orders`))?.roles).toEqual(['referent']);
    expect(model.nodes.filter((n) => n.type === 'controller')).toHaveLength(6);
  });

  it('labels each reference edge with its field path, from referrer to referent', () => {
    const edge = model.edges.find((e) => e.type === 'reference' && e.source === objectNodeId(`${APP}/shop/catalog`));
    expect(edge).toMatchObject({ target: objectNodeId(`${DB}/shop/ordrs`), label: 'spec.databaseRef' });
  });

  it('links each referent to the reference controller of its kind', () => {
    expect(model.edges).toContainEqual(
      expect.objectContaining({
        type: 'watch',
        source: objectNodeId(`${DB}/shop/orders`),
        target: controllerNodeId(DB),
      }),
    );
  });

  it('maps states: resolved, waiting, stuck from the server list, error for an unknown kind', () => {
    expect(node(objectNodeId(`${APP}/shop/storefront`))?.state).toBe('resolved');
    expect(node(objectNodeId(`${APP}/shop/checkout`))?.state).toBe('waiting');
    expect(node(objectNodeId(`${APP}/shop/catalog`))?.state).toBe('stuck');
    expect(node(objectNodeId(`${APP}/billing/refunds`))?.state).toBe('error');
    expect(node(objectNodeId(`${DB}/shop/ordrs`))?.state).toBe('notfound');
  });

  it('counts a referrer waiting past the threshold as stuck, with its reason', () => {
    const later = buildModel(demoSnapshot(NOW), { now: NOW + 60_000 });
    const checkout = later.nodes.find((n) => n.id === objectNodeId(`${APP}/shop/checkout`));
    expect(checkout?.state).toBe('stuck');
    expect(checkout?.reason).toContain('2/3 replicas');
  });

  it('keeps a cancelled reference controller, with when and why', () => {
    const bucket = node(controllerNodeId('Bucket.demo.refwatch.dev'));
    expect(bucket?.state).toBe('cancelled');
    expect(bucket?.reason).toContain('grace period');
    expect(bucket?.since).toBe(NOW - 215_000);
  });

  it('shows an object that is both referrer and referent once, in its worse state', () => {
    const s = demoSnapshot(NOW);
    s.referents.push({
      id: `${APP}/shop/checkout`,
      key: `${APP}/shop/checkout`,
      kind: APP,
      namespace: 'shop',
      state: 'Ready',
      referencedBy: 1,
      changedAt: NOW,
    });
    const m = buildModel(s, { now: NOW });
    const both = m.nodes.filter((n) => n.key === `${APP}/shop/checkout`);
    expect(both).toHaveLength(1);
    expect(both[0]?.roles).toEqual(['referrer', 'referent']);
    expect(both[0]?.state).toBe('waiting');
  });

  it('draws a referent the cache has not reported yet as waiting rather than dropping the reference', () => {
    const s = demoSnapshot(NOW);
    s.references.push({ ...s.references[0]!, id: 'x', referent: 'Secret/shop/late', fieldPath: 'spec.lateRef' });
    const m = buildModel(s, { now: NOW });
    expect(m.nodes.find((n) => n.key === 'Secret/shop/late')?.state).toBe('waiting');
    expect(m.nodes.find((n) => n.key === `${APP}/shop/storefront`)?.state).toBe('resolved');
  });
});
