import { pooledPercentile } from '../report';

/** One implementation's latencies in one round, ms (censored when Apps were left unresolved). */
export interface RoundLatencies {
  implementation: string;
  latencies: readonly number[];
}

export interface LatencyRatio {
  /** The judged figure: ours ÷ theirs, each percentile under 1 ms counted as 1 ms (the clock's resolution). */
  ratio: number;
  ours: number;
  theirs: number;
  /** Each paired round's own ratio, for the spread printed beside the judged one. */
  perRound: number[];
  rounds: number;
}

/**
 * latencyRatio is implementation `of`'s percentile p over every App of every
 * round ÷ `other`'s, over the rounds in which both ran. A percentile pooled
 * over the rounds keeps a tail that shows in one round; the median of the
 * rounds' own p99s, each the 10th-slowest of 1,000 Apps, is decided by which
 * round met a stall of the machine.
 */
export function latencyRatio(
  rounds: readonly (readonly RoundLatencies[])[],
  of: string,
  other: string,
  p: number,
): LatencyRatio {
  const ours: (readonly number[])[] = [];
  const theirs: (readonly number[])[] = [];
  for (const round of rounds) {
    const a = round.find((f) => f.implementation === of);
    const b = round.find((f) => f.implementation === other);
    if (!a || !b) continue;
    ours.push(a.latencies);
    theirs.push(b.latencies);
  }
  const a = pooledPercentile(ours, p);
  const b = pooledPercentile(theirs, p);
  const ratio = (x: number, y: number) => Math.max(x, 1) / Math.max(y, 1);
  return {
    ratio: ratio(a.pooled, b.pooled),
    ours: a.pooled,
    theirs: b.pooled,
    perRound: a.perRound.map((x, i) => ratio(x, b.perRound[i]!)),
    rounds: ours.length,
  };
}
