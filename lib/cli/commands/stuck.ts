import { Option, type Command } from 'commander';
import type { StuckEntry } from '../../changelog';
import { EXIT } from '../errors';
import { act, addCommonOptions, duration, examples, resolveKind } from '../options';
import { age, paintState, renderData, renderTable, type Printer } from '../output';

export function registerStuck(program: Command, bin: string): void {
  const cmd = program
    .command('stuck')
    .summary('the stuck referrers, oldest first')
    .description(
      'List the referrers unresolved for at least --older-than, oldest first, each with the reference that holds it up and the fix.\n' +
        "Standalone, refwatch starts watching only now: a referrer's age is counted from its creationTimestamp.\n" +
        'Exits 0 when nothing is stuck, 1 when something is, 2 on a usage or connection error.',
    );
  addCommonOptions(cmd, { allNamespaces: true })
    .addOption(
      new Option('--older-than <duration>', 'only referrers unresolved at least this long')
        .argParser(duration('--older-than'))
        .default(30_000, '30s'),
    )
    .addOption(new Option('--kind <kind>', 'only referrers of this kind (pod, pods, Pod, App.demo.refwatch.dev)'))
    .addHelpText(
      'after',
      examples(
        [
          ['What is stuck in namespace shop?', 'stuck -n shop'],
          [
            'Everything unresolved right now, in every namespace, through a server',
            'stuck -A --older-than 0s --server http://127.0.0.1:3000',
          ],
          ['Only Pods, as JSON for a CI step', 'stuck -n shop --kind pod -o json'],
        ],
        bin,
      ),
    );
  cmd.action(
    act(async (backend, printer, o) => {
      const extra = cmd.opts<{ olderThan: number; kind?: string }>();
      const kind = extra.kind !== undefined ? await resolveKind(backend, extra.kind) : undefined;
      const namespace = o.allNamespaces ? undefined : backend.namespace;
      const items = await backend.stuck({ olderThanMs: extra.olderThan, namespace, kind });
      printStuck(printer, items, extra.olderThan);
      return items.length === 0 ? EXIT.resolved : EXIT.unresolved;
    }),
  );
}

export function printStuck(p: Printer, items: StuckEntry[], olderThanMs: number): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData({ olderThanMs, items }, p.format));
  if (items.length === 0) {
    if (!p.noHeaders) process.stderr.write(`No referrer unresolved for ${age(olderThanMs)} or more.\n`);
    return;
  }
  const wide = p.format === 'wide';
  const c = p.colors;
  const headers = wide
    ? ['REFERRER', 'AGE', 'REASON', 'REFERENT', 'CONTROLLER', 'STATE', 'MESSAGE', 'FIX']
    : ['REFERRER', 'AGE', 'REASON', 'REFERENT', 'FIX'];
  const rows = items.map((s) => {
    const base = [s.key, age(s.ageMs), paintState(c, s.reason), s.referent ?? ''];
    return wide ? [...base, s.controller, paintState(c, s.state), s.message, s.fix] : [...base, s.fix];
  });
  p.write(renderTable(headers, rows, { noHeaders: p.noHeaders }));
}
