import { describe, expect, it } from 'vitest';
import { formatCount, formatLatency, formatPerApp, formatSpeedup, phaseText, share } from '@/components/demo/format';

describe('demo figures', () => {
  it('prints latencies in the unit a reader expects', () => {
    expect(formatLatency(0)).toBe('0 ms');
    expect(formatLatency(4.4)).toBe('4 ms');
    expect(formatLatency(1250)).toBe('1.25 s');
    expect(formatLatency(12_500)).toBe('12.5 s');
    expect(formatLatency(126_000)).toBe('2.1 min');
    expect(formatLatency(null)).toBe('—');
    expect(formatLatency(Number.NaN)).toBe('—');
  });

  it('prints the speedup, and marks a lower bound when backoff had Apps still waiting', () => {
    expect(formatSpeedup(3.25)).toBe('3.3×');
    expect(formatSpeedup(42.4)).toBe('42×');
    expect(formatSpeedup(9690)).toBe('9,690×');
    expect(formatSpeedup(230, true)).toBe('≥ 230×');
    expect(formatSpeedup(null)).toBe('—');
  });

  it('prints per-App ratios and counts', () => {
    expect(formatPerApp(3.891)).toBe('3.89');
    expect(formatPerApp(2)).toBe('2');
    expect(formatCount(12345)).toBe('12,345');
    expect(formatCount(undefined)).toBe('—');
  });

  it('bounds progress shares to 0..1', () => {
    expect(share(5, 10)).toBe(0.5);
    expect(share(12, 10)).toBe(1);
    expect(share(3, 0)).toBe(0);
  });

  it('spells phases out', () => {
    expect(phaseText('TimedOut')).toBe('Timed out');
    expect(phaseText('Running')).toBe('Running');
  });
});
