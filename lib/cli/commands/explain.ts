import type { Command } from 'commander';
import { chainText, type Explanation } from '../../diagnose';
import { EXIT } from '../errors';
import { act, addCommonOptions, examples, resolveObject } from '../options';
import { age, isGood, paintState, renderData, renderTable, type Printer } from '../output';

export function registerExplain(program: Command, bin: string): void {
  const cmd = program
    .command('explain')
    .summary('each reference of an object: its state, why, and what to do')
    .description(
      "Explain each reference of OBJECT: the referent, its state, the reason and the fix, as the dashboard's side panel gives them.\n" +
        'Where the referent that blocks OBJECT is itself blocked, a "root cause" line follows the chain to the deepest cause.\nExits 0 when every reference is resolved, 1 when one is not, 2 on a usage or connection error.',
    )
    .argument(
      '<OBJECT>',
      'a refwatch key (Pod/shop/web, App.demo.refwatch.dev/shop/web) or TYPE/NAME (pod/web, apps.demo.refwatch.dev/web)',
    )
    .argument('[NAME]', 'the name, when OBJECT is only a TYPE (explain pod web)');
  addCommonOptions(cmd).addHelpText(
    'after',
    examples(
      [
        ['Why is this Pod not starting? (standalone, from your kubeconfig)', 'explain pod/web -n shop'],
        ['The same through a running refwatch server', 'explain Pod/shop/web --server http://127.0.0.1:3000'],
        [
          'A custom resource, with the rules that say what it refers to',
          'explain apps.demo.refwatch.dev/web -n shop --rules demo-rules.yaml',
        ],
        [
          'Every column, or the full answer for a script',
          'explain pod/web -n shop -o wide\n  $ ' + bin + ' explain pod/web -n shop -o json',
        ],
      ],
      bin,
    ),
  );
  cmd.action(
    act(async (backend, printer, _o, object: string, name: string | undefined) => {
      const key = await resolveObject(backend, object, name);
      const e = await backend.explain(key);
      printExplanation(printer, e, backend.knowsSince ? Date.now() : undefined);
      return resolved(e) ? EXIT.resolved : EXIT.unresolved;
    }),
  );
}

/**
 * resolved: every controller's view of the object is Resolved and every reference Ready. A label
 * selector's matches count through their selection: a Service with one Ready Pod of two is resolved.
 */
export function resolved(e: Explanation): boolean {
  return e.controllers.every((c) => {
    const selected = new Set((c.selections ?? []).map((s) => s.fieldPath));
    return c.state === 'Resolved' && c.references.every((r) => r.state === 'Ready' || selected.has(r.fieldPath));
  });
}

/** printExplanation prints e; `now` dates each state, when the states' start is known. */
export function printExplanation(p: Printer, e: Explanation, now: number | undefined): void {
  if (p.format === 'json' || p.format === 'yaml') return p.write(renderData(e, p.format));
  const wide = p.format === 'wide';
  const c = p.colors;
  for (const view of e.controllers) {
    if (!p.noHeaders) {
      const why = view.state === 'Resolved' ? '' : view.reason ? ` (${view.reason})` : '';
      p.write(
        `${c.bold(e.object)}: ${paintState(c, view.state)}${now === undefined ? '' : ` for ${age(now - view.since)}`}${why}, ${view.references.length} reference${view.references.length === 1 ? '' : 's'}, controller ${view.controller}`,
      );
    }
    for (const line of selectionLines(view)) p.write(line);
    if (view.references.length === 0) continue;
    const headers = wide
      ? ['REFERENT', 'FIELD', 'STATE', 'REASON', 'MESSAGE', 'FIX']
      : ['REFERENT', 'STATE', 'REASON', 'FIX'];
    const rows = view.references.map((r) => {
      const fix = isGood(r.state) ? '' : r.fix;
      return wide
        ? [r.referent, r.fieldPath, paintState(c, r.state), r.reason, r.message, fix]
        : [r.referent, paintState(c, r.state), r.reason, fix];
    });
    p.write(renderTable(headers, rows, { noHeaders: p.noHeaders }));
    const rc = view.rootCause;
    if (rc) {
      p.write(`${c.bold('root cause')}: ${chainText(rc)}`);
      if (rc.fix && !rc.cycle) p.write(`${c.bold('fix')}: ${rc.fix}`);
    }
  }
}

/**
 * selectionLines says what each label selector of the view selects and how
 * many of its matches are Ready (the matches themselves are its references),
 * then, when a selector keeps the object unresolved, the diagnosis: what would
 * match instead (did you mean app=web?), or that too few are Ready.
 */
function selectionLines(view: Explanation['controllers'][number]): string[] {
  const lines: string[] = [];
  for (const s of view.selections ?? []) {
    if (s.state === 'NoSelector') continue;
    const what = `${s.kind} ${s.selector === '' ? '(every object)' : s.selector} in ${s.where}`;
    lines.push(`selector ${s.fieldPath}: ${what}: ${s.matched} matched, ${s.ready} Ready (${s.state})`);
  }
  const blocked = (view.selections ?? []).some((s) => s.state === 'NoMatch' || s.state === 'NotReady');
  if (blocked && view.state !== 'Resolved' && view.message) lines.push(`diagnosis: ${view.message}`);
  if (view.warning) lines.push(`warning: ${view.warning}`);
  return lines;
}
