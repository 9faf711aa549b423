import type { Command } from 'commander';
import { EXIT } from '../errors';
import { act, addCommonOptions, examples, resolveObject } from '../options';
import { isGood, paintState, renderData, renderTable, type Printer } from '../output';
import { buildTree, everyNode, treeLines, type TreeNode } from '../tree';

export function registerTree(program: Command, bin: string): void {
  const cmd = program
    .command('tree')
    .summary('the references as a tree, referrer → referents, with states')
    .description(
      "Show OBJECT's references as a tree: referrer → referents, followed further where a referent refers to objects itself; each line with its state.\n" +
        'With --reverse, who refers to OBJECT (and to them). Exits 0 when every object in the tree is resolved, 1 when one is not, 2 on a usage or connection error.',
    )
    .argument('<OBJECT>', 'a refwatch key (Pod/shop/web) or TYPE/NAME (pod/web, apps.demo.refwatch.dev/web)')
    .argument('[NAME]', 'the name, when OBJECT is only a TYPE (tree pod web)');
  addCommonOptions(cmd, { allNamespaces: true })
    .option('--reverse', 'who refers to OBJECT, instead of what OBJECT refers to')
    .addHelpText(
      'after',
      examples(
        [
          ['What does this Pod depend on?', 'tree pod/web -n shop'],
          ['Who uses this Secret? (-A: referrers in every namespace)', 'tree secret/db-password -n shop --reverse'],
          [
            'With field paths and messages',
            'tree App.demo.refwatch.dev/shop/web --server http://127.0.0.1:3000 -o wide',
          ],
        ],
        bin,
      ),
    );
  cmd.action(
    act(async (backend, printer, o, object: string, name: string | undefined) => {
      const reverse = cmd.opts<{ reverse?: boolean }>().reverse === true;
      const key = await resolveObject(backend, object, name);
      const graph = await backend.graph(key, { reverse, allNamespaces: o.allNamespaces === true });
      const root = buildTree(graph, key, reverse);
      printTree(printer, root);
      if (root.state === 'Unknown' && root.children.length === 0) {
        process.stderr.write(`${key} ${reverse ? 'has no referrers' : 'is not a referrer'} that refwatch knows of\n`);
        return EXIT.unresolved;
      }
      return everyNode(root, (n) => isGood(n.state)) ? EXIT.resolved : EXIT.unresolved;
    }),
  );
}

export function printTree(p: Printer, root: TreeNode): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData(root, p.format));
  const wide = p.format === 'wide';
  const c = p.colors;
  const rows = treeLines(root).map(({ prefix, node }) => {
    const object = `${c.dim(prefix)}${node.key}${node.cycle ? c.dim(' (cycle)') : ''}`;
    return wide
      ? [object, paintState(c, node.state), node.fieldPath ?? '', node.message ?? '']
      : [object, paintState(c, node.state)];
  });
  p.write(
    renderTable(wide ? ['OBJECT', 'STATE', 'FIELD', 'MESSAGE'] : ['OBJECT', 'STATE'], rows, { noHeaders: p.noHeaders }),
  );
}
