import type { Command } from 'commander';
import { Option } from 'commander';
import type { HistoryTransition } from '../backend';
import { CliError, EXIT } from '../errors';
import { act, addCommonOptions, duration, examples, resolveObject } from '../options';
import { paintState, renderData, renderTable, type Printer } from '../output';

interface HistoryOptions {
  since?: number;
  limit: number;
  server?: string;
}

export function registerHistory(program: Command, bin: string): void {
  const cmd = program
    .command('history')
    .summary("an object's recorded timeline: its states, its references and its referents' changes")
    .description(
      "Print OBJECT's timeline as a running refwatch server recorded it, across restarts: the object's states, the references it started or stopped naming, and its referents' transitions with the manager that made each change (docs/history.md).\nNeeds --server (or REFWATCH_SERVER): the history lives with the server. Exits 0, or 2 on a usage or connection error.",
    )
    .argument('<OBJECT>', 'a refwatch key (Pod/shop/web) or TYPE/NAME (pod/web)')
    .argument('[NAME]', 'the name, when OBJECT is only a TYPE (history pod web)');
  addCommonOptions(cmd)
    .addOption(
      new Option('--since <duration>', 'only transitions of the last DURATION, e.g. 24h').argParser(
        duration('--since'),
      ),
    )
    .addOption(
      new Option('--limit <n>', 'print at most N transitions (oldest first)')
        .argParser((v) => {
          const n = Number(v);
          if (!Number.isInteger(n) || n < 1 || n > 100_000)
            throw new CliError(`--limit ${v}: give a whole number from 1 to 100000`);
          return n;
        })
        .default(1000),
    )
    .addHelpText(
      'after',
      examples(
        [
          [
            'What happened to this Pod in the last day?',
            'history pod/web -n shop --since 24h --server http://127.0.0.1:3000',
          ],
          ['The same for a script', 'history Pod/shop/web -o json --server http://127.0.0.1:3000'],
        ],
        bin,
      ),
    );
  const run = act(async (backend, printer, o, object: string, name: string | undefined) => {
    const h = o as unknown as HistoryOptions;
    if (!backend.history) throw new CliError('history needs a running refwatch server: add --server URL');
    const key = await resolveObject(backend, object, name);
    const since = h.since !== undefined ? Date.now() - h.since : undefined;
    const transitions = await backend.history({ key, limit: h.limit, ...(since !== undefined ? { since } : {}) });
    printHistory(printer, key, transitions);
    return EXIT.resolved;
  });
  cmd.action(async (...args: unknown[]) => {
    const c = args[args.length - 1] as Command;
    if (!c.opts<HistoryOptions>().server)
      throw new CliError(
        'history is kept by a running refwatch server: add --server http://127.0.0.1:3000 (or set REFWATCH_SERVER)',
      );
    await (run as (...a: unknown[]) => Promise<void>)(...args);
  });
}

/** describeTransition says what one transition means, as the dashboard's timeline does. */
export function describeTransition(t: HistoryTransition): string {
  switch (t.type) {
    case 'reference':
      return `${t.state === 'Added' ? 'started naming' : 'stopped naming'} ${t.related ?? '?'}${t.message ? ` (${t.message})` : ''}`;
    case 'referent':
      return t.message ?? (t.state === 'NotFound' ? 'deleted' : t.state);
    case 'referrer':
      return t.reason ? `${t.reason}${t.related ? `: ${t.related}` : ''}${t.message ? ` (${t.message})` : ''}` : '';
    default:
      return t.message ?? t.reason ?? '';
  }
}

export function printHistory(p: Printer, key: string, transitions: HistoryTransition[]): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData({ object: key, transitions }, p.format));
  if (transitions.length === 0) return p.write(`no recorded transitions for ${key}`);
  const wide = p.format === 'wide';
  const headers = wide
    ? ['TIME', 'OBJECT', 'STATE', 'WHAT', 'BY', 'RESOURCEVERSION', 'CONTROLLER']
    : ['TIME', 'OBJECT', 'STATE', 'WHAT', 'BY'];
  const rows = transitions.map((t) => {
    const row = [
      new Date(t.at).toISOString().replace('T', ' ').slice(0, 19),
      t.object === key ? '.' : t.object,
      paintState(p.colors, t.state),
      describeTransition(t),
      t.manager ?? '',
    ];
    return wide ? [...row, t.resourceVersion ?? '', t.controller ?? ''] : row;
  });
  p.write(renderTable(headers, rows, { noHeaders: p.noHeaders }));
}
