import { describe, expect, it } from 'vitest';
import { sampleProcess } from '@/bench/peer/process-meter';

describe('sampleProcess', () => {
  it("splits the main thread's CPU from the whole process's, and counts work done on the main thread", () => {
    const before = sampleProcess(process.pid)!;
    // Spin on this thread until the process has used 300 ms more CPU, however much of a core it gets.
    const start = process.cpuUsage();
    const deadline = performance.now() + 10_000;
    let used = 0;
    while (used < 300_000 && performance.now() < deadline) {
      const c = process.cpuUsage(start);
      used = c.user + c.system;
    }
    const after = sampleProcess(process.pid)!;
    expect(used).toBeGreaterThanOrEqual(300_000);
    expect(after.mainThreadCpuSeconds).toBeLessThanOrEqual(after.cpuSeconds);
    // Nearly all of it on the main thread, where the spin ran (the kernel counts in ticks of 10 ms).
    expect(after.mainThreadCpuSeconds - before.mainThreadCpuSeconds).toBeGreaterThanOrEqual(0.2);
    expect(after.peakRssBytes).toBeGreaterThanOrEqual(after.rssBytes);
  });

  it('says undefined of a process that is gone', () => {
    expect(sampleProcess(2 ** 22 + 1)).toBeUndefined();
  });
});
