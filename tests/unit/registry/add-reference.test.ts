import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReferenceRegistry, type KindEvent, type RegistryDelta } from '@/lib/registry';
import { RefwatchError, type Reference } from '@/lib/model';

const APP = 'App.demo.refwatch.dev/shop/web';
const ref = (referent: string, fieldPath: string): Reference => ({ referent, fieldPath });

describe('ReferenceRegistry.addReference', () => {
  it('appends to the current set as setReferences of the set plus one would', () => {
    const r = new ReferenceRegistry();
    const kinds: KindEvent[] = [];
    const deltas: RegistryDelta[] = [];
    r.subscribe({ onKind: (e) => kinds.push(e), onDelta: (d) => deltas.push(d) });
    r.addReference('svc', APP, ref('Pod/shop/a', 'spec.selector'));
    const d = r.addReference('svc', APP, ref('Pod/shop/a', 'spec.selector'));
    r.addReference('svc', APP, ref('Secret/shop/s', 'spec.secretRef'));
    expect(d.added).toEqual([ref('Pod/shop/a', 'spec.selector')]);
    expect(d.removed).toEqual([]);
    expect(r.referencesOf('svc', APP)).toEqual([
      ref('Pod/shop/a', 'spec.selector'),
      ref('Pod/shop/a', 'spec.selector'),
      ref('Secret/shop/s', 'spec.secretRef'),
    ]);
    expect(r.multiplicity('svc', APP, 'Pod/shop/a')).toBe(2);
    expect(r.edgeCount).toBe(3);
    expect(kinds).toEqual([
      { kind: 'Pod', type: 'active' },
      { kind: 'Secret', type: 'active' },
    ]);
    expect(deltas).toHaveLength(3);
    // The reconcile's final statement settles the set: one Pod occurrence and the Secret go.
    const last = r.setReferences('svc', APP, [ref('Pod/shop/a', 'spec.selector')]);
    expect(last.removed).toEqual(
      expect.arrayContaining([ref('Pod/shop/a', 'spec.selector'), ref('Secret/shop/s', 'spec.secretRef')]),
    );
    expect(kinds.at(-1)).toEqual({ kind: 'Secret', type: 'idle' });
  });

  it('rejects an invalid reference naming its place in the set, and changes nothing', () => {
    const r = new ReferenceRegistry();
    r.addReference('svc', APP, ref('Pod/shop/a', 'spec.selector'));
    expect(() => r.addReference('svc', APP, ref('not a key', 'spec.selector'))).toThrow(RefwatchError);
    expect(() => r.addReference('svc', APP, ref('not a key', 'spec.selector'))).toThrow(/references\[1\]/);
    expect(r.referencesOf('svc', APP)).toEqual([ref('Pod/shop/a', 'spec.selector')]);
    expect(r.edgeCount).toBe(1);
  });

  it("checks a referrer's key and its controller's name on its first reference, as setReferences does", () => {
    const r = new ReferenceRegistry();
    expect(() => r.addReference('svc', 'web', ref('Pod/shop/a', 'spec.selector'))).toThrow(/referrer/);
    expect(() => r.addReference('', APP, ref('Pod/shop/a', 'spec.selector'))).toThrow(/controller name is empty/);
    expect(() => r.addReference('svc', APP, ref('not a key', 'spec.selector'))).toThrow(/references\[0\]/);
    expect(r.referrers()).toEqual([]);
    expect(r.edgeCount).toBe(0);
  });

  it('keeps a set grown by addReference as it is when it trims it, and appends to it after', () => {
    const r = new ReferenceRegistry();
    r.addReference('svc', APP, ref('Pod/shop/a', 'spec.selector'));
    r.addReference('svc', APP, ref('Secret/shop/s', 'spec.secretRef'));
    r.trim('svc', APP);
    r.trim('svc', 'App.demo.refwatch.dev/shop/none');
    expect(r.referencesOf('svc', APP)).toEqual([
      ref('Pod/shop/a', 'spec.selector'),
      ref('Secret/shop/s', 'spec.secretRef'),
    ]);
    expect(r.edgeCount).toBe(2);
    r.addReference('svc', APP, ref('Pod/shop/b', 'spec.selector'));
    expect(r.referencesOf('svc', APP)).toHaveLength(3);
  });

  it('agrees with setReferences over random additions and restatements', () => {
    const referent = fc.constantFrom('Pod/shop/a', 'Pod/shop/b', 'Secret/shop/s', 'Pod/web/c');
    const step = fc.oneof(
      fc.record({ add: fc.tuple(fc.constantFrom('x', 'y'), referent) }),
      fc.record({ set: fc.tuple(fc.constantFrom('x', 'y'), fc.array(referent, { maxLength: 4 })) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const r = new ReferenceRegistry();
        const model = new Map<string, Reference[]>();
        for (const s of steps) {
          if ('add' in s) {
            const [who, to] = s.add;
            r.addReference('c', `Service/shop/${who}`, ref(to, 'spec.selector'));
            model.set(who, [...(model.get(who) ?? []), ref(to, 'spec.selector')]);
          } else {
            const [who, to] = s.set;
            r.setReferences(
              'c',
              `Service/shop/${who}`,
              to.map((t) => ref(t, 'spec.selector')),
            );
            model.set(
              who,
              to.map((t) => ref(t, 'spec.selector')),
            );
          }
        }
        let edges = 0;
        // A set is a multiset: a restatement of the same references in another order changes nothing, so keeps the order it had.
        const sorted = (refs: readonly Reference[]) =>
          [...refs].sort((a, b) => (a.referent < b.referent ? -1 : a.referent > b.referent ? 1 : 0));
        for (const [who, refs] of model) {
          expect(sorted(r.referencesOf('c', `Service/shop/${who}`))).toEqual(sorted(refs));
          edges += refs.length;
        }
        expect(r.edgeCount).toBe(edges);
        for (const to of ['Pod/shop/a', 'Pod/shop/b', 'Secret/shop/s', 'Pod/web/c']) {
          const referrers = [...model].filter(([, refs]) => refs.some((x) => x.referent === to)).length;
          expect(r.referrerCountOf(to)).toBe(referrers);
        }
      }),
    );
  });
});
