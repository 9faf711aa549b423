import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Refs, Registry } from '@/lib/changelog/wire-registry';

/**
 * The wire encoder's Registry numbers strings in the order it first sees
 * them and finds each again by its number; its index lives in typed arrays
 * of open-addressing slots, so strings whose hashes collide, and shards that
 * grow many times, must still give each string its own number.
 */
describe('wire Registry', () => {
  it('numbers strings densely in the order first seen, and finds each again', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 300 }), (strings) => {
        const r = new Registry();
        const first = new Map<string, number>();
        for (const s of strings) {
          if (!first.has(s)) first.set(s, first.size);
          expect(r.id(s)).toBe(first.get(s));
        }
        expect(r.strings.length).toBe(first.size);
        for (const [s, id] of first) {
          expect(r.id(s)).toBe(id);
          expect(r.strings.at(id)).toBe(s);
        }
      }),
    );
  });

  it('tells apart strings whose hashes are equal', () => {
    // "Aa" and "BB" hash alike (31·'A' + 'a' = 31·'B' + 'B'), and so does every string of the same length made of them.
    const colliding = ['Aa', 'BB'].flatMap((a) => ['Aa', 'BB'].flatMap((b) => ['Aa', 'BB'].map((c) => a + b + c)));
    const r = new Registry();
    const ids = colliding.map((s) => r.id(s));
    expect(new Set(ids).size).toBe(colliding.length);
    colliding.forEach((s, i) => expect(r.id(s)).toBe(ids[i]));
    expect(r.strings.length).toBe(colliding.length);
  });

  it('keeps every number through many growths of its shards and chunks', () => {
    const n = 200_000; // beyond a chunk (65,536) and many doublings of each of the 64 shards
    const r = new Registry();
    const key = (i: number) => `Pod/ns-${i % 7}/pod-${i}`;
    const wrong: number[] = [];
    for (let i = 0; i < n; i++) if (r.id(key(i)) !== i) wrong.push(i);
    for (let i = n - 1; i >= 0; i--) if (r.id(key(i)) !== i || r.strings.at(i) !== key(i)) wrong.push(i);
    expect(wrong).toEqual([]);
    expect(r.strings.length).toBe(n);
  });

  it('splits a key once into its kind, namespace and name', () => {
    const r = new Registry();
    const id = r.id('Secret/team-a/api-token');
    const bare = r.id('just-a-name');
    r.split(id);
    r.split(bare);
    expect(r.strings.at(r.keyKind.at(id))).toBe('Secret');
    expect(r.strings.at(r.keyNamespace.at(id))).toBe('team-a');
    expect(r.keyName(id)).toBe('api-token');
    expect(r.keyKind.at(bare)).toBe(-1);
    expect(r.keyName(bare)).toBe('just-a-name');
    // A cluster-scoped key has an empty namespace.
    const cluster = r.id('ClusterRole//view');
    r.split(cluster);
    expect(r.strings.at(r.keyNamespace.at(cluster))).toBe('');
    expect(r.keyName(cluster)).toBe('view');
  });
});

/**
 * Refs gives a message's reference for a registry id, or 0: dense (a
 * snapshot) in chunks made as ids in them are set, sparse (a delta) in a Map.
 * Both must answer as a Map would, for ids far apart and across chunks.
 */
describe('wire Refs', () => {
  it('answers every id set, and 0 for every other, dense or sparse', () => {
    const id = fc.oneof(fc.nat({ max: 70 }), fc.nat({ max: 300_000 }), fc.constantFrom(65_535, 65_536, 131_072));
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.tuple(id, fc.integer({ min: 1, max: 2 ** 31 - 1 })), { maxLength: 200 }),
        fc.array(id, { maxLength: 50 }),
        (dense, sets, probes) => {
          const refs = new Refs(dense);
          const model = new Map<number, number>();
          for (const [i, ref] of sets) {
            refs.set(i, ref);
            model.set(i, ref);
          }
          for (const i of [...model.keys(), ...probes]) expect(refs.get(i)).toBe(model.get(i) ?? 0);
        },
      ),
    );
  });
});
