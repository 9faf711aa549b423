import { describe, expect, it } from 'vitest';
import { Backoff, sleep } from '@/lib/kube/backoff';

describe('Backoff', () => {
  it('doubles from 0.8 s and stops growing at 30 s', () => {
    const b = new Backoff({ random: () => 0 });
    const delays = Array.from({ length: 9 }, () => b.next());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  });

  it('adds jitter within half the delay, never past the cap', () => {
    const b = new Backoff({ random: () => 0.999 });
    expect(b.next()).toBeGreaterThan(800);
    expect(b.next()).toBeLessThanOrEqual(1600 * 1.5);
    for (let i = 0; i < 10; i++) b.next();
    expect(b.next()).toBe(30000);
  });

  it('never retries sooner than the server asked with Retry-After', () => {
    const b = new Backoff({ random: () => 0 });
    expect(b.next(5000)).toBe(5000);
    expect(b.next(100)).toBe(1600);
  });

  it('caps an absurd Retry-After', () => {
    const b = new Backoff({ random: () => 0, maxRetryAfterMs: 60_000 });
    expect(b.next(3_600_000)).toBe(60_000);
  });

  it('starts over after reset', () => {
    const b = new Backoff({ random: () => 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(800);
  });

  it('rejects a configuration whose first delay exceeds the cap', () => {
    expect(() => new Backoff({ initialMs: 5000, maxMs: 1000 })).toThrow(/initialMs/);
  });
});

describe('sleep', () => {
  it('ends early with an AbortError when aborted', async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('resolves when its time is up', async () => {
    await expect(sleep(5)).resolves.toBeUndefined();
  });
});
