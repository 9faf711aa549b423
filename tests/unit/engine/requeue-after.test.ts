import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ReconcileResult } from '@/lib/engine';
import { APP_KIND, app, appKey } from './fixtures';

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** A controller whose every reconcile of App shop/web returns `result`; counts the reconciles. */
async function rig(result: unknown) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const m = (manager = new Manager({ source, statsIntervalMs: 0 }));
  let reconciles = 0;
  const controller = m.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: () => {
      // Bounded, so that a requeue that spins shows as a count instead of starving the event loop.
      return ++reconciles < 100 ? (result as ReconcileResult) : undefined;
    },
  });
  m.start();
  source.apply(app('web', {}));
  await vi.waitFor(() => expect(reconciles).toBeGreaterThan(0));
  await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ processing: 0 }));
  return { m, controller, reconciles: () => reconciles };
}

describe('requeueAfter', () => {
  it('0 means no requeue, as a zero RequeueAfter in controller-runtime: the reconcile does not spin', async () => {
    const { controller, reconciles } = await rig({ requeueAfter: 0 });
    await new Promise((r) => setTimeout(r, 200));
    expect(reconciles()).toBe(1);
    expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 });
  });

  it('a positive delay requeues after that delay, and not before', async () => {
    const { reconciles } = await rig({ requeueAfter: 300 });
    await new Promise((r) => setTimeout(r, 50));
    expect(reconciles()).toBe(1);
    await vi.waitFor(() => expect(reconciles()).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '100'])(
    'requeueAfter %s fails the reconcile with an error naming the field',
    async (bad) => {
      const { m } = await rig({ requeueAfter: bad });
      const referrer = m.changelog.get('referrer', `watch|${appKey('web')}`);
      expect(referrer).toMatchObject({ state: 'Error', reason: 'ReconcileError' });
      expect(referrer!.message).toMatch(
        /^requeueAfter must be a finite number of milliseconds >= 0 \(0 or left out: no requeue\)/,
      );
    },
  );
});
