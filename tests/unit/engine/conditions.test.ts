import { describe, expect, it } from 'vitest';
import { resolvedCondition, setCondition, type Resolution, type StatusCondition } from '@/lib/engine';

const t0 = new Date('2026-01-05T10:00:00Z');
const t1 = new Date('2026-01-05T10:05:00Z');
const ready = (referent: string): Resolution => ({ state: 'Ready', referent, fieldPath: 'spec.ref' });

describe('setCondition', () => {
  it('adds a condition with its transition time, and keeps the others in place', () => {
    const other: StatusCondition = { type: 'Progressing', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' };
    expect(setCondition([other], { type: 'Ready', status: 'False', reason: 'NotFound' }, t0)).toEqual([
      other,
      { type: 'Ready', status: 'False', reason: 'NotFound', lastTransitionTime: '2026-01-05T10:00:00Z' },
    ]);
  });

  it('returns undefined when the condition already says the same, so nothing is written', () => {
    const list = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Resolved', message: 'm' }, t0);
    expect(setCondition(list, { type: 'Ready', status: 'True', reason: 'Resolved', message: 'm' }, t1)).toBeUndefined();
  });

  it('moves lastTransitionTime only when the status changes', () => {
    const waiting = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'NotPrimed' }, t0);
    const stillWaiting = setCondition(waiting, { type: 'Ready', status: 'False', reason: 'NotReady' }, t1);
    expect(stillWaiting).toEqual([
      { type: 'Ready', status: 'False', reason: 'NotReady', lastTransitionTime: '2026-01-05T10:00:00Z' },
    ]);
    const resolved = setCondition(stillWaiting, { type: 'Ready', status: 'True', reason: 'Resolved' }, t1);
    expect(resolved).toEqual([
      { type: 'Ready', status: 'True', reason: 'Resolved', lastTransitionTime: '2026-01-05T10:05:00Z' },
    ]);
  });
});

describe('resolvedCondition', () => {
  it('is True when every referent is Ready, including when there is none', () => {
    expect(resolvedCondition([ready('Secret/shop/a'), ready('Secret/shop/b')])).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Resolved',
      message: '2 references resolved',
    });
    expect(resolvedCondition([], 'ReferencesResolved').status).toBe('True');
  });

  it('names the first missing referent before any that is not ready, with its message', () => {
    const c = resolvedCondition([
      {
        state: 'NotReady',
        referent: 'Database.demo.refwatch.dev/shop/orders',
        fieldPath: 'spec.databaseRef',
        message: 'no Ready condition yet',
      },
      { state: 'NotFound', referent: 'Secret/shop/db', fieldPath: 'spec.secretRef' },
    ]);
    expect(c).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'NotFound',
      message: 'spec.secretRef: Secret/shop/db',
    });
    expect(
      resolvedCondition([
        ready('Secret/shop/a'),
        {
          state: 'NotReady',
          referent: 'Cache.demo.refwatch.dev/shop/c',
          fieldPath: 'spec.cacheRef',
          message: 'warming',
        },
      ]).message,
    ).toBe('spec.cacheRef: Cache.demo.refwatch.dev/shop/c: warming');
  });

  it("says why a kind's cache is not primed when its watch fails", () => {
    const c = resolvedCondition([
      {
        state: 'NotPrimed',
        referent: 'Widget.example.com/shop/w',
        fieldPath: 'spec.widgetRef',
        error: { reason: 'KindUnknown', message: 'no resource serves Widget.example.com', at: 0 },
      },
    ]);
    expect(c).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'NotPrimed',
      message: 'spec.widgetRef: Widget.example.com/shop/w: no resource serves Widget.example.com',
    });
  });
});
