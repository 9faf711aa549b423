import { Option, type Command } from 'commander';
import type { StuckEntry } from '../../changelog';
import { foldWorkloads, ownedText, rootCauseGroups, type StuckItem } from '../../diagnose/grouping';
import { EXIT } from '../errors';
import { act, addCommonOptions, duration, examples, resolveKind } from '../options';
import { age, paintState, renderData, renderTable, type Printer } from '../output';

export function registerStuck(program: Command, bin: string): void {
  const cmd = program
    .command('stuck')
    .summary('the stuck referrers, oldest first')
    .description(
      'List the referrers unresolved for at least --older-than, oldest first, each with the reference that holds it up and the fix.\n' +
        'Where that referent is itself blocked, the deepest cause is given (REFERENT names it, and the chain under it), and a Pod stuck on the same cause as the workload that owns it is counted on the workload\'s line ("and its 2 Pods").\n' +
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
    .option('--by-root-cause', 'group the referrers by the referent that blocks them in the end')
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
          ['What blocks the most? One group per root cause', 'stuck -A --by-root-cause'],
        ],
        bin,
      ),
    );
  cmd.action(
    act(async (backend, printer, o) => {
      const extra = cmd.opts<{ olderThan: number; kind?: string; byRootCause?: boolean }>();
      const kind = extra.kind !== undefined ? await resolveKind(backend, extra.kind) : undefined;
      const namespace = o.allNamespaces ? undefined : backend.namespace;
      const items = await backend.stuck({ olderThanMs: extra.olderThan, namespace, kind });
      if (extra.byRootCause) printStuckGroups(printer, items, extra.olderThan);
      else printStuck(printer, items, extra.olderThan);
      return items.length === 0 ? EXIT.resolved : EXIT.unresolved;
    }),
  );
}

export function printStuck(p: Printer, items: StuckEntry[], olderThanMs: number): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData({ olderThanMs, items }, p.format));
  if (items.length === 0) return nothingStuck(p, olderThanMs);
  const wide = p.format === 'wide';
  const headers = wide
    ? ['REFERRER', 'AGE', 'REASON', 'REFERENT', 'CONTROLLER', 'STATE', 'MESSAGE', 'FIX']
    : ['REFERRER', 'AGE', 'REASON', 'REFERENT', 'FIX'];
  p.write(
    renderTable(
      headers,
      foldWorkloads(items).map((i) => stuckRow(p, i)),
      { noHeaders: p.noHeaders },
    ),
  );
}

/** printStuckGroups prints one block per root cause, biggest first: a title line, then its referrers. */
export function printStuckGroups(p: Printer, items: StuckEntry[], olderThanMs: number): void {
  const groups = rootCauseGroups(items);
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData({ olderThanMs, items, groups }, p.format));
  if (items.length === 0) return nothingStuck(p, olderThanMs);
  const c = p.colors;
  const byId = new Map(items.map((s) => [s.id, s]));
  const wide = p.format === 'wide';
  const headers = wide ? ['REFERRER', 'AGE', 'CONTROLLER', 'STATE', 'VIA'] : ['REFERRER', 'AGE', 'VIA'];
  groups.forEach((g, n) => {
    if (n > 0) p.write('');
    p.write(`${c.bold(g.title)}: ${paintState(c, g.reason)} ${g.message}`);
    if (g.fix) p.write(`  fix: ${g.fix}`);
    const rows = g.items.map((i) => {
      const s = byId.get(i.id)!;
      const owned = ownedText(i.owned.map((key) => items.find((e) => e.key === key)!).filter(Boolean));
      const referrer = owned ? `${s.key} (${owned})` : s.key;
      const via = s.rootCause ? s.rootCause.path.slice(1, -1).join(' → ') : '';
      return wide
        ? ['  ' + referrer, age(s.ageMs), s.controller, paintState(c, s.state), via]
        : ['  ' + referrer, age(s.ageMs), via];
    });
    p.write(
      renderTable(
        headers.map((h, i) => (i === 0 ? '  ' + h : h)),
        rows,
        { noHeaders: p.noHeaders },
      ),
    );
  });
}

function nothingStuck(p: Printer, olderThanMs: number): void {
  if (!p.noHeaders) process.stderr.write(`No referrer unresolved for ${age(olderThanMs)} or more.\n`);
}

/** stuckRow is one line: a workload with what it stands for, and the deepest cause where there is a chain. */
function stuckRow(p: Printer, { entry: s, owned }: StuckItem): string[] {
  const c = p.colors;
  const rc = s.rootCause;
  const more = ownedText(owned);
  const referrer = more ? `${s.key} (${more})` : s.key;
  const reason = rc ? rc.reason : s.reason;
  const referent = rc
    ? `${rc.referent} (via ${rc.path.slice(1, -1).join(' → ')}${rc.cycle ? ', a cycle' : ''})`
    : (s.referent ?? '');
  const fix = rc ? rc.fix : s.fix;
  const base = [referrer, age(s.ageMs), paintState(c, reason), referent];
  return p.format === 'wide'
    ? [...base, s.controller, paintState(c, s.state), rc ? rc.message : s.message, fix]
    : [...base, fix];
}
