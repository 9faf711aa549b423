import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { formatMachine, probeMachine, type MachineReading } from './machine';
import { parseResult, type ResultLine } from './report';

/** Files in bench/ that are the runner's or shared by the benches, not benchmarks. */
const HELPERS = new Set(['run.ts', 'runner.ts', 'report.ts', 'real.ts', 'machine.ts']);

/** Benchmarks that need a real kube-apiserver (tens of minutes): run when named, or by the full run under REFWATCH_BENCH_REAL=1. */
export const REAL_ONLY: ReadonlySet<string> = new Set(['peer', 'faults', 'scale']);

/** discover lists the benchmarks in dir: NAME.ts, or NAME/bench.ts for a benchmark with a folder of its own. */
export function discover(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isFile() && e.name.endsWith('.ts') && !HELPERS.has(e.name)
        ? [e.name.slice(0, -3)]
        : e.isDirectory() && existsSync(path.join(dir, e.name, 'bench.ts'))
          ? [e.name]
          : [],
    )
    .sort();
}

export function entry(dir: string, name: string): string {
  return existsSync(path.join(dir, `${name}.ts`)) ? path.join(dir, `${name}.ts`) : path.join(dir, name, 'bench.ts');
}

export interface Plan {
  run: string[];
  /** Benchmarks the full run leaves out, with the reason it prints. */
  notRun: { name: string; why: string }[];
}

/** plan picks what to run: the names given, else every benchmark, the real-only ones only under REFWATCH_BENCH_REAL=1. */
export function plan(all: string[], names: string[], env: NodeJS.ProcessEnv): Plan {
  for (const n of names) {
    if (!all.includes(n)) throw new Error(`no benchmark named "${n}"; choose one of: ${all.join(', ')}`);
  }
  if (names.length) return { run: names, notRun: [] };
  const real = env.REFWATCH_BENCH_REAL === '1';
  return {
    run: all.filter((n) => real || !REAL_ONLY.has(n)),
    notRun: real
      ? []
      : all
          .filter((n) => REAL_ONLY.has(n))
          .map((name) => ({
            name,
            why: `it needs a real kube-apiserver; run npm run bench -- ${name}, or set REFWATCH_BENCH_REAL=1`,
          })),
  };
}

/** What one benchmark's process did: its exit, its RESULT lines and the lines that say it measured less than asked. */
export interface Outcome {
  name: string;
  exit: number | string;
  results: ResultLine[];
  malformed: Error[];
  skipped: string[];
}

/**
 * failures are the reasons a benchmark fails, none when it passed. A MISS
 * fails it even when its process exited 0, so does a RESULT line not printed
 * by bench/report.ts, a run that measured nothing, and, under
 * REFWATCH_BENCH_REAL=1, a SKIPPED line: that flag asks for the real
 * cluster, so a part that could not start it did not run what was asked.
 */
export function failures(o: Outcome, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  if (o.exit !== 0) out.push(`exited with ${o.exit}`);
  const missed = o.results.filter((r) => r.verdict === 'MISS');
  if (missed.length) out.push(`${missed.length} target(s) missed: ${missed.map((r) => r.name).join(', ')}`);
  for (const e of o.malformed) out.push(e.message);
  if (o.results.length === 0 && o.exit === 0) out.push('printed no RESULT line');
  if (env.REFWATCH_BENCH_REAL === '1')
    for (const s of o.skipped) out.push(`under REFWATCH_BENCH_REAL=1 a skip is a failure: ${s}`);
  return out;
}

/**
 * runBench runs one benchmark in a process of its own, passing its output
 * through and reading its stdout as it goes; stderr stays the terminal's, so
 * logs keep the format they choose for one.
 */
export async function runBench(dir: string, name: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const o: Outcome = { name, exit: 0, results: [], malformed: [], skipped: [] };
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--conditions=react-server', '--import', 'tsx', entry(dir, name)],
    {
      stdio: ['inherit', 'pipe', 'inherit'],
      env,
    },
  );
  const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  lines.on('line', (line) => {
    process.stdout.write(`${line}\n`);
    const r = parseResult(line);
    if (r instanceof Error) o.malformed.push(r);
    else if (r) o.results.push(r);
    if (line.trimStart().startsWith('SKIPPED:')) o.skipped.push(line.trim());
  });
  const [exit] = await Promise.all([
    new Promise<number | string>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve(code ?? signal ?? 'an unknown status'));
    }),
    new Promise((resolve) => lines.on('close', resolve)),
  ]);
  o.exit = exit;
  return o;
}

/**
 * main runs the benchmarks named in argv (all when none) from dir, and returns the process's exit code. Before
 * each it prints a reading of the machine (bench/machine.ts), taken while nothing else of the run is running:
 * a figure's bench is then read with the machine it ran on.
 */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  dir: string,
  probe: () => MachineReading = probeMachine,
): Promise<number> {
  const names = argv.filter((a) => !a.startsWith('-'));
  let p: Plan;
  try {
    p = plan(discover(dir), names, env);
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    return 2;
  }
  const failed: string[] = [];
  for (const { name, why } of p.notRun) console.log(`== bench ${name} not run: ${why}`);
  for (const name of p.run) {
    console.log(`== bench ${name}`);
    console.log(formatMachine(probe()));
    const reasons = failures(await runBench(dir, name, env), env);
    if (reasons.length) {
      failed.push(name);
      console.error(`bench ${name} FAILED: ${reasons.join('; ')}`);
    }
  }
  if (p.run.length > 1 || failed.length)
    console.log(
      failed.length
        ? `== ${failed.length} of ${p.run.length} benchmark(s) failed: ${failed.join(', ')}`
        : `== all ${p.run.length} benchmarks passed`,
    );
  return failed.length ? 1 : 0;
}
