import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attention, orderRows, rowWindow, scrollToShow } from '@/components/dashboard/rows';
import type { GraphNode, NodeState } from '@/components/graph/model';

const node = (key: string, state: NodeState, context = false): GraphNode => ({
  id: `obj:${key}`,
  type: 'object',
  key,
  label: key,
  kind: 'App',
  namespace: 'shop',
  state,
  roles: ['referrer'],
  ...(context ? { context } : {}),
});

/** The table's order, spelled out as a comparison sort. */
const naive = (nodes: GraphNode[]) =>
  nodes
    .filter((n) => n.type !== 'group')
    .sort(
      (a, b) =>
        (a.context === b.context ? 0 : a.context ? 1 : -1) || attention(b) - attention(a) || a.key.localeCompare(b.key),
    );

describe('orderRows', () => {
  it('lists matches before context, the ones needing attention first, then by key; groups are not rows', () => {
    const nodes = [
      node('b', 'resolved'),
      node('a', 'resolved'),
      node('c', 'stuck'),
      node('d', 'error', true),
      { ...node('g', 'resolved'), type: 'group' as const },
    ];
    expect(orderRows(nodes).rows.map((n) => n.key)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('re-sorts a change of states exactly as a full sort does, reusing the key order', () => {
    const states: NodeState[] = ['resolved', 'waiting', 'notfound', 'stuck', 'error'];
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        (keys, before, after) => {
          const first = keys.map((k, i) => node(k, states[before[i]! % 5]!, before[i]! % 7 === 0));
          const prev = orderRows(first);
          const second = first.map((n, i) => ({ ...n, state: states[after[i]! % 5]! }));
          const next = orderRows(second, prev);
          expect(next.byKey).toBe(prev.byKey);
          expect(next.rows).toEqual(naive(second));
        },
      ),
    );
  });
});

describe('rowWindow and scrollToShow', () => {
  it('renders the rows in view plus overscan, clamped to the table', () => {
    expect(rowWindow(5000, 0, 260, 26, 8)).toEqual({ first: 0, last: 18 });
    expect(rowWindow(5000, 26 * 1000, 260, 26, 8)).toEqual({ first: 992, last: 1018 });
    expect(rowWindow(5000, 26 * 5000, 260, 26, 8)).toEqual({ first: 4992, last: 5000 });
    expect(rowWindow(0, 0, 260, 26, 8)).toEqual({ first: 0, last: 0 });
  });

  it('scrolls just enough to show a row below the sticky header', () => {
    expect(scrollToShow(3, 0, 286, 26, 26)).toBe(0); // already visible
    expect(scrollToShow(20, 0, 286, 26, 26)).toBe(21 * 26 - 260); // bottom edge
    expect(scrollToShow(2, 500, 286, 26, 26)).toBe(52); // above: to the top
  });
});
