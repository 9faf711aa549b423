import { LineCounter, isNode, parseDocument, type Document } from 'yaml';
import type { core as zcore } from 'zod';
import { RefwatchError, err, ok, type Result } from '../model';
import { rulesDocumentSchema, type RulesDocument } from './schema';

/** RuleIssue is one thing wrong with a rules file, located as precisely as the parser allows. */
export interface RuleIssue {
  file: string;
  /** Path inside the document, e.g. `rules[2].references[0].path`; '' for the document itself. */
  path: string;
  line?: number;
  column?: number;
  reason: string;
}

/** RulesError lists every issue found in one rules file. */
export class RulesError extends RefwatchError {
  readonly issues: RuleIssue[];

  constructor(issues: RuleIssue[]) {
    super('InvalidRules', issues.map(formatIssue).join('\n'), { field: issues[0]?.path });
    this.name = 'RulesError';
    this.issues = issues;
  }
}

export function formatIssue(i: RuleIssue): string {
  const where = i.line === undefined ? i.file : `${i.file}:${i.line}:${i.column ?? 1}`;
  return `${where}: ${i.path === '' ? '(document)' : i.path}: ${i.reason}`;
}

/** formatPath renders a document path the way a reader finds it: `rules[2].references[0].path`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** validateRules checks an already-parsed value against the rules schema. `file` names it in errors. */
export function validateRules(value: unknown, file: string): Result<RulesDocument, RulesError> {
  return check(value, file, undefined);
}

/** parseRulesText parses YAML or JSON text (JSON is read as YAML) and validates it, with line numbers. */
export function parseRulesText(text: string, file: string): Result<RulesDocument, RulesError> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return err(
      new RulesError(
        doc.errors.map((e) => {
          const pos = lineCounter.linePos(e.pos[0]);
          return {
            file,
            path: '',
            line: pos.line,
            column: pos.col,
            reason: `not valid YAML or JSON: ${firstLine(e.message)}`,
          };
        }),
      ),
    );
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) {
    return err(
      new RulesError([
        { file, path: '', reason: 'the file is empty; expected a mapping with rules:, conventions: or kinds:' },
      ]),
    );
  }
  return check(value, file, { doc, lineCounter });
}

function check(
  value: unknown,
  file: string,
  source: { doc: Document; lineCounter: LineCounter } | undefined,
): Result<RulesDocument, RulesError> {
  const parsed = rulesDocumentSchema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  const issues = flatten(parsed.error.issues, []).map(({ path, reason }): RuleIssue => {
    const pos = source ? locate(source.doc, source.lineCounter, path) : undefined;
    return { file, path: formatPath(path), ...pos, reason };
  });
  return err(new RulesError(issues));
}

type Located = { path: PropertyKey[]; reason: string };

/** flatten turns zod issues into one line per problem, descending into the union branch the input was meant for. */
function flatten(issues: readonly zcore.$ZodIssue[], prefix: PropertyKey[]): Located[] {
  const out: Located[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys)
          out.push({
            path: [...path, key],
            reason: 'unknown field; remove it or fix its spelling (docs/rules.md lists the fields)',
          });
        break;
      case 'invalid_union': {
        // The branch the author meant: not failed on the value's own type, and with the fewest issues.
        const meant = issue.errors.filter(
          (branch) =>
            !branch.some((b) => b.code === 'invalid_type' && b.path.length === 0) &&
            !branch.some((b) => b.code === 'invalid_value' && b.path.length === 0),
        );
        const fewest = Math.min(...meant.map((b) => b.length));
        const best = meant.filter((b) => b.length === fewest);
        if (best.length === 1) out.push(...flatten(best[0]!, path));
        else out.push({ path, reason: issue.message });
        break;
      }
      case 'invalid_type':
        out.push({
          path,
          reason: /received undefined$/.test(issue.message)
            ? `is required (${issue.expected})`
            : issue.message.replace(/^Invalid input: /, ''),
        });
        break;
      default:
        out.push({ path, reason: issue.message });
    }
  }
  return out;
}

/** locate finds the line of the deepest node on path that exists in the source. */
function locate(doc: Document, lc: LineCounter, path: PropertyKey[]): { line: number; column: number } | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) {
      const pos = lc.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return undefined;
}

function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl < 0 ? s : s.slice(0, nl);
}
