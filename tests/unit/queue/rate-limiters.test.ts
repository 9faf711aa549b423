import { describe, expect, it } from 'vitest';
import { RefwatchError } from '@/lib/model';
import {
  BucketRateLimiter,
  FakeClock,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  crossplaneRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from '@/lib/queue';

const whens = (l: RateLimiter, key: string, n: number) => Array.from({ length: n }, () => l.when(key));

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from the base up to the cap', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const got = whens(l, 'a', 21);
    expect(got.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(got[17]).toBe(5 * 2 ** 17);
    expect(got.slice(18)).toEqual([1_000_000, 1_000_000, 1_000_000]);
    expect(l.numRequeues('a')).toBe(21);
  });

  it('stays at the cap for very many retries without overflowing', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 5000; i++) last = l.when('a');
    expect(last).toBe(1_000_000);
    expect(Number.isFinite(last)).toBe(true);
    expect(l.numRequeues('a')).toBe(5000);
  });

  it('backs off each key on its own', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    whens(l, 'a', 3);
    expect(l.when('b')).toBe(5);
    expect(l.when('a')).toBe(40);
  });

  it('starts again from the base after forget', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    whens(l, 'a', 4);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
    expect(l.when('a')).toBe(5);
  });

  it('rejects a base or cap that is not a positive number, naming the field', () => {
    expect(() => new ItemExponentialFailureRateLimiter(0, 10)).toThrow(/baseMs/);
    expect(() => new ItemExponentialFailureRateLimiter(10, 5)).toThrow(/maxMs/);
    expect(() => new ItemExponentialFailureRateLimiter(5, Infinity)).toThrow(RefwatchError);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces reservations 1000/qps ms apart', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter(10, 100, clock);
    const got = Array.from({ length: 103 }, (_, i) => l.when(`k${i}`));
    expect(got.slice(0, 100).every((w) => w === 0)).toBe(true);
    expect(got.slice(100)).toEqual([100, 200, 300]);
  });

  it('refills at qps tokens per second up to the burst', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter(10, 5, clock);
    whens(l, 'k', 5);
    expect(l.when('k')).toBe(100);
    clock.advance(400); // pays back the reservation, then refills 3 tokens
    expect(whens(l, 'k', 4)).toEqual([0, 0, 0, 100]);
    clock.advance(60_000);
    expect(whens(l, 'k', 6)).toEqual([0, 0, 0, 0, 0, 100]);
  });

  it('keeps no per-key record', () => {
    const l = new BucketRateLimiter(10, 100, new FakeClock());
    l.when('a');
    expect(l.numRequeues('a')).toBe(0);
  });

  it('rejects a qps or burst that cannot fill a bucket', () => {
    expect(() => new BucketRateLimiter(0, 10)).toThrow(/qps/);
    expect(() => new BucketRateLimiter(10, 0)).toThrow(/burst/);
  });
});

describe('MaxOfRateLimiter', () => {
  it('waits as long as the slowest limiter, and every limiter records the call', () => {
    const clock = new FakeClock();
    const exp = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const bucket = new BucketRateLimiter(10, 2, clock);
    const l = new MaxOfRateLimiter(exp, bucket);
    expect(whens(l, 'a', 4)).toEqual([5, 10, 100, 200]);
    expect(l.numRequeues('a')).toBe(4);
    l.forget('a');
    expect(exp.numRequeues('a')).toBe(0);
    expect(l.when('a')).toBe(300);
  });

  it('needs at least one limiter', () => {
    expect(() => new MaxOfRateLimiter()).toThrow(/limiters/);
  });
});

describe('presets', () => {
  it('defaultControllerRateLimiter: 5 ms doubling to 1000 s, with a 10 qps / burst 100 bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter(clock);
    expect(whens(l, 'a', 4)).toEqual([5, 10, 20, 40]);
    expect(whens(l, 'a', 30).at(-1)).toBe(1_000_000);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
    for (let i = 0; i < 66; i++) l.when(`other${i}`); // 100 tokens used in all
    expect(l.when('fresh')).toBe(100);
  });

  it('crossplaneRateLimiter: 1 s doubling to 60 s', () => {
    const l = crossplaneRateLimiter(new FakeClock());
    expect(whens(l, 'a', 8)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    l.forget('a');
    expect(l.when('a')).toBe(1000);
  });
});
