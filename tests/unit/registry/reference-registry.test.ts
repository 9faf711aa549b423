import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReferenceRegistry, type KindEvent } from '@/lib/registry';
import type { Reference } from '@/lib/model';

const DB = 'Database.demo.refwatch.dev/shop/orders';
const CACHE = 'Cache.demo.refwatch.dev/shop/sessions';
const SECRET = 'Secret/shop/db-password';
const APP = 'App.demo.refwatch.dev/shop/web';
const ref = (referent: string, fieldPath: string): Reference => ({ referent, fieldPath });

describe('ReferenceRegistry', () => {
  it('replaces the whole set and returns the delta', () => {
    const r = new ReferenceRegistry();
    const d1 = r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef'), ref(SECRET, 'spec.secretRef')]);
    expect(d1.added).toHaveLength(2);
    expect(d1.removed).toHaveLength(0);
    const d2 = r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef'), ref(CACHE, 'spec.cacheRef')]);
    expect(d2.added).toEqual([ref(CACHE, 'spec.cacheRef')]);
    expect(d2.removed).toEqual([ref(SECRET, 'spec.secretRef')]);
    expect(r.referencesOf('watch', APP)).toEqual([ref(DB, 'spec.databaseRef'), ref(CACHE, 'spec.cacheRef')]);
    expect(r.referrersOf(SECRET)).toEqual([]);
    expect(r.referrersOf(DB).map((x) => [x.controller, x.key])).toEqual([['watch', APP]]);
  });

  it('an unchanged set is an empty delta', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    const d = r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    expect(d.added).toHaveLength(0);
    expect(d.removed).toHaveLength(0);
  });

  it('an unchanged set stated in another order is an empty delta, and the set takes that order', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef'), ref(SECRET, 'spec.secretRef')]);
    const d = r.setReferences('watch', APP, [ref(SECRET, 'spec.secretRef'), ref(DB, 'spec.databaseRef')]);
    expect(d.added).toHaveLength(0);
    expect(d.removed).toHaveLength(0);
    // A reconcile finds each restated reference where it stated it (indexOf's cursor, the wake masks by position).
    expect(r.referencesOf('watch', APP)).toEqual([ref(SECRET, 'spec.secretRef'), ref(DB, 'spec.databaseRef')]);
    expect(r.indexOf('watch', APP, ref(DB, 'spec.databaseRef'))).toBe(1);
  });

  it('counts a referent named from two fields twice', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef'), ref(DB, 'spec.replicaRef')]);
    expect(r.multiplicity('watch', APP, DB)).toBe(2);
    expect(r.kindCount('Database.demo.refwatch.dev')).toBe(2);
    r.setReferences('watch', APP, [ref(DB, 'spec.replicaRef')]);
    expect(r.multiplicity('watch', APP, DB)).toBe(1);
    expect(r.referrersOf(DB)).toHaveLength(1);
  });

  it('tracks two referrers of one referent, and two controllers of one referrer separately', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    r.setReferences('watch', 'App.demo.refwatch.dev/shop/api', [ref(DB, 'spec.databaseRef')]);
    r.setReferences('audit', APP, [ref(DB, 'spec.databaseRef')]);
    expect(
      r
        .referrersOf(DB)
        .map((x) => `${x.controller}:${x.key}`)
        .sort(),
    ).toEqual([
      'audit:App.demo.refwatch.dev/shop/web',
      'watch:App.demo.refwatch.dev/shop/api',
      'watch:App.demo.refwatch.dev/shop/web',
    ]);
    r.clear('watch', APP);
    expect(r.referrersOf(DB)).toHaveLength(2);
    expect(r.referrerCount).toBe(2);
  });

  it('emits kind active on 0→1 and idle on 1→0 only', () => {
    const r = new ReferenceRegistry();
    const events: KindEvent[] = [];
    r.subscribe({ onKind: (e) => events.push(e) });
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    r.setReferences('watch', 'App.demo.refwatch.dev/shop/api', [ref(DB, 'spec.databaseRef')]);
    r.clear('watch', APP);
    expect(events).toEqual([{ kind: 'Database.demo.refwatch.dev', type: 'active' }]);
    r.clear('watch', 'App.demo.refwatch.dev/shop/api');
    expect(events.at(-1)).toEqual({ kind: 'Database.demo.refwatch.dev', type: 'idle' });
  });

  it('swapping one referent for another of the same kind keeps the kind active without events', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    const events: KindEvent[] = [];
    r.subscribe({ onKind: (e) => events.push(e) });
    r.setReferences('watch', APP, [ref('Database.demo.refwatch.dev/shop/other', 'spec.databaseRef')]);
    expect(events).toEqual([]);
    expect(r.referentsOfKind('Database.demo.refwatch.dev')).toEqual(['Database.demo.refwatch.dev/shop/other']);
  });

  it('rejects the whole call on one invalid ref, naming it, and changes nothing', () => {
    const r = new ReferenceRegistry();
    r.setReferences('watch', APP, [ref(DB, 'spec.databaseRef')]);
    expect(() =>
      r.setReferences('watch', APP, [ref(CACHE, 'spec.cacheRef'), ref('Database/Shop/x', 'spec.databaseRef')]),
    ).toThrow(/references\[1\]\.referent\.namespace "Shop"/);
    expect(r.referencesOf('watch', APP)).toEqual([ref(DB, 'spec.databaseRef')]);
    expect(r.kindCount('Cache.demo.refwatch.dev')).toBe(0);
    expect(() => r.setReferences('watch', APP, [ref(DB, 'not a path')])).toThrow(/fieldPath/);
    expect(() => r.setReferences('watch', 'bad key', [ref(DB, 'spec.x')])).toThrow(/referrer/);
  });
});

