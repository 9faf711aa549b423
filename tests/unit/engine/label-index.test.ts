import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { matchesSelector, selectorOf, type Labels, type Requirement, type Selector } from '@/lib/model';
import { LabelIndex, type SelectorWatch } from '@/lib/engine/label-index';
import { labelsArbitrary, requirementArbitrary } from '../model/selector-arbitraries';

const KEYS = ['app', 'tier', 'team', 'track'];
const VALUES = ['a', 'b', 'c'];
const NAMESPACES = ['ns1', 'ns2'];
const OBJECTS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];

const labelsArb = labelsArbitrary(KEYS, VALUES);
const requirementArb = requirementArbitrary(KEYS, VALUES, 2);
const selectorArb: fc.Arbitrary<Selector> = fc.array(requirementArb, { maxLength: 3 }).map(selectorOf);

type Edit = { op: 'set'; obj: string; ns: string; labels: Labels } | { op: 'delete'; obj: string; ns: string };
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    obj: fc.constantFrom(...OBJECTS),
    ns: fc.constantFrom(...NAMESPACES),
    labels: labelsArb,
  }),
  fc.record({
    op: fc.constant('delete' as const),
    obj: fc.constantFrom(...OBJECTS),
    ns: fc.constantFrom(...NAMESPACES),
  }),
);

/** The naive model: every object with its namespace and labels, answered by a full scan. */
function scan(objects: Map<string, { ns: string; labels: Labels }>, ns: string | undefined, s: Selector): string[] {
  return [...objects]
    .filter(([, o]) => (ns === undefined || o.ns === ns) && matchesSelector(s, o.labels))
    .map(([k]) => k)
    .sort();
}

