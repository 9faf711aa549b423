import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { parseExplanation } from '@/components/data/explain';
import { StuckPanel } from '@/components/panels/StuckPanel';
import { SECRET, rootCauseChain, stuckEntry } from '@/tests/fixtures/stuck-entries';

const CHAIN = rootCauseChain(
  ['App.demo.refwatch.dev/shop/web', 'Database.demo.refwatch.dev/shop/orders'],
  'set spec.secretRef to db-password, or create Secret/shop/db-passwd',
);

const text = (html: string) => html.replace(/<[^>]+>/g, '');

describe('StuckPanel', () => {
  it('heads a shared root cause, folds Pods into their workload and shows a chain with its deepest cause marked', () => {
    const html = renderToStaticMarkup(
      <StuckPanel
        stuck={[
          stuckEntry('App.demo.refwatch.dev/shop/web', {
            referent: CHAIN.path[1],
            reason: 'NotReady',
            rootCause: CHAIN,
          }),
          stuckEntry('Deployment.apps/shop/api'),
          stuckEntry('Pod/shop/api-7c9-a', { workload: 'Deployment.apps/shop/api' }),
          stuckEntry('Pod/shop/api-7c9-b', { workload: 'Deployment.apps/shop/api' }),
          stuckEntry('App.demo.refwatch.dev/shop/alone', { referent: 'Secret/shop/other' }),
        ]}
        onSelectKey={() => undefined}
      />,
    );
    expect(text(html)).toContain(`4 referrers blocked by ${SECRET}`);
    expect(html.match(/data-testid="stuck-group"/g)).toHaveLength(1);
    expect(text(html)).toContain('and its 2 Pods');
    expect(html).not.toContain('api-7c9-a');
    expect(text(html)).toContain('App shop/web → Database shop/orders → Secret shop/db-passwd');
    expect(html).toMatch(/data-root="true"[^>]*>Secret shop\/db-passwd</);
    expect(text(html)).toContain(CHAIN.fix);
    // Each referrer line is one list item (the group head is presentation only).
    expect(html.match(/<li class/g)?.length).toBe(3);
  });
});

describe('parseExplanation root cause', () => {
  it('keeps the first view with a well-formed chain, and drops a malformed one', () => {
    const e = parseExplanation(
      {
        object: CHAIN.path[0],
        controllers: [
          { controller: 'a', state: 'Waiting', references: [], rootCause: { path: 'nope' } },
          { controller: 'b', state: 'Waiting', references: [], rootCause: { ...CHAIN, cycle: true } },
        ],
      },
      CHAIN.path[0]!,
    );
    expect(e.rootCause).toEqual({ ...CHAIN, cycle: true });
    expect(parseExplanation({ object: 'x', controllers: [] }, 'x').rootCause).toBeUndefined();
  });
});