// A naive model: a list of (controller, referrer, referent, fieldPath) rows.
type Row = [string, string, string, string];
const controllers = ['watch', 'audit'];
const referrers = ['App/ns/a', 'App/ns/b', 'App/other/c'];
const referents = [
  'Database.demo.refwatch.dev/ns/x',
  'Database.demo.refwatch.dev/ns/y',
  'Secret/ns/s',
  'Cache.demo.refwatch.dev//global',
];
const paths = ['spec.a', 'spec.b'];

describe('ReferenceRegistry against a naive model', () => {
  it('agrees on references, reverse index, kind counts and kind events', () => {
    const op = fc.record({
      controller: fc.constantFrom(...controllers),
      referrer: fc.constantFrom(...referrers),
      refs: fc.array(fc.record({ referent: fc.constantFrom(...referents), fieldPath: fc.constantFrom(...paths) }), {
        maxLength: 5,
      }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const r = new ReferenceRegistry();
        let rows: Row[] = [];
        const active = new Set<string>();
        r.subscribe({
          onKind: (e) => {
            if (e.type === 'active') {
              expect(active.has(e.kind)).toBe(false);
              active.add(e.kind);
            } else {
              expect(active.has(e.kind)).toBe(true);
              active.delete(e.kind);
            }
          },
        });
        for (const o of ops) {
          const before = rows.filter((x) => x[0] === o.controller && x[1] === o.referrer);
          rows = rows.filter((x) => !(x[0] === o.controller && x[1] === o.referrer));
          rows.push(...o.refs.map((x): Row => [o.controller, o.referrer, x.referent, x.fieldPath]));
          const d = r.setReferences(o.controller, o.referrer, o.refs);
          // delta = new - old and old - new, as multisets
          const key = (x: { referent: string; fieldPath: string }) => `${x.referent}#${x.fieldPath}`;
          const oldKeys = before.map((x) => `${x[2]}#${x[3]}`);
          const newKeys = o.refs.map(key);
          expect(d.added.map(key).sort()).toEqual(multisetMinus(newKeys, oldKeys).sort());
          expect(d.removed.map(key).sort()).toEqual(multisetMinus(oldKeys, newKeys).sort());
        }
        for (const referent of referents) {
          const expected = [...new Set(rows.filter((x) => x[2] === referent).map((x) => `${x[0]}|${x[1]}`))].sort();
          expect(
            r
              .referrersOf(referent)
              .map((x) => `${x.controller}|${x.key}`)
              .sort(),
          ).toEqual(expected);
          // One referrer is held as itself, two or more in a set: the count and the visit agree either way.
          expect(r.referrerCountOf(referent)).toBe(expected.length);
          const visited: string[] = [];
          expect(r.forEachReferrerOf(referent, (x) => visited.push(`${x.controller}|${x.key}`))).toBe(expected.length);
          expect(visited.sort()).toEqual(expected);
        }
        // A referent named from several fields, or twice from one, counts each time; each set keeps its order.
        for (const controller of controllers)
          for (const referrer of referrers) {
            const mine = rows.filter((x) => x[0] === controller && x[1] === referrer);
            expect(r.referencesOf(controller, referrer)).toEqual(
              mine.map((x) => ({ referent: x[2], fieldPath: x[3] })),
            );
            for (const referent of referents)
              expect(r.multiplicity(controller, referrer, referent)).toBe(mine.filter((x) => x[2] === referent).length);
          }
        expect(r.referentCount).toBe(new Set(rows.map((x) => x[2])).size);
        const kinds = new Set(referents.map((k) => k.slice(0, k.indexOf('/'))));
        for (const kind of kinds) {
          const n = rows.filter((x) => x[2].startsWith(kind + '/')).length;
          expect(r.kindCount(kind)).toBe(n);
          expect(active.has(kind)).toBe(n > 0);
        }
        expect(r.edgeCount).toBe(rows.length);
      }),
      { numRuns: 300 },
    );
  });
});

function multisetMinus(a: string[], b: string[]): string[] {
  const rest = [...b];
  const out: string[] = [];
  for (const x of a) {
    const i = rest.indexOf(x);
    if (i >= 0) rest.splice(i, 1);
    else out.push(x);
  }
  return out;
}
