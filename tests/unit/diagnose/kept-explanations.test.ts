import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, type ReferenceExplanation } from '@/lib/diagnose';
import { DB, app, appKey, database, dbKey, harness, type Harness } from './fixtures';

let current: Harness | undefined;
afterEach(async () => {
  await current?.manager.stop();
  current = undefined;
});

function references(h: Harness, key: string): ReferenceExplanation[] {
  const r = explain(h.manager, key);
  if (!r.ok) throw r.error;
  return r.value.controllers[0]!.references;
}

/** A started harness with App web waiting on Database orders, which is not Ready. */
async function waitingOnOrders(): Promise<Harness> {
  const h = harness();
  current = h;
  h.manager.start();
  h.source.apply(database('orders', false));
  h.source.apply(app('web', { databaseRef: 'orders' }));
  await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Waiting'));
  return h;
}

describe('explanations of references to cached objects are kept across diagnoses', () => {
  it('gives the same frozen explanation while the object stays, and a new one once it changes', async () => {
    const h = await waitingOnOrders();
    const [first] = references(h, appKey('web'));
    const [again] = references(h, appKey('web'));
    expect(first!.message).toBe(`${dbKey('orders')} is not Ready: Provisioning: creating volume`);
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);

    h.source.apply(database('orders', false, 'shop', { reason: 'Resizing', message: 'growing volume' }));
    const [changed] = references(h, appKey('web'));
    expect(changed).not.toBe(first);
    expect(changed!.message).toBe(`${dbKey('orders')} is not Ready: Resizing: growing volume`);
  });

  it('explains anew when the watch starts failing and when it recovers, with the stale note only meanwhile', async () => {
    const h = await waitingOnOrders();
    const [before] = references(h, appKey('web'));

    h.source.fail(DB, { reason: 'Throttled', message: '429 Too Many Requests' });
    const [failing] = references(h, appKey('web'));
    expect(failing!.message).toBe(
      `${dbKey('orders')} is not Ready: Provisioning: creating volume ` +
        `(the ${DB} watch is failing with Throttled, so the cache may be stale)`,
    );

    h.source.recover(DB);
    const [after] = references(h, appKey('web'));
    expect(after!.message).toBe(before!.message);
    expect(after).not.toBe(failing);
  });

  it('keeps an explanation per field path that names the object', async () => {
    const h = harness({
      reconcile: (ctx) => {
        ctx.resolve(dbKey('orders'), 'spec.primaryRef');
        ctx.resolve(dbKey('orders'), 'spec.replicaRef');
      },
    });
    current = h;
    h.manager.start();
    h.source.apply(database('orders', true));
    h.source.apply(app('web', {}));
    await vi.waitFor(() => expect(h.state(appKey('web'))).toBe('Resolved'));

    const first = references(h, appKey('web'));
    expect(first.map((r) => [r.fieldPath, r.state])).toEqual([
      ['spec.primaryRef', 'Ready'],
      ['spec.replicaRef', 'Ready'],
    ]);
    const again = references(h, appKey('web'));
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
  });
});
