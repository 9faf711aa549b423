import type { Command } from 'commander';
import { namespaceOfKey } from '../../model';
import type { WatchScope } from '../backend';
import { CliError, EXIT } from '../errors';
import { act, addCommonOptions, examples, resolveObject } from '../options';
import { paintState, renderTable, type Printer } from '../output';
import { WatchView, type WatchRow } from '../watch-view';
import { stringify } from 'yaml';

export function registerWatch(program: Command, bin: string): void {
  const cmd = program
    .command('watch')
    .summary('live state changes of an object or a namespace, until interrupted')
    .description(
      'Print the state of OBJECT and its referents (or of every referrer in a namespace, and their referents), then each change, until interrupted (Ctrl-C exits 0).\n' +
        'With -o json one JSON object per line; with -o yaml one document per change.',
    )
    .argument(
      '[OBJECT]',
      'a refwatch key (Pod/shop/web) or TYPE/NAME (pod/web); omitted: the namespace (-n) or every namespace (-A)',
    )
    .argument('[NAME]', 'the name, when OBJECT is only a TYPE (watch pod web)');
  addCommonOptions(cmd, { allNamespaces: true }).addHelpText(
    'after',
    examples(
      [
        ["Watch a Pod's references resolve", 'watch pod/web -n shop'],
        ['Every referrer in namespace shop, through a server', 'watch -n shop --server http://127.0.0.1:3000'],
        ['Changes as JSON lines for a script', 'watch -A -o json'],
      ],
      bin,
    ),
  );
  cmd.action(
    act(async (backend, printer, o, object: string | undefined, name: string | undefined) => {
      let scope: WatchScope;
      if (object !== undefined) {
        if (o.allNamespaces)
          throw new CliError('flag -A watches every namespace: give it without OBJECT, or drop -A to watch OBJECT');
        const key = await resolveObject(backend, object, name);
        scope = { key, namespace: namespaceOfKey(key) || undefined };
      } else scope = o.allNamespaces ? {} : { namespace: backend.namespace };
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        const view = new WatchView(scope);
        const out = new WatchOutput(printer);
        for await (const m of backend.watch(scope, abort.signal)) {
          out.rows(m.type === 'snapshot' ? view.reset(m.graph) : view.apply(m.changes));
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      return EXIT.resolved;
    }),
  );
}

/** WatchOutput prints rows as they come: a table whose column widths are fixed by the first rows, or one JSON/YAML document per row. */
class WatchOutput {
  private widths: number[] | undefined;
  private headerDone = false;

  constructor(private readonly p: Printer) {}

  rows(rows: WatchRow[]): void {
    const p = this.p;
    const time = new Date().toISOString();
    if (p.format === 'json') {
      for (const r of rows) p.write(JSON.stringify({ time, ...r }));
      return;
    }
    if (p.format === 'yaml') {
      for (const r of rows) p.write(`---\n${stringify({ time, ...r }).trimEnd()}`);
      return;
    }
    const wide = p.format === 'wide';
    const headers = wide
      ? ['TIME', 'OBJECT', 'STATE', 'CONTROLLER', 'MESSAGE']
      : ['TIME', 'OBJECT', 'STATE', 'MESSAGE'];
    const cells = rows.map((r) => {
      const base = [time.slice(11, 19), r.object, paintState(p.colors, r.state)];
      return wide ? [...base, r.controller ?? '', r.message] : [...base, r.message];
    });
    if (!this.widths) {
      const longest = Math.max(30, ...rows.map((r) => r.object.length));
      this.widths = wide ? [11, longest + 3, 13, 24, 0] : [11, longest + 3, 13, 0];
    }
    if (!this.headerDone && !p.noHeaders) {
      p.write(renderTable(headers, [], { colWidths: this.widths.slice(0, -1) }).trimEnd());
    }
    this.headerDone = true;
    for (const row of cells) p.write(renderTable([], [row], { noHeaders: true, colWidths: this.widths.slice(0, -1) }));
  }
}
