/**
 * The one place RESULT lines are printed and read. A figure with a target
 * prints
 *
 *   RESULT <name> <value> <unit> target <op> <target> PASS|MISS
 *
 * and a figure without one prints no verdict at all:
 *
 *   RESULT <name> <value> <unit> reported
 *
 * A MISS sets the process's exit code to 1, so a bench fails whether it is
 * run alone or by `npm run bench`; bench/runner.ts also reads the lines back.
 */
import { percentile } from '../server/demo/stats';

export type TargetOp = '>=' | '<=' | '==';
export type Verdict = 'PASS' | 'MISS' | 'reported';

export interface ResultLine {
  name: string;
  value: number;
  unit: string;
  /** Absent for a reported figure. */
  target?: { op: TargetOp; value: number };
  verdict: Verdict;
}

const OPS: readonly string[] = ['>=', '<=', '=='];

/** meets says whether value meets its target; NaN (nothing measured) never does. */
export function meets(value: number, op: TargetOp, target: number): boolean {
  return op === '>=' ? value >= target : op === '<=' ? value <= target : value === target;
}

/**
 * result prints one figure with its target and returns whether it met it.
 * A MISS fails the bench: it sets process.exitCode to 1.
 */
export function result(name: string, value: number, unit: string, op: TargetOp, target: number): boolean {
  const pass = meets(value, op, target);
  console.log(formatResult({ name, value, unit, target: { op, value: target }, verdict: pass ? 'PASS' : 'MISS' }));
  if (!pass) process.exitCode = 1;
  return pass;
}

/** report prints a figure that has no target (a size, a comparison, a context figure): no verdict. */
export function report(name: string, value: number, unit: string): void {
  console.log(formatResult({ name, value, unit, verdict: 'reported' }));
}

export function formatResult(r: ResultLine): string {
  if (r.name === '' || /\s/.test(r.name)) throw new Error(`RESULT name "${r.name}" must be one word, e.g. queue.cycle`);
  if (r.unit.trim() === '') throw new Error(`RESULT ${r.name}: give a unit, e.g. ms or x`);
  if (r.verdict === 'reported') {
    if (r.target) throw new Error(`RESULT ${r.name}: a reported figure has no target; use result() to judge it`);
    return `RESULT ${r.name} ${format(r.value)} ${r.unit} reported`;
  }
  if (!r.target) throw new Error(`RESULT ${r.name}: a ${r.verdict} needs a target; use report() for a figure without`);
  const { op, value: target } = r.target;
  const targetText = Number(format(target)) === target ? format(target) : String(target);
  return `RESULT ${r.name} ${formatAgainst(r.value, r.target)} ${r.unit} target ${op} ${targetText} ${r.verdict}`;
}

/**
 * formatAgainst prints a judged value with the digits that show which side of its target it is on: 1.0004
 * against <= 1 prints 1.0004, not 1.00 beside a MISS. Rounding that keeps the side prints as format does;
 * a value within rounding of its target prints whole (String(v) reads back as the same number). The target
 * itself prints whole when rounding would change it.
 */
function formatAgainst(v: number, target: { op: TargetOp; value: number }): string {
  const pass = meets(v, target.op, target.value);
  const sideOf = (text: string) => meets(Number(text), target.op, target.value) === pass;
  let text = format(v);
  for (let digits = 3; digits <= 6 && !sideOf(text); digits++) text = String(Number(v.toPrecision(digits)));
  return sideOf(text) ? text : String(v);
}

/**
 * parseResult reads one output line: undefined when it is not a RESULT line,
 * an Error naming what is wrong when it is one but not in the format above.
 */
export function parseResult(line: string): ResultLine | Error | undefined {
  const text = line.trim();
  if (!text.startsWith('RESULT ')) return undefined;
  const bad = (why: string) =>
    new Error(`malformed RESULT line (${why}): "${text}"; print it with result() or report() from bench/report.ts`);
  const w = text.split(/\s+/);
  if (w.length < 5) return bad('expected RESULT <name> <value> <unit> and a verdict');
  const [, name, rawValue] = w as [string, string, string];
  const value = Number(rawValue);
  if (rawValue !== 'NaN' && Number.isNaN(value)) return bad(`the value "${rawValue}" is not a number`);
  const verdict = w.at(-1)!;
  if (verdict === 'reported') {
    if (w.includes('target')) return bad('a reported figure has no target');
    return { name, value, unit: w.slice(3, -1).join(' '), verdict };
  }
  if (verdict !== 'PASS' && verdict !== 'MISS') return bad(`"${verdict}" is not PASS, MISS or reported`);
  if (w.at(-2) === 'reported') return bad(`a figure without a target ends with "reported" and has no verdict`);
  if (w.length < 8 || w.at(-4) !== 'target') return bad(`a ${verdict} needs "target <op> <value>" before it`);
  const op = w.at(-3)!;
  if (!OPS.includes(op)) return bad(`"${op}" is not one of ${OPS.join(' ')}`);
  const target = Number(w.at(-2));
  if (Number.isNaN(target)) return bad(`the target "${w.at(-2)}" is not a number`);
  return { name, value, unit: w.slice(3, -4).join(' '), target: { op: op as TargetOp, value: target }, verdict };
}

function format(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** The nearest-rank percentile of an ascending array, the one the demo's latency figures use. */
export { percentile };

/**
 * pooledPercentile is the percentile p over every sample of every round,
 * the figure to judge: a tail that shows in one round is part of the tail a
 * user meets, where the median of the rounds' own percentiles drops it. Each
 * round's own percentile is returned for the spread printed beside it.
 */
export function pooledPercentile(
  rounds: readonly (readonly number[])[],
  p: number,
): { pooled: number; perRound: number[] } {
  const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
  return { pooled: percentile(sorted(rounds.flat()), p), perRound: rounds.map((r) => percentile(sorted(r), p)) };
}

export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc (npm run bench does)');
  g();
  g();
}
