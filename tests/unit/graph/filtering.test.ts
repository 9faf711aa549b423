import { describe, expect, it } from 'vitest';
import { NO_FILTERS, facetsOf, filterModel } from '@/components/graph/filtering';
import { buildModel, controllerNodeId, objectNodeId } from '@/components/graph/model';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const model = buildModel(demoSnapshot(NOW), { now: NOW });
const keys = (m: { nodes: { key: string; context?: boolean }[] }, context = false) =>
  m.nodes
    .filter((n) => (n.context === true) === context)
    .map((n) => n.key)
    .sort();

describe('filterModel', () => {
  it('returns the model unchanged without filters', () => {
    const f = filterModel(model, NO_FILTERS);
    expect(f.nodes).toBe(model.nodes);
    expect(f.matched).toBe(model.nodes.length);
  });

  it('finds by any word of the key or reason, case-insensitively', () => {
    const f = filterModel(model, { ...NO_FILTERS, q: 'DID YOU MEAN' });
    expect(keys(f)).toEqual(['App.demo.refwatch.dev/shop/catalog', 'Database.demo.refwatch.dev/shop/ordrs']);
  });

  it('keeps the referents and controllers that explain a match, as faded context', () => {
    const f = filterModel(model, { ...NO_FILTERS, state: 'stuck', ns: 'shop' });
    expect(keys(f)).toEqual(['App.demo.refwatch.dev/shop/catalog']);
    expect(keys(f, true)).toEqual(['Database.demo.refwatch.dev', 'Database.demo.refwatch.dev/shop/ordrs']);
    expect(f.edges.map((e) => e.target).sort()).toEqual(
      [controllerNodeId('Database.demo.refwatch.dev'), objectNodeId('Database.demo.refwatch.dev/shop/ordrs')].sort(),
    );
  });

  it('never matches cluster-wide controllers by namespace', () => {
    const f = filterModel(model, { ...NO_FILTERS, ns: 'billing' });
    expect(f.nodes.filter((n) => n.type === 'controller').every((n) => n.context)).toBe(true);
    expect(f.nodes.filter((n) => !n.context).every((n) => n.namespace === 'billing')).toBe(true);
  });

  it('filters by kind, including that kind’s controller', () => {
    const f = filterModel(model, { ...NO_FILTERS, kind: 'Secret' });
    expect(keys(f)).toContain('Secret');
    expect(f.nodes.filter((n) => !n.context).every((n) => n.kind === 'Secret')).toBe(true);
  });

  it('matches nothing for a state no node has', () => {
    const f = filterModel(model, { ...NO_FILTERS, state: 'priming' });
    expect(f.nodes).toHaveLength(0);
    expect(f.matched).toBe(0);
  });
});

describe('facetsOf', () => {
  it('offers the namespaces, kinds and states present, states in severity order', () => {
    const f = facetsOf(model);
    expect(f.namespaces).toEqual(['analytics', 'billing', 'shop']);
    expect(f.kinds).toContain('Secret');
    expect(f.states.slice(0, 5)).toEqual(['resolved', 'waiting', 'notfound', 'stuck', 'error']);
  });
});
