/**
 * result prints one benchmark figure in the RESULT line format of DESIGN.md
 * and returns whether it met its target.
 */
export type TargetOp = '>=' | '<=' | '==';

export function result(name: string, value: number, unit: string, op: TargetOp, target: number): boolean {
  const pass = op === '>=' ? value >= target : op === '<=' ? value <= target : value === target;
  console.log(`RESULT ${name} ${format(value)} ${unit} target ${op} ${format(target)} ${pass ? 'PASS' : 'MISS'}`);
  return pass;
}

/** report prints a figure that has no target (informational, e.g. a size or a comparison). */
export function report(name: string, value: number, unit: string): void {
  console.log(`RESULT ${name} ${format(value)} ${unit} target reported PASS`);
}

function format(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc (npm run bench does)');
  g();
  g();
}
