import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimilarNames, editDistance, maxDistanceFor } from '@/lib/diagnose';

const key = (ns: string, name: string) => `Database.demo.refwatch.dev/${ns}/${name}`;

describe('SimilarNames', () => {
  it('suggests at most three close names of the same namespace, nearest first', () => {
    const index = new SimilarNames(
      ['orders', 'order', 'ordrs1', 'orderz', 'orders-db', 'users']
        .map((n) => key('shop', n))
        .concat(key('billing', 'ordes')),
    );
    expect(index.similarIn('shop', 'ordes').matches.map((s) => [s.name, s.distance])).toEqual([
      ['order', 1],
      ['orders', 1],
    ]);
    expect(index.similarIn('shop', 'orders-dbx').matches.map((s) => s.name)).toEqual(['orders-db']);
    expect(index.similarIn('nowhere', 'orders')).toEqual({ matches: [], compared: 0, complete: true });
  });

  it('finds the same name in other namespaces and cluster-scoped', () => {
    const index = new SimilarNames([
      key('billing', 'orders'),
      key('ops', 'orders'),
      key('', 'orders'),
      key('shop', 'users'),
    ]);
    expect(index.namespacesWith('orders', 'shop')).toEqual(['', 'billing', 'ops']);
    expect(index.namespacesWith('orders', 'billing')).toEqual(['', 'ops']);
  });

  it('indexes a bounded number of keys and says when it stopped short', () => {
    const keys = Array.from({ length: 100 }, (_, i) => key('shop', `db-${i}`));
    expect(new SimilarNames(keys, 50).truncated).toBe(true);
    expect(new SimilarNames(keys, 100).truncated).toBe(false);
    expect(new SimilarNames(keys, 50).namespacesWith('db-99', 'prod')).toEqual([]);
    expect(new SimilarNames(keys, 100).namespacesWith('db-99', 'prod')).toEqual(['shop']);
    expect(new SimilarNames(keys, 50).similarIn('shop', 'db-7').complete).toBe(false);
  });

  it('compares no more names than its limit and says the search was partial', () => {
    const index = new SimilarNames(Array.from({ length: 100 }, (_, i) => key('shop', `db-${i}`)));
    const cut = index.similarIn('shop', 'db-x', 10);
    expect(cut.compared).toBe(10);
    expect(cut.complete).toBe(false);
    const full = index.similarIn('shop', 'db-x');
    expect(full.complete).toBe(true);
    expect(full.matches.map((s) => s.name)).toEqual(['db-0', 'db-1', 'db-2']);
  });

  it('allows more edits for longer names', () => {
    expect(maxDistanceFor('db')).toBe(1);
    expect(maxDistanceFor('orders')).toBe(1);
    expect(maxDistanceFor('payments')).toBe(2);
    expect(maxDistanceFor('payments-primary-eu')).toBe(3);
  });
});

describe('SimilarNames against a full search', () => {
  // A cache holds each key once: the names of one namespace are distinct.
  it('suggests what sorting every close name by distance, then name, and keeping three gives', () => {
    const name = fc.stringMatching(/^[a-d]{1,9}$/);
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 60 }), name, (names, wanted) => {
        const index = new SimilarNames(names.map((n) => key('shop', n)));
        const max = maxDistanceFor(wanted);
        const expected = names
          .filter((n) => n !== wanted)
          .map((n) => ({ name: n, distance: editDistance(wanted, n, max) }))
          .filter((s) => s.distance <= max)
          .sort((x, y) => x.distance - y.distance || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
          .slice(0, 3);
        expect(index.similarIn('shop', wanted).matches).toEqual(expected);
      }),
    );
  });
});
