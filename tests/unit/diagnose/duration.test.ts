import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '@/lib/diagnose';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['250ms', 250],
    ['1500', 1500],
    ['0', 0],
    ['1.5s', 1500],
    ['1h30m', 5_400_000],
    ['2m30s', 150_000],
    ['1d', 86_400_000],
    [' 30s ', 30_000],
  ])('reads %j as %d ms', (input, ms) => {
    expect(parseDuration(input, 'olderThan')).toEqual({ ok: true, value: ms });
  });

  it.each([
    '',
    '   ',
    'abc',
    '30 s',
    '5sec',
    '-5s',
    '1e3',
    '5m5',
    's',
    '30S',
    '1.s',
    '366d',
    '9'.repeat(80),
    '10000000000000',
  ])('rejects %j naming the field', (input) => {
    const r = parseDuration(input, 'olderThan');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('InvalidDuration');
    expect(r.error.field).toBe('olderThan');
    expect(r.error.message).toMatch(/^olderThan /);
    expect(r.error.message).toMatch(/use a number with a unit ms, s, m, h or d/);
    expect(r.error.example).toBe('30s');
  });

  it('reports a missing value as missing, not as a crash', () => {
    const r = parseDuration(undefined, 'olderThan');
    expect(!r.ok && r.error.message).toMatch(/^olderThan is missing/);
  });

  it('quotes the bad input', () => {
    const r = parseDuration('5sec', 'olderThan');
    expect(!r.ok && r.error.message).toMatch(/^olderThan "5sec" is not a duration/);
  });
});

describe('formatDuration', () => {
  it.each([
    [250, '250 ms'],
    [12_300, '12.3 s'],
    [59_000, '59.0 s'],
    [60_000, '1 min'],
    [250_000, '4 min 10 s'],
    [3_600_000, '1 h'],
    [7_500_000, '2 h 5 min'],
  ])('renders %d ms as %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
