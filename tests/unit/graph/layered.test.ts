import ELK from 'elkjs/lib/elk.bundled.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupModel } from '@/components/graph/grouping';
import {
  ELK_MAX_NODES,
  layerClass,
  layoutLayered,
  layoutNodeOf,
  mergePositions,
  nodeBox,
  readableViewport,
  sweepLayout,
  toElkGraph,
  type LayoutEdge,
  type LayoutNode,
} from '@/components/graph/layered';
import type { Point } from '@/components/graph/layout';
import { buildModel, type GraphModel } from '@/components/graph/model';
import { demoSnapshot, largeSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const demo = buildModel(demoSnapshot(NOW), { now: NOW });
const elk = new ELK();

/** rect is the room a node takes on the canvas at `p`: its shape and the label below it. */
function rect(n: LayoutNode, p: Point) {
  const b = nodeBox(n);
  return { x1: p.x - b.w / 2, x2: p.x + b.w / 2, y1: p.y - b.shapeH / 2, y2: p.y - b.shapeH / 2 + b.h };
}

/** overlaps lists pairs of nodes whose boxes (labels included) intersect. */
function overlaps(nodes: readonly LayoutNode[], at: ReadonlyMap<string, Point>): string[] {
  const rects = nodes.filter((n) => at.has(n.id)).map((n) => ({ id: n.id, ...rect(n, at.get(n.id)!) }));
  rects.sort((a, b) => a.x1 - b.x1);
  const out: string[] = [];
  for (let i = 0; i < rects.length; i++) {
    for (let j = i + 1; j < rects.length && rects[j]!.x1 < rects[i]!.x2; j++) {
      const a = rects[i]!;
      const b = rects[j]!;
      if (a.y1 < b.y2 && b.y1 < a.y2 && a.x1 < b.x2 && b.x1 < a.x2) out.push(`${a.id} × ${b.id}`);
    }
  }
  return out;
}

/** leftward lists the edges whose source is not left of their target. */
function leftward(edges: readonly LayoutEdge[], at: ReadonlyMap<string, Point>): string[] {
  return edges
    .filter((e) => at.has(e.source) && at.has(e.target) && at.get(e.source)!.x >= at.get(e.target)!.x)
    .map((e) => `${e.source} > ${e.target}`);
}

const input = (m: GraphModel) => ({
  nodes: m.nodes.map(layoutNodeOf),
  edges: m.edges.map((e) => ({ source: e.source, target: e.target })),
});

describe('layerClass', () => {
  it('puts referrers first, objects that are both next, referents after them and controllers last', () => {
    const n = (roles: ('referrer' | 'referent')[], type: LayoutNode['type'] = 'object') => layerClass({ type, roles });
    expect([n(['referrer']), n(['referrer', 'referent']), n(['referent']), n([], 'controller')]).toEqual([0, 1, 2, 3]);
  });
});

describe('toElkGraph', () => {
  it('partitions a flat graph by layer class and keeps every edge once', () => {
    const { nodes, edges } = input(demo);
    const g = toElkGraph(nodes, edges);
    expect(g.layoutOptions?.['elk.partitioning.activate']).toBe('true');
    expect(g.children).toHaveLength(nodes.length);
    const partition = new Map(g.children!.map((c) => [c.id, c.layoutOptions?.['elk.partitioning.partition']]));
    expect(partition.get('obj:App.demo.refwatch.dev/shop/storefront')).toBe('0');
    expect(partition.get('obj:Secret/shop/db-password')).toBe('2');
    expect(partition.get('ctl:Secret')).toBe('3');
    expect(g.edges).toHaveLength(edges.length);
    // Boxes hold the label: wider than the 30 px shape for a long name.
    expect(
      g.children!.find((c) => c.id === 'obj:Database.demo.refwatch.dev/analytics/warehouse')!.width,
    ).toBeGreaterThan(60);
  });

  it('nests group members in their group and lifts edges between groups to the top, once', () => {
    const grouped = groupModel(demo, { by: 'namespace', expanded: new Set() });
    const { nodes, edges } = input(grouped);
    const g = toElkGraph(nodes, edges);
    const shop = g.children!.find((c) => c.id === 'grp:namespace:shop')!;
    expect(shop.children!.map((c) => c.id)).toContain('obj:App.demo.refwatch.dev/shop/storefront');
    expect(
      shop.edges!.some(
        (e) =>
          e.sources[0] === 'obj:App.demo.refwatch.dev/shop/storefront' &&
          e.targets[0] === 'obj:Secret/shop/db-password',
      ),
    ).toBe(true);
    // Top level: groups and controllers, not partitioned (a group holds every layer class).
    expect(g.layoutOptions?.['elk.partitioning.activate']).toBe('false');
    const top = g.edges!.map((e) => `${e.sources[0]}>${e.targets[0]}`);
    expect(top).toContain('grp:namespace:shop>ctl:Secret');
    expect(new Set(top).size).toBe(top.length);
    expect(
      g.edges!.every(
        (e) => g.children!.some((c) => c.id === e.sources[0]) && g.children!.some((c) => c.id === e.targets[0]),
      ),
    ).toBe(true);
  });

  it('drops edges to nodes it was not given', () => {
    const g = toElkGraph([layoutNodeOf(demo.nodes[0]!)], [{ source: demo.nodes[0]!.id, target: 'obj:gone' }]);
    expect(g.edges).toEqual([]);
  });
});

describe('layoutLayered with ELK', () => {
  it('draws the demo graph left to right: referrers, referents, controllers; no label over another node', async () => {
    const { nodes, edges } = input(demo);
    const { positions, engine } = await layoutLayered({ nodes, edges }, elk);
    expect(engine).toBe('elk');
    expect(positions.size).toBe(nodes.length);
    expect(leftward(edges, positions)).toEqual([]);
    expect(overlaps(nodes, positions)).toEqual([]);
    const xOf = (id: string) => positions.get(id)!.x;
    expect(xOf('obj:App.demo.refwatch.dev/shop/storefront')).toBeLessThan(xOf('obj:Secret/shop/db-password'));
    expect(xOf('obj:Secret/shop/db-password')).toBeLessThan(xOf('ctl:Secret'));
  });

  it('keeps group members inside their group and the groups apart', async () => {
    const grouped = groupModel(demo, { by: 'namespace', expanded: new Set() });
    const { nodes, edges } = input(grouped);
    const { positions } = await layoutLayered({ nodes, edges }, elk);
    const leaves = nodes.filter((n) => n.type !== 'group');
    expect(overlaps(leaves, positions)).toEqual([]);
    // Group boxes (around their members) do not intersect each other.
    const boxes = nodes
      .filter((n) => n.type === 'group')
      .map((g) => {
        const rs = leaves.filter((n) => n.parent === g.id).map((n) => rect(n, positions.get(n.id)!));
        return {
          id: g.id,
          x1: Math.min(...rs.map((r) => r.x1)),
          x2: Math.max(...rs.map((r) => r.x2)),
          y1: Math.min(...rs.map((r) => r.y1)),
          y2: Math.max(...rs.map((r) => r.y2)),
        };
      });
    for (const a of boxes)
      for (const b of boxes)
        if (a !== b) expect(a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2, `${a.id} × ${b.id}`).toBe(false);
  });
});

describe('sweepLayout', () => {
  const big = buildModel(largeSnapshot(NOW, 2500, 1), { now: NOW });

  it('is what layoutLayered uses past ELK_MAX_NODES', async () => {
    expect(big.nodes.length).toBeGreaterThan(ELK_MAX_NODES);
    const { engine } = await layoutLayered(input(big), { layout: () => Promise.reject(new Error('ELK must not run')) });
    expect(engine).toBe('sweep');
  });

  it('places thousands of nodes left to right without any overlap', () => {
    const { nodes, edges } = input(big);
    const at = sweepLayout(nodes, edges);
    expect(at.size).toBe(nodes.length);
    expect(leftward(edges, at)).toEqual([]);
    expect(overlaps(nodes, at)).toEqual([]);
  });

  it('puts a referrer level with what it refers to', () => {
    const { nodes, edges } = input(big);
    const at = sweepLayout(nodes, edges);
    const refs = edges.filter((e) => e.target.startsWith('obj:Database'));
    // Each App and its own Database: a short edge, not one across the column.
    const drift = refs.map((e) => Math.abs(at.get(e.source)!.y - at.get(e.target)!.y));
    const height = Math.max(...[...at.values()].map((p) => p.y));
    expect(drift.sort((a, b) => a - b)[Math.floor(drift.length / 2)]!).toBeLessThan(height / 50);
  });

  it('stacks expanded groups so their boxes stay apart', () => {
    const grouped = groupModel(buildModel(largeSnapshot(NOW, 300, 3), { now: NOW }), {
      by: 'namespace',
      expanded: new Set(),
    });
    const { nodes, edges } = input(grouped);
    const at = sweepLayout(nodes, edges);
    expect(
      overlaps(
        nodes.filter((n) => n.type !== 'group'),
        at,
      ),
    ).toEqual([]);
    const spans = ['team-0', 'team-1', 'team-2'].map((ns) => {
      const ys = nodes.filter((n) => n.parent === `grp:namespace:${ns}`).map((n) => at.get(n.id)!.y);
      return [Math.min(...ys), Math.max(...ys)] as const;
    });
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThan(spans[i - 1]![1]);
  });
});

describe('mergePositions', () => {
  it('keeps every node on screen where it is and puts new ones in a free slot of their column', async () => {
    const { nodes, edges } = input(demo);
    const before = (await layoutLayered({ nodes: nodes.slice(0, -6), edges }, elk)).positions;
    const { positions: after } = await layoutLayered({ nodes, edges, previous: [...before] }, elk);
    for (const [id, p] of before) expect(after.get(id)).toEqual(p);
    expect(after.size).toBe(nodes.length);
    expect(overlaps(nodes, after)).toEqual([]);
    expect(leftward(edges, after)).toEqual([]);
  });

  it('never moves a kept node and never overlaps, whatever comes and goes', () => {
    const full = input(buildModel(largeSnapshot(NOW, 60, 3), { now: NOW }));
    const ids = full.nodes.map((n) => n.id);
    fc.assert(
      fc.property(fc.subarray(ids, { minLength: 1 }), fc.subarray(ids, { minLength: 1 }), (firstIds, secondIds) => {
        const pick = (s: readonly string[]) => {
          const keep = new Set(s);
          const nodes = full.nodes.filter((n) => keep.has(n.id));
          return { nodes, edges: full.edges.filter((e) => keep.has(e.source) && keep.has(e.target)) };
        };
        const first = pick(firstIds);
        const second = pick(secondIds);
        const shown = sweepLayout(first.nodes, first.edges);
        const previous = new Map([...shown].filter(([id]) => secondIds.includes(id)));
        const merged = mergePositions(second.nodes, second.edges, previous, sweepLayout(second.nodes, second.edges));
        expect(merged.size).toBe(second.nodes.length);
        for (const [id, p] of previous) expect(merged.get(id)).toEqual(p);
        expect(overlaps(second.nodes, merged)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('takes the fresh layout as it is when nothing was on screen', () => {
    const fresh = new Map([['a', { x: 1, y: 2 }]]);
    expect(mergePositions([layoutNodeOf(demo.nodes[0]!)], [], new Map(), fresh)).toEqual(fresh);
  });
});

describe('readableViewport', () => {
  it('fits a small graph whole', () => {
    const v = readableViewport(
      [
        { x: 0, y: 0 },
        { x: 400, y: 300 },
      ],
      1000,
      700,
    );
    expect(v.zoom).toBeGreaterThanOrEqual(0.8);
    // Both corners are inside the viewport.
    for (const p of [
      { x: 0, y: 0 },
      { x: 400, y: 300 },
    ]) {
      expect(p.x * v.zoom + v.pan.x).toBeGreaterThan(0);
      expect(p.x * v.zoom + v.pan.x).toBeLessThan(1000);
      expect(p.y * v.zoom + v.pan.y).toBeGreaterThan(0);
      expect(p.y * v.zoom + v.pan.y).toBeLessThan(700);
    }
  });

  it('shows the top-left corner of a huge graph at a zoom labels can be read at, not a fit that shrinks them to dots', () => {
    const points = Array.from({ length: 5000 }, (_, i) => ({ x: (i % 3) * 300, y: Math.floor(i / 3) * 70 }));
    const v = readableViewport(points, 1000, 700);
    expect(v.zoom).toBeGreaterThanOrEqual(0.8);
    expect(v.pan.y).toBeGreaterThan(0); // the first row sits just below the top edge
    expect(0 * v.zoom + v.pan.y).toBeLessThan(100);
  });
});
