import { describe, expect, it } from 'vitest';
import { sampleProcess } from '@/bench/peer/process-meter';

describe('sampleProcess', () => {
  it("splits the main thread's CPU from the whole process's, and counts work done on the main thread", () => {
    const before = sampleProcess(process.pid)!;
    const until = performance.now() + 150;
    let spins = 0;
    while (performance.now() < until) spins++;
    const after = sampleProcess(process.pid)!;
    expect(spins).toBeGreaterThan(0);
    expect(after.mainThreadCpuSeconds).toBeGreaterThan(0);
    expect(after.mainThreadCpuSeconds).toBeLessThanOrEqual(after.cpuSeconds);
    // 150 ms of spinning on this thread; the kernel counts in ticks of 10 ms.
    expect(after.mainThreadCpuSeconds - before.mainThreadCpuSeconds).toBeGreaterThanOrEqual(0.1);
    expect(after.peakRssBytes).toBeGreaterThanOrEqual(after.rssBytes);
  });

  it('says undefined of a process that is gone', () => {
    expect(sampleProcess(2 ** 22 + 1)).toBeUndefined();
  });
});
