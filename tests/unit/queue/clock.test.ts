import { describe, expect, it } from 'vitest';
import { FakeClock } from '@/lib/queue';

describe('FakeClock', () => {
  it('fires due timers in due order at their due time, and skips cleared ones', () => {
    const clock = new FakeClock(100);
    const fired: [string, number][] = [];
    clock.setTimeout(() => fired.push(['b', clock.now()]), 20);
    clock.setTimeout(() => fired.push(['a', clock.now()]), 10);
    const c = clock.setTimeout(() => fired.push(['c', clock.now()]), 15);
    clock.setTimeout(() => fired.push(['late', clock.now()]), 100);
    clock.clearTimeout(c);
    clock.advance(50);
    expect(fired).toEqual([
      ['a', 110],
      ['b', 120],
    ]);
    expect(clock.now()).toBe(150);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('fires a timer set by a firing timer when it falls in the same window', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advance(10);
    expect(fired).toEqual([5, 10]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
