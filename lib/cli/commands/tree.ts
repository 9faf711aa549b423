import type { Command } from 'commander';
import { CliError, EXIT } from '../errors';
import { act, addCommonOptions, examples, resolveObject } from '../options';
import { isGood, paintState, renderData, renderTable, type Printer } from '../output';
import type { RootCause } from '../../changelog';
import { chainText } from '../../diagnose/root-cause';
import type { ObjectKey } from '../../model';
import type { Backend } from '../backend';
import { buildTree, everyNode, markRootCause, treeLines, type TreeNode } from '../tree';

export function registerTree(program: Command, bin: string): void {
  const cmd = program
    .command('tree')
    .summary('the references as a tree, referrer → referents, with states')
    .description(
      "Show OBJECT's references as a tree: referrer → referents, followed further where a referent refers to objects itself; each line with its state.\n" +
        'Where OBJECT is blocked through a chain of referrers, the deepest cause is marked "◀ root cause" and named under the tree.\n' +
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
      const rc = reverse ? undefined : await rootCauseOf(backend, key);
      if (rc) markRootCause(root, rc.path);
      printTree(printer, root);
      if (rc && printer.format !== 'json' && printer.format !== 'yaml' && !printer.noHeaders)
        printer.write(`${printer.colors.bold('root cause')}: ${chainText(rc)}`);
      if (root.state === 'Unknown' && root.children.length === 0) {
        process.stderr.write(`${key} ${reverse ? 'has no referrers' : 'is not a referrer'} that refwatch knows of\n`);
        return EXIT.unresolved;
      }
      return everyNode(root, (n) => isGood(n.state)) ? EXIT.resolved : EXIT.unresolved;
    }),
  );
}

/** rootCauseOf is the root cause explain finds for the object, if it is a blocked referrer; none for anything else. */
async function rootCauseOf(backend: Backend, key: ObjectKey): Promise<RootCause | undefined> {
  try {
    return (await backend.explain(key)).controllers.find((v) => v.rootCause)?.rootCause;
  } catch (e) {
    // Not a referrer (exit code 1, "not found"): the tree alone says all there is.
    if (e instanceof CliError && e.exitCode === 1) return undefined;
    throw e;
  }
}

export function printTree(p: Printer, root: TreeNode): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData(root, p.format));
  const wide = p.format === 'wide';
  const c = p.colors;
  const rows = treeLines(root).map(({ prefix, node }) => {
    const object = `${c.dim(prefix)}${node.key}${node.cycle ? c.dim(' (cycle)') : ''}${node.rootCause ? ' ◀ root cause' : ''}`;
    return wide
      ? [object, paintState(c, node.state), node.fieldPath ?? '', node.message ?? '']
      : [object, paintState(c, node.state)];
  });
  p.write(
    renderTable(wide ? ['OBJECT', 'STATE', 'FIELD', 'MESSAGE'] : ['OBJECT', 'STATE'], rows, { noHeaders: p.noHeaders }),
  );
}
