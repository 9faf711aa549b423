import { describe, expect, it } from 'vitest';
import { groupModel, groupNodeId } from '@/components/graph/grouping';
import { buildModel } from '@/components/graph/model';
import { demoSnapshot, largeSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const small = buildModel(demoSnapshot(NOW), { now: NOW });

describe('groupModel', () => {
  it('leaves a small ungrouped graph alone', () => {
    const g = groupModel(small, { by: 'none', expanded: new Set() });
    expect(g.nodes).toBe(small.nodes);
    expect(g.large).toBe(false);
  });

  it('puts objects into namespace groups and leaves controllers on their own', () => {
    const g = groupModel(small, { by: 'namespace', expanded: new Set() });
    const shop = g.nodes.find((n) => n.id === groupNodeId('namespace', 'shop'));
    expect(shop).toMatchObject({ type: 'group', collapsed: false });
    expect(g.nodes.filter((n) => n.parent === shop?.id).every((n) => n.namespace === 'shop')).toBe(true);
    expect(g.nodes.filter((n) => n.type === 'controller').every((n) => n.parent === undefined)).toBe(true);
    expect(g.edges).toBe(small.edges);
  });

  it('groups a controller with the referents of its kind', () => {
    const g = groupModel(small, { by: 'kind', expanded: new Set() });
    const ctl = g.nodes.find((n) => n.id === 'ctl:Secret');
    expect(ctl?.parent).toBe(groupNodeId('kind', 'Secret'));
  });

  it('collapses every group into a summary past the threshold, with counts and the worst state', () => {
    const big = buildModel(largeSnapshot(NOW, 1200, 20), { now: NOW });
    expect(big.nodes.length).toBeGreaterThan(2000);
    const g = groupModel(big, { by: 'none', expanded: new Set() });
    expect(g.by).toBe('namespace');
    expect(g.large).toBe(true);
    const objects = g.nodes.filter((n) => n.type === 'object');
    expect(objects).toHaveLength(0);
    const team0 = g.nodes.find((n) => n.id === groupNodeId('namespace', 'team-0'))!;
    expect(team0.collapsed).toBe(true);
    expect(team0.size).toBe(Object.values(team0.counts!).reduce((a, b) => a + (b ?? 0), 0));
    expect(team0.state).toBe('resolved');
    expect(g.nodes.find((n) => n.id === groupNodeId('namespace', 'team-4'))?.state).toBe('stuck');
    expect(g.nodes.length).toBeLessThan(100);
  });

  it('rewires edges to summaries and merges them, dropping edges inside a group', () => {
    const big = buildModel(largeSnapshot(NOW, 1200, 20), { now: NOW });
    const g = groupModel(big, { by: 'namespace', expanded: new Set() });
    const ids = new Set(g.nodes.map((n) => n.id));
    expect(g.edges.every((e) => ids.has(e.source) && ids.has(e.target))).toBe(true);
    expect(g.edges.every((e) => e.source !== e.target)).toBe(true);
    const toDb = g.edges.filter(
      (e) => e.source === groupNodeId('namespace', 'team-0') && e.target === 'ctl:Database.demo.refwatch.dev',
    );
    expect(toDb).toHaveLength(1);
    expect(toDb[0]!.count).toBe(60);
  });

  it('expands a group the user clicked, even in a large graph', () => {
    const big = buildModel(largeSnapshot(NOW, 1200, 20), { now: NOW });
    const open = groupNodeId('namespace', 'team-3');
    const g = groupModel(big, { by: 'namespace', expanded: new Set([open]) });
    expect(g.nodes.find((n) => n.id === open)?.collapsed).toBe(false);
    expect(g.nodes.filter((n) => n.parent === open).length).toBeGreaterThan(0);
  });
});

describe('flat grouping', () => {
  it('never groups, even past the size where `none` groups by namespace', () => {
    const large = buildModel(largeSnapshot(NOW, 1200), { now: NOW });
    expect(groupModel(large, { by: 'none', expanded: new Set() }).by).toBe('namespace');
    const flat = groupModel(large, { by: 'flat', expanded: new Set() });
    expect(flat).toMatchObject({ by: 'flat', large: false });
    expect(flat.nodes).toBe(large.nodes);
    expect(flat.nodes.some((n) => n.type === 'group')).toBe(false);
  });
});

describe('one large namespace', () => {
  it('is drawn whole, not folded into a single summary node', () => {
    const scope = buildModel(largeSnapshot(NOW, 1200, 1), { now: NOW });
    expect(scope.nodes.length).toBeGreaterThan(2000);
    const g = groupModel(scope, { by: 'none', expanded: new Set() });
    expect(g).toMatchObject({ by: 'none', large: false });
    expect(g.nodes).toBe(scope.nodes);
    // Asked for explicitly, namespace grouping still folds it.
    expect(groupModel(scope, { by: 'namespace', expanded: new Set() }).large).toBe(true);
  });
});
