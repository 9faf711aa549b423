import { describe, expect, it } from 'vitest';
import { formatPastMoment, parsePastMoment } from '@/components/dashboard/pastMoment';
import { DEFAULT_VIEW, parseViewState, serializeViewState } from '@/components/dashboard/viewState';

const NOW = Date.parse('2026-11-26T15:00:00Z');

describe('the past moment in the URL (?at=)', () => {
  it('reads an RFC 3339 instant in UTC or with an offset', () => {
    expect(parsePastMoment('2026-11-26T14:02:11Z', NOW)).toEqual({ at: Date.parse('2026-11-26T14:02:11Z') });
    expect(parsePastMoment('2026-11-26T15:02:11+01:00', NOW)).toEqual({ at: Date.parse('2026-11-26T14:02:11Z') });
    expect(parsePastMoment('2026-11-26T14:02:11.250Z', NOW)).toEqual({ at: Date.parse('2026-11-26T14:02:11.250Z') });
  });

  it('is live without the parameter, or with it empty', () => {
    expect(parsePastMoment(null, NOW)).toEqual({ at: null });
    expect(parsePastMoment('', NOW)).toEqual({ at: null });
  });

  it.each([
    ['yesterday', 'is not a time'],
    ['2026-11-26 14:02:11', 'is not a time'], // no T
    ['2026-11-26T14:02:11', 'is not a time'], // no zone: whose 14:02?
    ['1764165731000', 'is not a time'],
    ['2026-02-30T14:02:11Z', 'is not a valid time'],
    ['2026-11-26T25:02:11Z', 'is not a valid time'],
    ['2026-11-26T16:00:00Z', 'lies in the future'],
  ])('stays live for %s, with a notice naming the parameter and the format', (value, why) => {
    const moment = parsePastMoment(value, NOW);
    expect(moment.at).toBeNull();
    expect(moment.error).toContain(`The URL's at parameter "${value}" ${why}`);
    expect(moment.error).toContain('?at=2026-11-26T14:02:11Z');
    expect(moment.error).toContain('Showing the live graph');
  });

  it('writes an instant in UTC to the second, and reads back what it wrote', () => {
    const at = Date.parse('2026-11-26T14:02:11Z');
    expect(formatPastMoment(at)).toBe('2026-11-26T14:02:11Z');
    expect(formatPastMoment(at + 250)).toBe('2026-11-26T14:02:11.250Z');
    expect(parsePastMoment(formatPastMoment(at + 250), NOW)).toEqual({ at: at + 250 });
  });

  it('is kept with the rest of the view when another part of it changes', () => {
    const view = parseViewState(new URLSearchParams('ns=shop&at=2026-11-26T14:02:11Z'));
    expect(view.at).toBe('2026-11-26T14:02:11Z');
    expect(serializeViewState({ ...view, select: 'Pod/shop/web' })).toBe(
      '?select=Pod%2Fshop%2Fweb&ns=shop&at=2026-11-26T14%3A02%3A11Z',
    );
    expect(serializeViewState({ ...view, at: '' })).toBe('?ns=shop');
    expect(DEFAULT_VIEW.at).toBe('');
  });
});
