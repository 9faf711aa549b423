import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { browserCpuMs, topSelfTime, type CpuProfile } from '../../../bench/browser/profile';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });

describe('topSelfTime', () => {
  it('sums the samples of each function and lists the largest first, with its share', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)') },
        { id: 2, callFrame: frame('layout', 'http://x/_next/static/chunks/a.js', 9) },
        { id: 3, callFrame: frame('') },
      ],
      samples: [2, 3, 2, 2],
      timeDeltas: [1000, 1000, 2000, 4000],
    };
    expect(topSelfTime(profile, 5)).toEqual([
      '     7 ms  87.5%  layout  static/chunks/a.js:10:1',
      '     1 ms  12.5%  (anonymous)  ',
    ]);
    expect(topSelfTime(profile, 1)).toHaveLength(1);
  });
});

describe('browserCpuMs', () => {
  it("counts the CPU time of this process's children", async () => {
    const before = browserCpuMs()!;
    // A child that spins for about 300 ms of CPU, then waits to be read before it exits.
    const child = spawn(process.execPath, [
      '-e',
      'const end = Date.now() + 300; while (Date.now() < end); setTimeout(() => {}, 10_000)',
    ]);
    try {
      let after = before;
      for (let i = 0; i < 100 && after - before < 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = browserCpuMs()!;
      }
      expect(after - before).toBeGreaterThanOrEqual(200);
    } finally {
      child.kill();
    }
  });
});
