import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { editDistance } from '@/lib/diagnose';

/** The textbook full-matrix Levenshtein distance, as the model to compare against. */
function naive(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

// A small alphabet makes close strings, where the band and the early exit matter, common.
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '-'), maxLength: 10 });
const bound = fc.integer({ min: 0, max: 6 });

describe('editDistance', () => {
  it('names typos by their number of edits', () => {
    expect(editDistance('ordrs', 'orders')).toBe(1);
    expect(editDistance('orders', 'orders')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('web', 'wbe')).toBe(2);
  });

  it('equals the full-matrix distance when unbounded', () => {
    fc.assert(fc.property(word, word, (a, b) => editDistance(a, b) === naive(a, b)));
  });

  it('respects its bound: the distance when within it, bound + 1 otherwise', () => {
    fc.assert(
      fc.property(word, word, bound, (a, b, max) => editDistance(a, b, max) === Math.min(naive(a, b), max + 1)),
    );
  });

  it('is symmetric', () => {
    fc.assert(
      fc.property(
        word,
        word,
        fc.option(bound, { nil: undefined }),
        (a, b, max) => editDistance(a, b, max) === editDistance(b, a, max),
      ),
    );
  });

  it('satisfies the triangle inequality', () => {
    const small = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 6 });
    fc.assert(
      fc.property(small, small, small, (a, b, c) => editDistance(a, c) <= editDistance(a, b) + editDistance(b, c)),
    );
  });

  it('is zero exactly for equal strings and at least the difference in length', () => {
    fc.assert(
      fc.property(word, word, (a, b) => {
        const d = editDistance(a, b);
        return (d === 0) === (a === b) && d >= Math.abs(a.length - b.length) && d <= Math.max(a.length, b.length);
      }),
    );
  });

  it('gives up early on long, different strings when bounded', () => {
    expect(editDistance('a'.repeat(5000), 'b'.repeat(5000), 2)).toBe(3);
    expect(editDistance('a'.repeat(10), 'a'.repeat(20), 3)).toBe(4);
  });
});
