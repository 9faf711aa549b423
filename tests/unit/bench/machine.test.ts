import { describe, expect, it } from 'vitest';
import { formatMachine, probeMachine, randomCycle, readNs } from '@/bench/machine';

describe('the machine probe', () => {
  it('chases a single cycle through every slot', () => {
    for (const n of [2, 3, 17, 1000, 4096]) {
      const next = randomCycle(n);
      const seen = new Uint8Array(n);
      let p = 0;
      for (let i = 0; i < n; i++) {
        expect(seen[p]).toBe(0);
        seen[p] = 1;
        p = next[p]!;
      }
      // Back at the start after n reads, having seen every slot once: one cycle, no shorter loop.
      expect(p).toBe(0);
      expect(seen.every((v) => v === 1)).toBe(true);
    }
  });

  it('is the same cycle on every run, and another for another seed', () => {
    expect(randomCycle(1000)).toEqual(randomCycle(1000));
    expect(randomCycle(1000, 7)).not.toEqual(randomCycle(1000));
  });

  it('times reads over each working set asked for', () => {
    const r = probeMachine([64 * 1024, 1 << 20], 4096);
    expect(r.reads.map((x) => x.bytes)).toEqual([64 * 1024, 1 << 20]);
    for (const { ns } of r.reads) expect(ns).toBeGreaterThan(0);
    for (const { ns } of r.reads) expect(Number.isFinite(ns)).toBe(true);
    expect(r.cpus).toBeGreaterThan(0);
  });

  it('refuses a working set that is not a whole number of bytes', () => {
    expect(() => readNs(0)).toThrow(/bytes must be a whole number from 4 up, got 0/);
    expect(() => readNs(1.5)).toThrow(/got 1.5/);
  });

  it('prints sizes in KB and MB, and short times with a decimal', () => {
    const line = formatMachine({
      reads: [
        { bytes: 256 * 1024, ns: 7.34 },
        { bytes: 4 << 20, ns: 176.6 },
      ],
      load: 0.689,
      cpus: 2,
      model: 'AMD EPYC',
    });
    expect(line).toBe('== machine: random reads 256 KB 7.3 ns, 4 MB 177 ns; load 0.69; 2 × AMD EPYC');
  });
});
