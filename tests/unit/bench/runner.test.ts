import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MachineReading } from '@/bench/machine';
import { discover, failures, main as runMain, plan, REAL_ONLY, runBench, type Outcome } from '@/bench/runner';

const fixtures = path.resolve(import.meta.dirname, '../../fixtures/bench');
const benchDir = path.resolve(import.meta.dirname, '../../../bench');
const env = { ...process.env, REFWATCH_BENCH_REAL: undefined };
const realEnv = { ...process.env, REFWATCH_BENCH_REAL: '1' };

/** A reading of the machine that takes no time: the runner's own probe is bench/machine.ts's, tested there. */
const reading: MachineReading = { reads: [{ bytes: 4 << 20, ns: 170 }], load: 0.5, cpus: 2, model: 'Test CPU' };
let probes = 0;
const main = (argv: string[], e: NodeJS.ProcessEnv, dir: string) =>
  runMain(argv, e, dir, () => {
    probes++;
    return reading;
  });

// The runner passes the benches' output through; keep it out of the test's.
let out: string[];
beforeEach(() => {
  out = [];
  probes = 0;
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  vi.spyOn(console, 'error').mockImplementation((line: string) => void out.push(line));
});
afterEach(() => vi.restoreAllMocks());

const outcome = (o: Partial<Outcome>): Outcome => ({
  name: 'fake',
  exit: 0,
  results: [{ name: 'fake.x', value: 1, unit: 'x', target: { op: '<=', value: 1 }, verdict: 'PASS' }],
  malformed: [],
  skipped: [],
  ...o,
});

describe('plan', () => {
  it('finds every benchmark in bench/, the helpers aside', () => {
    const all = discover(benchDir);
    expect(all).toEqual(expect.arrayContaining(['changelog', 'queue', 'peer', 'faults', 'wire']));
    expect(all).not.toEqual(expect.arrayContaining(['run']));
    for (const helper of ['run', 'runner', 'report', 'real', 'soak']) expect(all).not.toContain(helper);
  });

  it('leaves the real-only benchmarks out of the full run, saying how to run them', () => {
    const p = plan(['peer', 'queue', 'faults'], [], env);
    expect(p.run).toEqual(['queue']);
    expect(p.notRun.map((n) => n.name)).toEqual(['peer', 'faults']);
    expect(p.notRun[0]!.why).toMatch(/REFWATCH_BENCH_REAL=1/);
  });

  it('runs the peer comparison and the faults in the full run under REFWATCH_BENCH_REAL=1', () => {
    const all = discover(benchDir);
    const p = plan(all, [], realEnv);
    expect(p.run).toEqual(all);
    for (const name of REAL_ONLY) expect(p.run).toContain(name);
    expect(p.notRun).toEqual([]);
  });

  it('runs a named benchmark, and refuses an unknown name with the choices', () => {
    expect(plan(['peer', 'queue'], ['peer'], env).run).toEqual(['peer']);
    expect(() => plan(['peer', 'queue'], ['qeueu'], env)).toThrow(
      'no benchmark named "qeueu"; choose one of: peer, queue',
    );
  });
});

