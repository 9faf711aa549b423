import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  formatResult,
  meets,
  parseResult,
  pooledPercentile,
  report,
  result,
  type ResultLine,
  type TargetOp,
} from '@/bench/report';

let printed: string[];
let exitCode: typeof process.exitCode;
beforeEach(() => {
  printed = [];
  exitCode = process.exitCode;
  process.exitCode = undefined;
  vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = exitCode;
});

describe('result', () => {
  it('prints PASS for a met target and leaves the exit code alone', () => {
    expect(result('registry.setReferences', 812345, 'calls/s', '>=', 500000)).toBe(true);
    expect(printed).toEqual(['RESULT registry.setReferences 812345 calls/s target >= 500000 PASS']);
    expect(process.exitCode).toBeUndefined();
  });

  it('prints MISS for a missed target and fails the process', () => {
    expect(result('faults.gone.lost', 2, 'apps', '==', 0)).toBe(false);
    expect(printed).toEqual(['RESULT faults.gone.lost 2 apps target == 0 MISS']);
    expect(process.exitCode).toBe(1);
  });

  it('judges a figure that measured nothing (NaN) as a MISS', () => {
    expect(result('resolution.watch.p50', NaN, 'ms', '<=', 20)).toBe(false);
    expect(printed).toEqual(['RESULT resolution.watch.p50 NaN ms target <= 20 MISS']);
    expect(process.exitCode).toBe(1);
  });

  it('judges the exact value, whatever it prints as', () => {
    expect(result('lib.rss.ratio', 1.0004, 'x', '<=', 1)).toBe(false);
    expect(result('lib.rss.ratio', 1, 'x', '<=', 1)).toBe(true);
  });

  it('prints a judged value with the digits that show its side of the target', () => {
    result('peer.ratio.requestsPerApp', 20004 / 20000, 'x', '<=', 1);
    result('select.cpuPerChange', 20.004, 'µs', '<=', 20);
    result('registry.setReferences', 499999.6, 'calls/s', '>=', 500000);
    result('select.wake', 4.996, 'ms(p99)', '<=', 5);
    result('kube.ratio', 1.234, 'x', '<=', 2);
    expect(printed).toEqual([
      'RESULT peer.ratio.requestsPerApp 1.0002 x target <= 1 MISS',
      'RESULT select.cpuPerChange 20.004 µs target <= 20 MISS',
      'RESULT registry.setReferences 499999.6 calls/s target >= 500000 MISS',
      'RESULT select.wake 5.00 ms(p99) target <= 5 PASS',
      'RESULT kube.ratio 1.23 x target <= 2 PASS',
    ]);
    for (const line of printed) {
      const r = parseResult(line) as ResultLine;
      expect(r.verdict === 'PASS').toBe(meets(r.value, r.target!.op, r.target!.value));
    }
  });

  it('reads back with the verdict it printed, whatever the digits of the value and of the target', () => {
    const cases: [number, TargetOp, number][] = [
      [0.1 + 0.2, '<=', 0.3],
      [0.1 + 0.2, '==', 0.3],
      [1.0000000000000002, '<=', 1],
      [2.871 / 2.61, '<=', 1.1],
      [2.348, '<=', 2.345],
      [1.0045, '>=', 1.005],
      [1.23456, '==', 1.23456],
      [-0.5, '>=', 0],
      [NaN, '<=', 1],
      [Infinity, '<=', 1],
    ];
    for (const [value, op, target] of cases) result('x.y', value, 'x', op, target);
    expect(printed).toHaveLength(cases.length);
    printed.forEach((line, i) => {
      const r = parseResult(line) as ResultLine;
      const [value, op, target] = cases[i]!;
      expect(r.target).toEqual({ op, value: target });
      expect(r.verdict).toBe(meets(value, op, target) ? 'PASS' : 'MISS');
      expect(meets(r.value, op, target)).toBe(meets(value, op, target));
    });
  });
});

