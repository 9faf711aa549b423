import { describe, expect, it } from 'vitest';
import { FakeClock, ItemExponentialFailureRateLimiter, RateLimitingQueue } from '@/lib/queue';

describe('RateLimitingQueue', () => {
  it('re-adds a key after the wait its limiter gives, growing per retry', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(10, 1000) });
    q.addRateLimited('a');
    clock.advance(9);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.tryGet()).toBe('a');
    q.done('a');
    q.addRateLimited('a');
    clock.advance(19);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(2);
  });

  it('forget resets the backoff of a key', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(10, 1000) });
    q.addRateLimited('a');
    q.addRateLimited('a');
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    clock.advance(10);
    expect(q.len()).toBe(1);
  });

  it('counts retries in stats and in the onRetry hook', () => {
    let retries = 0;
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, metrics: { onRetry: () => retries++ } });
    q.addRateLimited('a');
    q.addRateLimited('b');
    q.add('c');
    expect(q.stats()).toMatchObject({ retries: 2, adds: 1, depth: 1 });
    expect(retries).toBe(2);
  });

  it('uses the default controller limiter on its own clock', () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    q.addRateLimited('a');
    clock.advance(5);
    expect(q.tryGet()).toBe('a');
  });

  it('ignores retries after shutdown and leaves no timer pending', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    q.addRateLimited('a');
    await q.shutdown();
    q.addRateLimited('b');
    expect(clock.pendingTimers()).toBe(0);
    expect(q.numRequeues('b')).toBe(0);
    expect(q.stats().retries).toBe(1);
  });
});
