import Table from 'cli-table3';
import pc from 'picocolors';
import { stringify } from 'yaml';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'wide', 'json', 'yaml'];

type Colors = ReturnType<typeof pc.createColors>;

/** Printer writes one command's answer in the format asked for, in colour only on a terminal. */
export interface Printer {
  readonly format: OutputFormat;
  readonly noHeaders: boolean;
  readonly colors: Colors;
  write(text: string): void;
}

/** useColor: a terminal, and no NO_COLOR (https://no-color.org); FORCE_COLOR forces it. */
export function useColor(stream: { isTTY?: boolean }, env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function createPrinter(opts: {
  format: OutputFormat;
  noHeaders: boolean;
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}): Printer {
  return {
    format: opts.format,
    noHeaders: opts.noHeaders,
    colors: pc.createColors(useColor(opts.stream, opts.env)),
    write: (text) => void opts.stream.write(text.endsWith('\n') ? text : text + '\n'),
  };
}

const NO_BORDER = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '',
};

/** renderTable lays rows out the way kubectl does: upper-case headers, no borders, three spaces between columns. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  opts: { noHeaders?: boolean; colWidths?: number[] } = {},
): string {
  const table = new Table({
    ...(opts.noHeaders ? {} : { head: [...headers] }),
    chars: NO_BORDER,
    style: { 'padding-left': 0, 'padding-right': 3, head: [], border: [], compact: true },
    ...(opts.colWidths ? { colWidths: opts.colWidths } : {}),
  });
  for (const r of rows) table.push([...r]);
  if (rows.length === 0 && opts.noHeaders) return '';
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}

/** renderData prints a value as JSON (two-space indent, as kubectl) or YAML. */
export function renderData(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(value, null, 2) : stringify(value, { lineWidth: 0 }).trimEnd();
}

const GOOD = new Set(['Ready', 'Resolved']);
const WAITING = new Set(['NotReady', 'Waiting', 'NotPrimed', 'Requeued']);

/** isSettledGood: a state that needs nothing from anyone. */
export function isGood(state: string): boolean {
  return GOOD.has(state);
}

/** paintState colours a state: green done, yellow waiting, red needs a person. */
export function paintState(colors: Colors, state: string): string {
  if (GOOD.has(state)) return colors.green(state);
  if (WAITING.has(state)) return colors.yellow(state);
  return colors.red(state);
}

/** age prints a duration as kubectl's AGE column does: 45s, 3m12s, 2h5m, 4d. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 8 ? `${h}h${m % 60}m` : `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
