import { describe, expect, it } from 'vitest';
import { diffModels, isStructural } from '@/components/graph/diff';
import { decideLayout } from '@/components/graph/layout';
import { buildModel, objectNodeId } from '@/components/graph/model';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;

describe('diffModels and the layout decision', () => {
  const before = buildModel(demoSnapshot(NOW), { now: NOW });

  it('finds nothing between equal models, so nothing is redrawn', () => {
    const d = diffModels(before, buildModel(demoSnapshot(NOW), { now: NOW }));
    expect(isStructural(d)).toBe(false);
    expect(d.changedNodes).toHaveLength(0);
    expect(decideLayout(d, before.nodes.length)).toBe('none');
  });

  it('treats a state change as data only: positions stay', () => {
    const s = demoSnapshot(NOW);
    s.referrers.find((r) => r.key.endsWith('/shop/checkout'))!.state = 'Resolved';
    const d = diffModels(before, buildModel(s, { now: NOW }));
    expect(d.changedNodes.map((n) => n.id)).toEqual([objectNodeId('App.demo.refwatch.dev/shop/checkout')]);
    expect(isStructural(d)).toBe(false);
    expect(decideLayout(d, before.nodes.length)).toBe('data');
  });

  it('treats a new reference as structural: an incremental layout', () => {
    const s = demoSnapshot(NOW);
    s.references.push({ ...s.references[0]!, id: 'x', referent: 'Secret/shop/tls', fieldPath: 'spec.tlsRef' });
    const d = diffModels(before, buildModel(s, { now: NOW }));
    expect(d.addedNodes.map((n) => n.key)).toEqual(['Secret/shop/tls']);
    expect(d.addedEdges.map((e) => e.type).sort()).toEqual(['reference', 'watch']);
    expect(decideLayout(d, before.nodes.length)).toBe('incremental');
  });

  it('reports removed nodes and edges', () => {
    const s = demoSnapshot(NOW);
    s.references = s.references.filter((r) => !r.referrer.endsWith('/shop/search'));
    s.referrers = s.referrers.filter((r) => !r.key.endsWith('/shop/search'));
    const d = diffModels(before, buildModel(s, { now: NOW }));
    expect(d.removedNodes).toEqual([objectNodeId('App.demo.refwatch.dev/shop/search')]);
    expect(d.removedEdges).toHaveLength(1);
  });

  it('lays out from scratch on first render or when most of the graph is new', () => {
    const empty = { nodes: [], edges: [] };
    expect(decideLayout(diffModels(empty, before), 0)).toBe('full');
    expect(decideLayout(diffModels(before, empty), before.nodes.length)).toBe('full');
  });

  it('counts a node that moved to another group as removed and added', () => {
    const moved = {
      ...before,
      nodes: before.nodes.map((n, i) => (i === 0 ? { ...n, parent: 'grp:namespace:shop' } : n)),
    };
    const d = diffModels(before, moved);
    expect(d.removedNodes).toEqual([before.nodes[0]!.id]);
    expect(d.addedNodes.map((n) => n.id)).toEqual([before.nodes[0]!.id]);
  });
});
