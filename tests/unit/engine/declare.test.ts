import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { ObjectKey, Reference } from '@/lib/model';

const REFERRER = 'App.demo.refwatch.dev/shop/web' as ObjectKey;
const REFERENTS = ['Secret/shop/a', 'Secret/shop/b', 'ConfigMap/shop/c', 'ConfigMap/shop/d'] as ObjectKey[];
const PATHS = ['spec.a', 'spec.b'];

/** occurrences counts each (referent, fieldPath) of a list: the multiset a reconcile states. */
function occurrences(refs: readonly Reference[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of refs) m.set(`${r.referent} ${r.fieldPath}`, (m.get(`${r.referent} ${r.fieldPath}`) ?? 0) + 1);
  return m;
}

/** missing is how many occurrences of `next` the multiset `held` lacks: what a reconcile must add. */
function missing(held: readonly Reference[], next: readonly Reference[]): number {
  const have = occurrences(held);
  let n = 0;
  for (const [id, count] of occurrences(next)) n += Math.max(0, count - (have.get(id) ?? 0));
  return n;
}

/**
 * How the tests wait for a reconcile they queued: it runs within a few milliseconds, and waitFor's default 50 ms
 * between checks made the property's hundreds of restatements take 16–20 s.
 */
const SETTLED = { interval: 1, timeout: 5_000 };

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

describe('a reconcile restating its references', () => {
  it('registers before it reads exactly the occurrences the previous set lacks, in any order and with repeats', async () => {
    manager = new Manager({ source: new MemoryInformerSource({ priming: 'sync' }), statsIntervalMs: 0 });
    const registry = manager.registry;
    let plan: Reference[] = [];
    let adds = 0;
    const wrong: string[] = [];
    const addReference = registry.addReference.bind(registry);
    registry.addReference = (...args) => {
      adds++;
      return addReference(...args);
    };
    let reconciles = 0;
    const controller = manager.addController({
      name: 'apps',
      reconcile: (ctx) => {
        const held = registry.referencesOf('apps', REFERRER);
        adds = 0;
        const declared: Reference[] = [];
        for (const ref of plan) {
          ctx.resolve(ref);
          declared.push(ref);
          // Subscribe before read: every occurrence declared so far is in the registry already.
          const want = declared.filter((r) => r.referent === ref.referent && r.fieldPath === ref.fieldPath).length;
          if (registry.multiplicityAt('apps', REFERRER, ref) < want) wrong.push(`${ref.referent} read unsubscribed`);
        }
        if (adds !== missing(held, plan)) wrong.push(`${adds} adds for ${missing(held, plan)} new occurrences`);
        reconciles++;
      },
    });
    manager.start();
    const reference = fc.record({ referent: fc.constantFrom(...REFERENTS), fieldPath: fc.constantFrom(...PATHS) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(reference, { maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        async (sets) => {
          // Each set is followed by itself reversed and without its first reference: restatements in another
          // order and shifted ones, which random sets alone rarely produce.
          for (const set of sets.flatMap((s) => [s, [...s].reverse(), s.slice(1)])) {
            plan = set;
            const before = reconciles;
            controller.enqueue(REFERRER);
            await vi.waitFor(() => {
              expect(reconciles).toBeGreaterThan(before);
              expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 });
            }, SETTLED);
            expect(wrong).toEqual([]);
            // The set in the order declared: a wake mask is kept by its reference's position in it.
            expect(registry.referencesOf('apps', REFERRER)).toEqual(set);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('settles references appended at the end of the set without asking the registry to compare it again', async () => {
    manager = new Manager({ source: new MemoryInformerSource({ priming: 'sync' }), statsIntervalMs: 0 });
    const registry = manager.registry;
    let sets = 0;
    const setReferences = registry.setReferences.bind(registry);
    registry.setReferences = (...args) => {
      sets++;
      return setReferences(...args);
    };
    let plan: Reference[] = [];
    let reconciles = 0;
    const controller = manager.addController({
      name: 'apps',
      reconcile: (ctx) => {
        for (const ref of plan) ctx.resolve(ref);
        reconciles++;
      },
    });
    manager.start();
    const state = async (set: Reference[]): Promise<number> => {
      plan = set;
      sets = 0;
      const before = reconciles;
      controller.enqueue(REFERRER);
      await vi.waitFor(() => {
        expect(reconciles).toBeGreaterThan(before);
        expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 });
      }, SETTLED);
      expect(registry.referencesOf('apps', REFERRER)).toEqual(set);
      return sets;
    };
    const [a, b, c, d] = REFERENTS.map((referent) => ({ referent: referent!, fieldPath: 'spec.a' }));
    // A first reconcile, then one more reference at the end: appended in order, nothing to compare.
    expect(await state([a!, b!, c!])).toBe(0);
    expect(await state([a!, b!, c!, d!])).toBe(0);
    expect(await state([a!, b!, c!, d!])).toBe(0);
    // A new reference before the end, one dropped, or a repeat: the registry settles the set.
    expect(await state([a!, c!, b!, d!])).toBe(1);
    expect(await state([d!, a!])).toBe(1);
    expect(await state([d!, a!, d!])).toBe(1);
    expect(await state([b!, d!, a!])).toBe(1);
  });
});
