import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { printExplanation } from '@/lib/cli/commands/explain';
import { printStuck, printStuckGroups } from '@/lib/cli/commands/stuck';
import { printTree } from '@/lib/cli/commands/tree';
import type { Printer } from '@/lib/cli/output';
import { markRootCause, type TreeNode } from '@/lib/cli/tree';
import { SECRET, rootCauseChain, stuckEntry } from '@/tests/fixtures/stuck-entries';

function printer(format: Printer['format']): Printer & { out: string[] } {
  const out: string[] = [];
  return { format, noHeaders: false, colors: pc.createColors(false), write: (t) => out.push(t), out };
}

const CHAIN = rootCauseChain(
  ['Ingress.networking.k8s.io/shop/web', 'Service/shop/web', 'Pod/shop/web-7c9'],
  'set spec.volumes[0].secret.secretName to db-password, or create Secret/shop/db-passwd',
);

const ITEMS = [
  stuckEntry('Ingress.networking.k8s.io/shop/web', {
    referent: 'Service/shop/web',
    reason: 'NotReady',
    rootCause: CHAIN,
  }),
  stuckEntry('Deployment.apps/shop/web'),
  stuckEntry('Pod/shop/web-7c9', { workload: 'Deployment.apps/shop/web' }),
  stuckEntry('Pod/shop/web-8d1', { workload: 'Deployment.apps/shop/web' }),
  stuckEntry('App.demo.refwatch.dev/shop/other', { referent: 'Secret/shop/other' }),
];

describe('refwatch stuck', () => {
  it('names a workload once with what it owns, and the deepest cause of a chain with the path to it', () => {
    const p = printer('table');
    printStuck(p, ITEMS, 30_000);
    const lines = p.out[0]!.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(
      /^Ingress\.networking\.k8s\.io\/shop\/web\s+1m35s\s+NotFound\s+Secret\/shop\/db-passwd \(via Service\/shop\/web → Pod\/shop\/web-7c9\)\s+set spec/,
    );
    expect(lines[2]).toMatch(
      /^Deployment\.apps\/shop\/web \(and its 2 Pods\)\s+1m35s\s+NotFound\s+Secret\/shop\/db-passwd/,
    );
    expect(p.out.join('\n')).not.toContain('Pod/shop/web-7c9 ');
    // JSON keeps every entry, for scripts.
    const json = printer('json');
    printStuck(json, ITEMS, 30_000);
    expect(JSON.parse(json.out[0]!).items).toHaveLength(5);
  });

  it('--by-root-cause prints one block per cause, biggest first, and JSON with the groups', () => {
    const p = printer('table');
    printStuckGroups(p, ITEMS, 30_000);
    const text = p.out.join('\n');
    expect(p.out[0]).toBe(`4 referrers blocked by ${SECRET}: NotFound ${SECRET} not found; did you mean db-password?`);
    expect(p.out[1]).toBe(`  fix: ${CHAIN.fix}`);
    expect(text).toMatch(
      / {2}Ingress\.networking\.k8s\.io\/shop\/web\s+1m35s\s+Service\/shop\/web → Pod\/shop\/web-7c9/,
    );
    expect(text).toMatch(/ {2}Deployment\.apps\/shop\/web \(and its 2 Pods\)\s+1m35s/);
    expect(text.indexOf('1 referrer blocked by Secret/shop/other')).toBeGreaterThan(text.indexOf('4 referrers'));
    const json = printer('json');
    printStuckGroups(json, ITEMS, 30_000);
    const body = JSON.parse(json.out[0]!);
    expect(body.groups.map((g: { title: string }) => g.title)).toEqual([
      `4 referrers blocked by ${SECRET}`,
      '1 referrer blocked by Secret/shop/other',
    ]);
    expect(body.groups[0].items[1]).toEqual({
      id: 'c|Deployment.apps/shop/web',
      key: 'Deployment.apps/shop/web',
      owned: ['Pod/shop/web-7c9', 'Pod/shop/web-8d1'],
    });
  });
});

describe('refwatch explain and tree', () => {
  it('explain prints the chain to the root cause and its fix under the references', () => {
    const p = printer('table');
    printExplanation(
      p,
      {
        object: CHAIN.path[0]!,
        controllers: [
          {
            controller: 'rules/Ingress.networking.k8s.io',
            state: 'Waiting',
            since: 0,
            references: [
              {
                referent: 'Service/shop/web',
                fieldPath: 'spec.rules[0].http.paths[0].backend.service.name',
                state: 'NotReady',
                reason: 'NoReadyPods',
                message: 'm',
                fix: 'f',
              },
            ],
            rootCause: CHAIN,
          },
        ],
      },
      undefined,
    );
    expect(p.out.at(-2)).toBe(`root cause: ${CHAIN.path.join(' → ')}: ${CHAIN.message}`);
    expect(p.out.at(-1)).toBe(`fix: ${CHAIN.fix}`);
  });

  it('tree marks the deepest cause when the tree holds the whole path, and nothing otherwise', () => {
    const node = (key: string, state: string, children: TreeNode[] = []): TreeNode => ({ key, state, children });
    const tree = () =>
      node(CHAIN.path[0]!, 'Waiting', [
        node('Service/shop/web', 'NotReady', [node('Pod/shop/web-7c9', 'NotReady', [node(SECRET, 'NotFound')])]),
        node('Secret/shop/tls', 'Ready'),
      ]);
    const marked = tree();
    expect(markRootCause(marked, CHAIN.path)).toBe(true);
    const p = printer('table');
    printTree(p, marked);
    expect(p.out[0]).toMatch(/└── Secret\/shop\/db-passwd ◀ root cause\s+NotFound/);
    expect(p.out[0]!.match(/root cause/g)).toHaveLength(1);
    const other = tree();
    expect(markRootCause(other, [CHAIN.path[0]!, 'Service/shop/web', 'Pod/shop/other', SECRET])).toBe(false);
    expect(markRootCause(other, ['Pod/shop/else', SECRET])).toBe(false);
    const q = printer('table');
    printTree(q, other);
    expect(q.out[0]).not.toContain('root cause');
  });
});
