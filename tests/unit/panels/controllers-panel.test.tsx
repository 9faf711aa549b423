import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ControllersPanel } from '@/components/panels/ControllersPanel';
import type { ReferenceControllerEntity } from '@/lib/changelog/entities';

function controller(over: Partial<ReferenceControllerEntity>): ReferenceControllerEntity {
  return {
    id: 'Secret',
    kind: 'Secret',
    state: 'Active',
    reason: 'primed',
    references: 1,
    referents: 1,
    startedAt: 0,
    dispatches: 0,
    errors: [],
    history: [],
    ...over,
  };
}

describe('ControllersPanel', () => {
  it('shows a per-namespace reference controller as its own row, naming the namespace', () => {
    const html = renderToStaticMarkup(
      <ControllersPanel
        controllers={[
          controller({ id: 'Secret/web', namespace: 'web' }),
          controller({ id: 'Secret', state: 'Cancelled', reason: 'listing Secret in all namespaces is forbidden' }),
          controller({ id: 'Secret/shop', namespace: 'shop' }),
        ]}
        now={1_000}
        onSelectKind={() => {}}
      />,
    );
    expect(html.match(/<li [^>]*data-state="/g)).toHaveLength(3);
    expect(html).toContain('(ns shop)');
    expect(html).toContain('(ns web)');
    // Active rows sort before Cancelled ones, and by namespace within a kind.
    expect(html.indexOf('(ns shop)')).toBeLessThan(html.indexOf('(ns web)'));
    expect(html.indexOf('(ns web)')).toBeLessThan(html.indexOf('data-state="Cancelled"'));
  });
});
