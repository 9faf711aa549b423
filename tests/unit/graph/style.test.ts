import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_STATES, OBJECT_STATES } from '@/components/graph/model';
import { PALETTES, STATE_LOOK, graphStylesheet, nodeLabel } from '@/components/graph/style';

describe('state styles', () => {
  it('tells object states apart without colour: each has its own glyph and border style', () => {
    const looks = OBJECT_STATES.map(
      (s) => `${STATE_LOOK[s].glyph}|${STATE_LOOK[s].border}|${STATE_LOOK[s].borderWidth}`,
    );
    expect(new Set(looks).size).toBe(OBJECT_STATES.length);
    expect(new Set(CONTROLLER_STATES.map((s) => STATE_LOOK[s].glyph)).size).toBe(CONTROLLER_STATES.length);
  });

  it('keeps the CSS variables of both themes equal to the graph palettes', () => {
    const css = readFileSync(path.resolve(import.meta.dirname, '../../../app/globals.css'), 'utf8');
    const darkAt = css.indexOf(":root[data-theme='dark']");
    const blocks = { light: css.slice(0, darkAt), dark: css.slice(darkAt) };
    for (const theme of ['light', 'dark'] as const) {
      for (const [state, swatch] of Object.entries(PALETTES[theme].states)) {
        expect(blocks[theme]).toContain(`--state-${state}: ${swatch.stroke};`);
        expect(blocks[theme]).toContain(`--state-${state}-bg: ${swatch.fill};`);
      }
    }
  });

  it('gives every state a stylesheet rule in both themes', () => {
    for (const theme of ['light', 'dark'] as const) {
      const selectors = graphStylesheet(theme).map((b) => b.selector);
      for (const s of [...OBJECT_STATES, ...CONTROLLER_STATES])
        expect(selectors).toContain(`node[type != "group"][state = "${s}"]`);
    }
  });

  it('prints the state glyph in node labels and attention counts on summaries', () => {
    expect(
      nodeLabel({
        type: 'object',
        label: 'orders',
        kind: 'Database.demo.refwatch.dev',
        namespace: 'shop',
        state: 'notfound',
      }),
    ).toBe('? orders\nDatabase · shop');
    expect(
      nodeLabel({
        type: 'group',
        label: 'shop',
        kind: '',
        namespace: 'shop',
        state: 'stuck',
        size: 1234,
        counts: { stuck: 3, error: 1 },
      }),
    ).toBe('shop\n1,234 objects\n4 need attention');
  });
});

describe('layered stylesheet', () => {
  /** last is the value the last rule for `selector` gives `property`: cytoscape applies rules in order. */
  const last = (blocks: ReturnType<typeof graphStylesheet>, selector: string, property: string) =>
    blocks.filter((b) => b.selector === selector && property in b.style).at(-1)?.style[property];

  it('draws straight edges and names a field path only on the selected node’s edges', () => {
    const blocks = graphStylesheet('light', { layered: true });
    expect(last(blocks, 'edge', 'curve-style')).toBe('straight');
    expect(last(blocks, 'edge', 'label') ?? '').toBe('');
    expect(last(blocks, 'edge.neighbour', 'label')).toBe('data(label)');
    expect(last(graphStylesheet('light'), 'edge', 'label')).toBe('data(label)');
  });

  it('keeps watch edges faint on a dense graph', () => {
    expect(
      last(graphStylesheet('dark', { layered: true, dense: true }), 'edge[type = "watch"]', 'opacity'),
    ).toBeLessThan(0.3);
  });
});