describe('report', () => {
  it('prints a figure without a target with no verdict and never fails the process', () => {
    report('api.snapshot.bytes', 1234, 'bytes');
    report('resolution.backoff.p50', NaN, 'ms');
    expect(printed).toEqual([
      'RESULT api.snapshot.bytes 1234 bytes reported',
      'RESULT resolution.backoff.p50 NaN ms reported',
    ]);
    expect(printed.join('\n')).not.toMatch(/PASS|MISS|target/);
    expect(process.exitCode).toBeUndefined();
  });
});

describe('formatResult', () => {
  it('refuses a name with a space, a missing unit, and a verdict that does not fit its target', () => {
    expect(() => formatResult({ name: 'queue cycle', value: 1, unit: 'x', verdict: 'reported' })).toThrow(/one word/);
    expect(() => formatResult({ name: 'queue.cycle', value: 1, unit: ' ', verdict: 'reported' })).toThrow(/unit/);
    expect(() => formatResult({ name: 'q', value: 1, unit: 'x', verdict: 'PASS' })).toThrow(/needs a target/);
    expect(() =>
      formatResult({ name: 'q', value: 1, unit: 'x', target: { op: '<=', value: 1 }, verdict: 'reported' }),
    ).toThrow(/has no target/);
  });
});

describe('parseResult', () => {
  const cases: ResultLine[] = [
    { name: 'queue.cycle', value: 1234567, unit: 'cycles/s', target: { op: '>=', value: 1000000 }, verdict: 'PASS' },
    { name: 'faults.rbac.lost', value: 3, unit: 'apps', target: { op: '==', value: 0 }, verdict: 'MISS' },
    {
      name: 'ui.statusBatch',
      value: 12.5,
      unit: 'ms(max per frame)',
      target: { op: '<=', value: 50 },
      verdict: 'PASS',
    },
    { name: 'soak.heapSlopeMBPerHour', value: -24.41, unit: 'MB/h', verdict: 'reported' },
  ];
  it.each(cases)('reads back what formatResult prints: $name', (line) => {
    expect(parseResult(formatResult(line))).toEqual(line);
  });

  it('ignores lines that are not RESULT lines', () => {
    expect(parseResult('rounds: 1 2 3 cycles/s')).toBeUndefined();
    expect(parseResult('SKIPPED: bench kube (real): no Go')).toBeUndefined();
  });

  it.each([
    ['RESULT soak.runs 234 runs target reported PASS', /without a target ends with "reported" and has no verdict/],
    ['RESULT soak.runs 234 runs target >= 1 reported', /reported figure has no target/],
    ['RESULT queue.cycle 12 cycles/s PASS', /needs "target <op> <value>"/],
    ['RESULT queue.cycle 12 cycles/s target ~ 10 PASS', /"~" is not one of/],
    ['RESULT queue.cycle fast cycles/s target >= 10 PASS', /"fast" is not a number/],
    ['RESULT queue.cycle 12 cycles/s target >= 10 OK', /"OK" is not PASS, MISS or reported/],
    ['RESULT queue.cycle 12', /expected RESULT <name> <value> <unit>/],
  ])('names what is wrong in a malformed line: %s', (line, why) => {
    const r = parseResult(line);
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toMatch(why);
    expect((r as Error).message).toMatch(/bench\/report\.ts/);
  });
});

describe('pooledPercentile', () => {
  it('judges the p99 of every sample, so one round with a slow tail is not voted away by the others', () => {
    const steady = Array.from({ length: 100 }, () => 1);
    const slow = [...Array.from({ length: 90 }, () => 1), ...Array.from({ length: 10 }, () => 50)];
    const rounds = [steady, slow, steady, steady, steady];
    const { pooled, perRound } = pooledPercentile(rounds, 99);
    // 10 slow samples of 500 are 2% of them: the p99 of all samples is slow.
    expect(pooled).toBe(50);
    // The rounds' own p99s give the spread; their median (1) is what the changelog bench used to judge.
    expect(perRound).toEqual([1, 50, 1, 1, 1]);
  });

  it('leaves the rounds as they were', () => {
    const rounds = [[3, 1, 2]];
    pooledPercentile(rounds, 50);
    expect(rounds).toEqual([[3, 1, 2]]);
  });
});