describe('failures', () => {
  it('passes a benchmark whose targets are met and whose other figures are reported', () => {
    const reported = { name: 'fake.bytes', value: 9, unit: 'B', verdict: 'reported' as const };
    expect(failures(outcome({ results: [...outcome({}).results, reported] }), env)).toEqual([]);
    expect(failures(outcome({ results: [reported] }), env)).toEqual([]);
  });

  it('fails a MISS even when the process exited 0', () => {
    const miss = {
      name: 'fake.lost',
      value: 1,
      unit: 'apps',
      target: { op: '==' as const, value: 0 },
      verdict: 'MISS' as const,
    };
    expect(failures(outcome({ results: [miss] }), env)).toEqual(['1 target(s) missed: fake.lost']);
  });

  it('fails a crash, a malformed line and a run that measured nothing', () => {
    expect(failures(outcome({ exit: 1 }), env)).toEqual(['exited with 1']);
    expect(failures(outcome({ exit: 'SIGKILL', results: [] }), env)).toEqual(['exited with SIGKILL']);
    expect(failures(outcome({ malformed: [new Error('malformed RESULT line')] }), env)).toEqual([
      'malformed RESULT line',
    ]);
    expect(failures(outcome({ results: [] }), env)).toEqual(['printed no RESULT line']);
  });

  it('fails a SKIPPED line only under REFWATCH_BENCH_REAL=1', () => {
    const skipped = ['SKIPPED: bench kube (real): no Go toolchain on PATH'];
    expect(failures(outcome({ skipped }), env)).toEqual([]);
    expect(failures(outcome({ skipped }), realEnv)).toEqual([
      'under REFWATCH_BENCH_REAL=1 a skip is a failure: SKIPPED: bench kube (real): no Go toolchain on PATH',
    ]);
  });
});

describe('npm run bench on fake benchmarks', { timeout: 120_000 }, () => {
  it('exits 0 when every target is met, and passes the output through', async () => {
    expect(await main(['pass', 'reported', 'folder'], env, fixtures)).toBe(0);
    expect(out.join('')).toContain('RESULT fake.pass 2 x target <= 3 PASS');
    expect(out.join('')).toContain('RESULT fake.bytes 1234 bytes reported');
    expect(out.join('')).toContain('== all 3 benchmarks passed');
  });

  it('reads the machine before each benchmark and prints it under its header', async () => {
    expect(await main(['pass', 'reported'], env, fixtures)).toBe(0);
    expect(probes).toBe(2);
    const machine = '== machine: random reads 4 MB 170 ns; load 0.50; 2 × Test CPU';
    for (const name of ['pass', 'reported']) {
      const header = out.indexOf(`== bench ${name}`);
      expect(header).toBeGreaterThanOrEqual(0);
      expect(out[header + 1]).toBe(machine);
    }
  });

  it('exits non-zero when a benchmark misses a target, and the benchmark itself exits 1', async () => {
    const o = await runBench(fixtures, 'miss', env);
    expect(o.exit).toBe(1);
    expect(o.results.map((r) => `${r.name} ${r.verdict}`)).toEqual(['fake.met PASS', 'fake.lost MISS']);
    expect(await main(['pass', 'miss'], env, fixtures)).toBe(1);
    expect(out.join('\n')).toMatch(/bench miss FAILED: exited with 1; 1 target\(s\) missed: fake.lost/);
    expect(out.join('\n')).toContain('== 1 of 2 benchmark(s) failed: miss');
  });

  it('exits non-zero for a MISS printed by hand in a process that exits 0', async () => {
    expect(await main(['hand-miss'], env, fixtures)).toBe(1);
    expect(out.join('\n')).toMatch(/bench hand-miss FAILED: 1 target\(s\) missed: fake.hand/);
  });

  it('exits non-zero for the old "target reported PASS" form and for a bench that prints no RESULT', async () => {
    expect(await main(['malformed'], env, fixtures)).toBe(1);
    expect(out.join('\n')).toMatch(
      /malformed RESULT line \(a figure without a target ends with "reported" and has no verdict\)/,
    );
    expect(await main(['silent'], env, fixtures)).toBe(1);
    expect(out.join('\n')).toMatch(/bench silent FAILED: printed no RESULT line/);
  });

  it('fails a skip under REFWATCH_BENCH_REAL=1 and not without it', async () => {
    expect(await main(['skipped'], env, fixtures)).toBe(0);
    expect(await main(['skipped'], realEnv, fixtures)).toBe(1);
    expect(out.join('\n')).toMatch(/under REFWATCH_BENCH_REAL=1 a skip is a failure: SKIPPED: bench fake \(real\)/);
  });

  it('exits 2 for an unknown name', async () => {
    expect(await main(['nope'], env, fixtures)).toBe(2);
    expect(out.join('\n')).toMatch(/no benchmark named "nope"; choose one of: .*hand-miss/);
  });
});
