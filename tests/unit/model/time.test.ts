import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setCondition } from '@/lib/engine/conditions';
import { formatMicroTime } from '@/lib/kube/lease-lock';
import { formatJsonLine, formatTextLine } from '@/lib/log/log';
import { formatTime } from '@/lib/model';

// 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z
const YEARS_0_TO_9999 = fc.integer({ min: -62167219200000, max: 253402300799999 });

describe('formatTime', () => {
  it('writes what toISOString writes, for every time of the years 0000 to 9999', () => {
    fc.assert(fc.property(YEARS_0_TO_9999, (ms) => formatTime(ms) === new Date(ms).toISOString()));
  });

  it('writes metav1.Time without a fraction and metav1.MicroTime with six digits', () => {
    expect(formatTime(Date.UTC(2026, 10, 26, 7, 5, 9, 42), 0)).toBe('2026-11-26T07:05:09Z');
    expect(formatTime(Date.UTC(2026, 10, 26, 7, 5, 9, 42), 6)).toBe('2026-11-26T07:05:09.042000Z');
    expect(formatTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('leaves years outside 0000–9999 to toISOString, and throws as it does on an invalid time', () => {
    expect(formatTime(Date.UTC(12000, 0, 1), 0)).toBe('+012000-01-01T00:00:00Z');
    expect(() => formatTime(Number.NaN)).toThrow(RangeError);
  });
});

describe('the times a controller writes', () => {
  afterEach(() => vi.restoreAllMocks());

  // The first toISOString in a process touches about 0.8 MB of ICU data in the node binary (docs/library.md, Footprint).
  it('are formatted without Date.prototype.toISOString', () => {
    const toISOString = vi.spyOn(Date.prototype, 'toISOString');
    const at = new Date(Date.UTC(2026, 10, 26, 16, 0, 0, 123));
    expect(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Resolved' }, at)).toEqual([
      { type: 'Ready', status: 'True', reason: 'Resolved', lastTransitionTime: '2026-11-26T16:00:00Z' },
    ]);
    expect(formatMicroTime(at.getTime())).toBe('2026-11-26T16:00:00.123000Z');
    expect(JSON.parse(formatJsonLine(at.getTime(), 'info', 'synced')).time).toBe('2026-11-26T16:00:00.123Z');
    expect(formatTextLine(at.getTime(), 'warn', 'slow')).toBe('2026-11-26T16:00:00.123Z WARN  slow');
    expect(toISOString).not.toHaveBeenCalled();
  });
});
