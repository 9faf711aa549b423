import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { parseExplanation } from '@/components/data/explain';
import { STUCK_LINES_SHOWN, StuckPanel } from '@/components/panels/StuckPanel';
import { firstLines } from '@/components/panels/stuck';
import { groupByRootCause } from '@/lib/diagnose/grouping';
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

/** n stuck Apps of shop, each waiting on a Secret of its own, so each is a group of one line. */
const apart = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    stuckEntry(`App.demo.refwatch.dev/shop/app-${i}`, { referent: `Secret/shop/s-${i}`, since: i }),
  );

describe('StuckPanel on a long list', () => {
  it(`draws the first ${STUCK_LINES_SHOWN} lines and offers the rest`, () => {
    const html = renderToStaticMarkup(<StuckPanel stuck={apart(120)} onSelectKey={() => undefined} />);
    expect(html.match(/<li class/g)?.length).toBe(STUCK_LINES_SHOWN);
    expect(text(html)).toContain('app-49');
    expect(text(html)).not.toContain('app-50');
    expect(text(html)).toContain(`Show ${STUCK_LINES_SHOWN} more (70 not shown)`);
  });

  it('offers no more once every line is drawn', () => {
    const html = renderToStaticMarkup(<StuckPanel stuck={apart(STUCK_LINES_SHOWN)} onSelectKey={() => undefined} />);
    expect(html.match(/<li class/g)?.length).toBe(STUCK_LINES_SHOWN);
    expect(html).not.toContain('stuck-show-more');
  });
});

describe('firstLines', () => {
  // Three groups of 3, 2 and 4 lines: three Secrets, each blocking that many Apps.
  const groups = groupByRootCause(
    [3, 2, 4].flatMap((n, g) =>
      Array.from({ length: n }, (_, i) =>
        stuckEntry(`App.demo.refwatch.dev/shop/g${g}-${i}`, { referent: `Secret/shop/s${g}`, since: g * 10 + i }),
      ),
    ),
  );

  it('keeps whole groups, cuts the one the count ends in, and counts what it leaves out', () => {
    expect(groups.map((g) => g.items.length)).toEqual([4, 3, 2]);
    const { shown, hidden } = firstLines(groups, 5);
    expect(shown.map((s) => s.items.length)).toEqual([4, 1]);
    // The cut group keeps its whole group beside the lines drawn, so its head still counts all three.
    expect(shown[1]!.group).toBe(groups[1]);
    expect(hidden).toBe(4);
  });

  it('keeps everything when there is room, and nothing for no lines', () => {
    expect(firstLines(groups, 9)).toEqual({ shown: groups.map((group) => ({ group, items: group.items })), hidden: 0 });
    expect(firstLines(groups, 0)).toEqual({ shown: [], hidden: 9 });
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
