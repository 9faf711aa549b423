import { describe, expect, it } from 'vitest';
import { latencyRatio, type RoundLatencies } from '@/bench/peer/latency-ratio';

/** n Apps of `ms` each, then `slow` Apps of `stall` ms: one round of one implementation. */
function run(implementation: string, n: number, ms: number, slow = 0, stall = 0): RoundLatencies {
  return { implementation, latencies: [...Array<number>(n).fill(ms), ...Array<number>(slow).fill(stall)] };
}

describe('latencyRatio', () => {
  it("judges the p99 over every App of every round, so one round's stall is not dropped", () => {
    // refwatch stalls for 4% of one round's Apps, 1.3% of all of them: the pooled p99 is the stall, the median of the
    // rounds' own p99s would not be.
    const rounds = [
      [run('refwatch', 990, 10, 40, 500), run('cr-watch', 1030, 20)],
      [run('refwatch', 1030, 10), run('cr-watch', 1030, 20)],
      [run('refwatch', 1030, 10), run('cr-watch', 1030, 20)],
    ];
    const r = latencyRatio(rounds, 'refwatch', 'cr-watch', 99);
    expect(r).toMatchObject({ ours: 500, theirs: 20, ratio: 25, perRound: [25, 0.5, 0.5], rounds: 3 });
  });

  it('leaves out a round in which either implementation did not run', () => {
    const rounds = [
      [run('refwatch', 100, 10), run('cr-watch', 100, 20)],
      [run('refwatch', 100, 900)],
      [run('cr-watch', 100, 1)],
    ];
    expect(latencyRatio(rounds, 'refwatch', 'cr-watch', 50)).toMatchObject({ ratio: 0.5, rounds: 1 });
  });

  it('counts a percentile under 1 ms as 1 ms, the resolution of the clock', () => {
    const rounds = [[run('refwatch', 100, 0), run('cr-watch', 100, 0)]];
    expect(latencyRatio(rounds, 'refwatch', 'cr-watch', 50).ratio).toBe(1);
  });

  it('has no ratio without a paired round', () => {
    expect(latencyRatio([[run('refwatch', 10, 1)]], 'refwatch', 'cr-watch', 99).ratio).toBeNaN();
  });
});