describe('LabelIndex', () => {
  it('answers every selector as a full scan does, over random creations, deletions and relabels', () => {
    fc.assert(
      fc.property(
        fc.array(selectorArb, { minLength: 1, maxLength: 6 }),
        fc.array(editArb, { maxLength: 40 }),
        (selectors, edits) => {
          const index = new LabelIndex();
          const model = new Map<string, { ns: string; labels: Labels }>();
          const registered: SelectorWatch[] = [];
          for (const [i, selector] of selectors.entries()) {
            const w = {
              controller: 'c',
              referrer: `r${i}`,
              namespace: i % 3 === 2 ? undefined : NAMESPACES[i % 2],
              selector,
            };
            index.watch(w);
            registered.push(w);
          }
          for (const e of edits) {
            // Half the objects keep their key across namespaces: a move is a deletion and a creation.
            const key = e.obj < 'p3' ? `Pod/${e.ns}/${e.obj}` : `Pod/${e.obj}`;
            const before = new Map(registered.map((w) => [w, scan(model, w.namespace, w.selector).join()]));
            const prev = model.get(key);
            const woken = new Set<SelectorWatch>();
            let visits = 0;
            const wake = (w: SelectorWatch) => {
              visits++;
              woken.add(w);
            };
            if (e.op === 'delete') {
              expect(index.delete(key, wake)).toEqual(prev?.labels);
              model.delete(key);
            } else {
              // An object may move namespace under the same key here: a deletion and a creation.
              index.set(key, e.ns, e.labels, wake);
              model.set(key, { ns: e.ns, labels: e.labels });
            }
            // A selector reached through two of its keys is still woken once.
            expect(visits).toBe(woken.size);
            for (const w of registered) {
              const now = scan(model, w.namespace, w.selector);
              expect(index.select(w.namespace, w.selector).sort()).toEqual(now);
              // Exactly the selectors whose match set changed are re-checked positive.
              expect(woken.has(w)).toBe(before.get(w) !== now.join());
            }
          }
          for (const ns of [...NAMESPACES, undefined])
            for (const s of selectors) expect(index.select(ns, s).sort()).toEqual(scan(model, ns, s));
          // Unloaded, the selectors stay and the objects go; loaded again, the answers are as before.
          index.unload();
          expect(index.loaded).toBe(false);
          expect(index.watchCount).toBe(registered.length);
          for (const w of registered) expect(index.select(w.namespace, w.selector)).toEqual([]);
          index.load(model.keys(), (k) => model.get(k)!.labels);
          expect(index.loaded).toBe(true);
          for (const w of registered) {
            // load reads the namespace from the key, so only keys that carry theirs are compared.
            const keyed = (k: string) => k.split('/').length === 3;
            const expected = scan(model, w.namespace, w.selector).filter(keyed);
            expect(index.select(w.namespace, w.selector).filter(keyed).sort()).toEqual(expected);
          }
          // Every selector dropped and every object deleted, nothing is left behind.
          for (const w of registered) index.unwatch(w);
          for (const k of model.keys()) index.delete(k);
          expect(index.size).toBe(0);
          expect(index.nodes()).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('forgets empty sets, so a deleted object leaves nothing behind', () => {
    const index = new LabelIndex();
    index.set('Pod/a/x', 'a', { app: 'web' });
    index.set('Pod/a/x', 'a', { app: 'api' });
    index.delete('Pod/a/x');
    expect(index.size).toBe(0);
    expect([...index.namespaceNames()]).toEqual([]);
    expect(index.select(undefined, selectorOf([]))).toEqual([]);
  });
});

it('reads no labels to answer a one-term selector, and only the other terms of a longer one', () => {
  const index = new LabelIndex();
  // Each object's labels count the reads of their values, which is what checking a candidate costs.
  let reads = 0;
  const counted = (labels: Labels): Labels =>
    new Proxy(labels, {
      getOwnPropertyDescriptor(target, key) {
        reads++;
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
      get(target, key) {
        reads++;
        return Reflect.get(target, key);
      },
    });
  for (let i = 0; i < 10; i++)
    index.set(`Pod/a/p${i}`, 'a', counted({ app: i < 5 ? 'web' : 'api', tier: i % 2 === 0 ? 'front' : 'back' }));
  reads = 0;
  const web = selectorOf([{ key: 'app', operator: 'In', values: ['web'] }]);
  expect(index.select('a', web).sort()).toEqual(['Pod/a/p0', 'Pod/a/p1', 'Pod/a/p2', 'Pod/a/p3', 'Pod/a/p4']);
  expect(reads).toBe(0);
  const webFront = selectorOf([
    { key: 'app', operator: 'In', values: ['web'] },
    { key: 'tier', operator: 'In', values: ['front'] },
    { key: 'canary', operator: 'DoesNotExist', values: [] },
  ]);
  expect(index.select('a', webFront).sort()).toEqual(['Pod/a/p0', 'Pod/a/p2', 'Pod/a/p4']);
  // Five candidates (tier=front), each read for the app term and the canary term, never for tier again.
  expect(reads).toBeLessThanOrEqual(5 * 2 * 2);
});

/** readCounter wraps selectors so that each read of their terms is counted: what re-checking one costs. */
function readCounter() {
  const counter = {
    n: 0,
    counted: (selector: Selector): Selector => ({
      text: selector.text,
      get requirements() {
        counter.n++;
        return selector.requirements;
      },
    }),
  };
  return counter;
}

/** watchOf is a registered selector of the test controller: the referrer, where it looks and its terms. */
function watchOf(referrer: string, namespace: string | undefined, ...terms: Requirement[]): SelectorWatch {
  return { controller: 'c', referrer, namespace, selector: selectorOf(terms) };
}

describe('LabelIndex selectors', () => {
  it('visits on a relabel only the selectors naming a changed key', () => {
    const index = new LabelIndex();
    const byApp = watchOf('Service/a/web', 'a', { key: 'app', operator: 'In', values: ['web'] });
    const byTier = watchOf('Service/a/tier', 'a', { key: 'tier', operator: 'Exists', values: [] });
    const everything = watchOf('PodDisruptionBudget/a/all', 'a');
    for (const w of [byApp, byTier, everything]) index.watch(w);
    const seen: string[] = [];
    const wake = (w: SelectorWatch) => seen.push(w.referrer);
    index.set('Pod/a/x', 'a', { app: 'api', tier: 'x' });
    index.set('Pod/a/x', 'a', { app: 'web', tier: 'x' }, wake);
    expect(seen).toEqual(['Service/a/web']);
    seen.length = 0;
    index.set('Pod/a/y', 'a', { tier: 'x' }, wake);
    expect(seen.sort()).toEqual(['PodDisruptionBudget/a/all', 'Service/a/tier']);
    index.unwatch(byTier);
    expect(index.watchCount).toBe(2);
  });

  it('re-checks on a relabel only the selectors whose In terms list the old or the new value', () => {
    const index = new LabelIndex();
    const reads = readCounter();
    const counted = reads.counted;
    const apps = Array.from({ length: 50 }, (_, i) => `app-${i}`);
    for (const app of apps) {
      const selector = selectorOf([{ key: 'app', operator: 'In', values: [app] }]);
      index.watch({ controller: 'c', referrer: `Service/a/${app}`, namespace: 'a', selector: counted(selector) });
    }
    const notCanary = selectorOf([{ key: 'app', operator: 'NotIn', values: ['canary'] }]);
    index.watch({ controller: 'c', referrer: 'NetworkPolicy/a/all', namespace: 'a', selector: counted(notCanary) });
    index.set('Pod/a/x', 'a', { app: 'app-3', tier: 'x' });
    reads.n = 0;
    const woken: string[] = [];
    const wake = (w: SelectorWatch) => woken.push(w.referrer);
    index.set('Pod/a/x', 'a', { app: 'app-7', tier: 'x' }, wake);
    expect(woken.sort()).toEqual(['Service/a/app-3', 'Service/a/app-7']);
    // app-3's and app-7's Services, and the NotIn selector, which any value of app may change: not all 51.
    expect(reads.n).toBeLessThanOrEqual(3 * 2);
    index.set('Pod/a/y', 'a', { app: 'app-3' });
    reads.n = 0;
    woken.length = 0;
    index.set('Pod/a/y', 'a', { app: 'canary' }, wake);
    expect(woken.sort()).toEqual(['NetworkPolicy/a/all', 'Service/a/app-3']);
    expect(reads.n).toBeLessThanOrEqual(2 * 2);
  });

  it('wakes a one-pair selector on any change through its pair without reading it; a two-value In term is read, and a move between its values wakes nobody', () => {
    const index = new LabelIndex();
    const reads = readCounter();
    const counted = reads.counted;
    const web = selectorOf([{ key: 'app', operator: 'In', values: ['web'] }]);
    const either = selectorOf([{ key: 'app', operator: 'In', values: ['api', 'web'] }]);
    index.watch({ controller: 'c', referrer: 'Service/a/web', namespace: 'a', selector: counted(web) });
    index.watch({ controller: 'c', referrer: 'Service/a/either', namespace: 'a', selector: counted(either) });
    const woken: string[] = [];
    const wake = (w: SelectorWatch) => woken.push(w.referrer);
    index.set('Pod/a/x', 'a', { app: 'api' });
    reads.n = 0;
    index.set('Pod/a/x', 'a', { app: 'web' }, wake);
    // Still matched by `either`: only `web`'s answer changed.
    expect(woken).toEqual(['Service/a/web']);
    woken.length = 0;
    index.delete('Pod/a/x', wake);
    expect(woken.sort()).toEqual(['Service/a/either', 'Service/a/web']);
    woken.length = 0;
    index.set('Pod/a/y', 'a', { app: 'web', tier: 'x' }, wake);
    expect(woken.sort()).toEqual(['Service/a/either', 'Service/a/web']);
    // `either` is read for each side that has labels (2 + 1 + 1), and `web` never.
    expect(reads.n).toBe(4);
  });

  it('keeps its selectors across an unload, and wakes them on changes once loaded again', () => {
    const index = new LabelIndex();
    const web = watchOf('Service/a/web', 'a', { key: 'app', operator: 'In', values: ['web'] });
    const anywhere = watchOf('Policy/all', undefined, { key: 'app', operator: 'Exists', values: [] });
    index.watch(web);
    index.watch(anywhere);
    index.load(['Pod/a/x'], () => ({ app: 'web' }));
    expect(index.select('a', web.selector)).toEqual(['Pod/a/x']);
    index.unload();
    expect(index.select('a', web.selector)).toEqual([]);
    expect(index.select(undefined, anywhere.selector)).toEqual([]);
    index.load(['Pod/a/x'], () => ({ app: 'api' }));
    const woken: string[] = [];
    index.set('Pod/a/x', 'a', { app: 'web' }, (w) => woken.push(w.referrer));
    expect(woken).toEqual(['Service/a/web']);
    index.delete('Pod/a/x', (w) => woken.push(w.referrer));
    expect(woken.sort()).toEqual(['Policy/all', 'Service/a/web', 'Service/a/web']);
  });
});
