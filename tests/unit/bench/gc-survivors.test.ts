import { describe, expect, it } from 'vitest';
import { survivorsByImplementation } from '@/bench/peer/gc-survivors';

const nvp = (impl: string, ms: number, fields: string) =>
  `  [${impl}] [3666:0x21c05930]       ${ms} ms: pause=0.7 mutator=40.5 gc=s reduce_memory=0 ${fields} nodes_promoted=7 unmapper_chunks=0`;

describe('survivorsByImplementation', () => {
  it('sums promoted and copied bytes per implementation, apart for the first 2.5 s, and the largest allocation', () => {
    const log = [
      nvp('refwatch', 900, 'allocated=5000 promoted=100 new_space_survived=200'),
      'some other stderr line',
      nvp('node-floor', 1000, 'allocated=3000 promoted=10 new_space_survived=20'),
      nvp('refwatch', 3000, 'allocated=9000 promoted=1000 new_space_survived=2000'),
    ].join('\n');
    const s = survivorsByImplementation(log);
    expect(s.get('refwatch')).toEqual({
      collections: 2,
      survived: 3300,
      survivedAtStart: 300,
      largestAllocation: 9000,
    });
    expect(s.get('node-floor')).toEqual({ collections: 1, survived: 30, survivedAtStart: 30, largestAllocation: 3000 });
  });

  it('finds nothing in a log without --trace-gc-nvp lines', () => {
    expect(survivorsByImplementation('  [refwatch] ready\nround 1 refwatch p50 3').size).toBe(0);
  });
});
