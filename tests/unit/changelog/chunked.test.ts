import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ChunkedArray, ChunkedInts } from '@/lib/changelog/chunked';

/** Runs a generator's steps to its value, counting them. */
function run<T>(steps: Generator<void, T>): { value: T; steps: number } {
  let n = 0;
  for (;;) {
    const r = steps.next();
    if (r.done) return { value: r.value, steps: n };
    n++;
  }
}

describe('ChunkedArray', () => {
  it('holds what was pushed, in order, across chunks made at their size and a last one part full', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.string(), { maxLength: 60 }), (chunk, values) => {
        const a = new ChunkedArray<string>(chunk);
        values.forEach((v, i) => expect(a.push(v)).toBe(i + 1));
        expect(a.length).toBe(values.length);
        expect(values.map((_, i) => a.at(i))).toEqual(values);
        expect([...a]).toEqual(values);
        const { value, steps } = run(a.toArray());
        expect(value).toEqual(values);
        expect(value).toHaveLength(values.length);
        // A step after each chunk copied; one chunk or none is handed back as it is, with no step.
        const chunks = Math.ceil(values.length / chunk);
        expect(steps).toBe(chunks <= 1 ? 0 : chunks);
      }),
      { numRuns: 300 },
    );
  });

  it('gives back no holes of a chunk made at its full size', () => {
    const a = new ChunkedArray<number>(1000);
    for (let i = 0; i < 1001; i++) a.push(i);
    const { value } = run(a.toArray());
    expect(value).toHaveLength(1001);
    expect(value.every((v, i) => v === i)).toBe(true);
    // Iterated, the chunk made at its full size gives its values only, not its empty slots.
    expect([...a]).toEqual(value);
  });
});

describe('ChunkedInts', () => {
  it('keeps 32-bit integers across chunks, and sets them in place', () => {
    const ints = new ChunkedInts();
    const n = 200_000;
    const lengths = Array.from({ length: n }, (_, i) => ints.push(i * 3 - 7));
    expect(lengths.every((length, i) => length === i + 1)).toBe(true);
    ints.set(150_000, -1);
    expect(ints.length).toBe(n);
    expect(ints.at(0)).toBe(-7);
    expect(ints.at(65_536)).toBe(65_536 * 3 - 7);
    expect(ints.at(150_000)).toBe(-1);
    expect(ints.at(n - 1)).toBe((n - 1) * 3 - 7);
  });
});
