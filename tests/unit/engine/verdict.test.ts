import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { ObjectKey } from '@/lib/model';

type Referent = 'Ready' | 'NotReady' | 'NotFound';

const REFERRER = 'App.demo.refwatch.dev/shop/web' as ObjectKey;
const dbKey = (i: number) => `Database.demo.refwatch.dev/shop/db-${i}` as ObjectKey;

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** The state the referrer's reconcile must publish: the first missing referent, else the first not Ready. */
function expected(states: readonly Referent[]): { state: string; reason?: string } {
  const missing = states.indexOf('NotFound');
  if (missing >= 0) return { state: 'NotFound', reason: `NotFound: ${dbKey(missing)}` };
  const waiting = states.indexOf('NotReady');
  if (waiting >= 0) return { state: 'Waiting', reason: `NotReady: ${dbKey(waiting)}` };
  return { state: 'Resolved', reason: undefined };
}

describe("a referrer's state from its resolutions", () => {
  it('names the first missing referent before any not Ready, then the first not Ready, else is Resolved', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Referent>('Ready', 'NotReady', 'NotFound'), { minLength: 0, maxLength: 6 }),
        async (states) => {
          const source = new MemoryInformerSource({ priming: 'sync' });
          manager = new Manager({ source, statsIntervalMs: 0 });
          states.forEach((s, i) => {
            if (s === 'NotFound') return;
            source.apply({
              apiVersion: 'demo.refwatch.dev/v1alpha1',
              kind: 'Database',
              metadata: { name: `db-${i}`, namespace: 'shop' },
              status: { conditions: [{ type: 'Ready', status: s === 'Ready' ? 'True' : 'False' }] },
            });
          });
          const controller = manager.addController({
            name: 'apps',
            reconcile: (ctx) => {
              states.forEach((_, i) => ctx.resolve(dbKey(i), `spec.databases[${i}]`));
            },
          });
          manager.start();
          controller.enqueue(REFERRER);
          await expect
            .poll(() => manager!.changelog.get('referrer', `apps|${REFERRER}`)?.reconciles ?? 0)
            .toBeGreaterThan(0);
          const r = manager.changelog.get('referrer', `apps|${REFERRER}`)!;
          expect({ state: r.state, reason: r.reason }).toEqual(expected(states));
          await manager.stop();
          manager = undefined;
        },
      ),
      { numRuns: 40 },
    );
  });
});
