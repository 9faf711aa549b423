import { describe, expect, it } from 'vitest';
import type { EventEntity, ReferrerEntity } from '@/lib/changelog/entities';
import type { Change, Delta, Snapshot } from '@/lib/changelog/wire';
import { applyDelta, applyDeltas, deltaFit } from '@/components/data/applyDelta';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const checkoutId = 'app-watch|App.demo.refwatch.dev/shop/checkout';

function referrerChange(s: Snapshot, id: string, patch: Partial<ReferrerEntity>, revision: number): Change {
  const value = { ...s.referrers.find((r) => r.id === id)!, ...patch };
  return { entity: 'referrer', id, revision, removed: false, value };
}

function event(i: number): EventEntity {
  return { id: `e${i}`, at: NOW + i, type: 'Resolved', message: `event ${i}` };
}

describe('applyDelta', () => {
  it('replaces an updated entity in place and advances the revision, leaving the input untouched', () => {
    const s = demoSnapshot(NOW, 100);
    const delta: Delta = {
      from: 100,
      revision: 101,
      changes: [referrerChange(s, checkoutId, { state: 'Resolved' }, 101)],
    };
    const next = applyDelta(s, delta);
    expect(next.revision).toBe(101);
    expect(next.referrers.find((r) => r.id === checkoutId)?.state).toBe('Resolved');
    expect(next.referrers).toHaveLength(s.referrers.length);
    expect(s.referrers.find((r) => r.id === checkoutId)?.state).toBe('Waiting');
  });

  it('adds new entities and drops tombstoned ones', () => {
    const s = demoSnapshot(NOW, 100);
    const gone = s.references[0]!;
    const added = { ...gone, id: 'new-ref', fieldPath: 'spec.extraRef' };
    const next = applyDelta(s, {
      from: 100,
      revision: 102,
      changes: [
        { entity: 'reference', id: gone.id, revision: 101, removed: true },
        { entity: 'reference', id: 'new-ref', revision: 102, removed: false, value: added },
      ],
    });
    expect(next.references.some((r) => r.id === gone.id)).toBe(false);
    expect(next.references.some((r) => r.id === 'new-ref')).toBe(true);
    expect(next.references).toHaveLength(s.references.length);
  });

  it('skips changes the snapshot already holds when a delta overlaps it', () => {
    const s = demoSnapshot(NOW, 100);
    const next = applyDelta(s, {
      from: 98,
      revision: 101,
      changes: [
        referrerChange(s, checkoutId, { state: 'Error' }, 99),
        referrerChange(s, 'app-watch|App.demo.refwatch.dev/shop/search', { state: 'Waiting' }, 101),
      ],
    });
    expect(next.referrers.find((r) => r.id === checkoutId)?.state).toBe('Waiting');
    expect(next.referrers.find((r) => r.key.endsWith('/shop/search'))?.state).toBe('Waiting');
  });

  it('keeps only the newest events past the cap', () => {
    const s = { ...demoSnapshot(NOW, 0), events: [] };
    const changes: Change[] = Array.from({ length: 30 }, (_, i) => ({
      entity: 'event',
      id: `e${i}`,
      revision: i + 1,
      removed: false,
      value: event(i),
    }));
    const next = applyDelta(s, { from: 0, revision: 30, changes }, 10);
    expect(next.events).toHaveLength(10);
    expect(next.events.map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => `e${i + 20}`));
  });

  it('drops the stuck entry of a referrer that resolved or went away', () => {
    const s = demoSnapshot(NOW, 100);
    const payments = 'app-watch|App.demo.refwatch.dev/billing/payments';
    const next = applyDelta(s, {
      from: 100,
      revision: 102,
      changes: [
        referrerChange(s, payments, { state: 'Resolved' }, 101),
        { entity: 'referrer', id: 'app-watch|App.demo.refwatch.dev/shop/catalog', revision: 102, removed: true },
      ],
    });
    expect(next.stuck.map((x) => x.key)).toEqual(['App.demo.refwatch.dev/billing/refunds']);
  });

  it('ignores changes of entity kinds it does not know', () => {
    const s = demoSnapshot(NOW, 100);
    const odd = { entity: 'gizmo', id: 'x', revision: 101, removed: true } as unknown as Change;
    expect(() => applyDelta(s, { from: 100, revision: 101, changes: [odd] })).not.toThrow();
  });
});

describe('deltaFit and applyDeltas', () => {
  it('calls a delta that starts after the snapshot a gap, and one already included stale', () => {
    const s = demoSnapshot(NOW, 100);
    expect(deltaFit(s, { from: 100, revision: 105, changes: [] })).toBe('apply');
    expect(deltaFit(s, { from: 103, revision: 105, changes: [] })).toBe('gap');
    expect(deltaFit(s, { from: 90, revision: 100, changes: [] })).toBe('stale');
  });

  it('applies a batch in order and stops at the first gap', () => {
    const s = demoSnapshot(NOW, 100);
    const d1: Delta = { from: 100, revision: 101, changes: [referrerChange(s, checkoutId, { reconciles: 50 }, 101)] };
    const d2: Delta = { from: 105, revision: 106, changes: [referrerChange(s, checkoutId, { reconciles: 60 }, 106)] };
    const { snapshot, gap } = applyDeltas(s, [d1, d2]);
    expect(gap).toBe(true);
    expect(snapshot.revision).toBe(101);
    expect(snapshot.referrers.find((r) => r.id === checkoutId)?.reconciles).toBe(50);
  });
});
