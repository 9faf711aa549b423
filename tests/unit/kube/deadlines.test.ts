import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines, RequestCancel } from '@/lib/kube/transport';

describe('Deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const timeout = () => new DOMException('no answer within the timeout', 'TimeoutError');

  // The tick is a tenth of the timeout, and at most a second however long the timeout.
  it.each([
    [100, 10],
    [60_000, 1_000],
  ])(
    'aborts a request that outlives a %i ms timeout within a tick (%i ms) of it, with the reason given',
    (ms, tick) => {
      const deadlines = new Deadlines(ms, timeout);
      const request = new RequestCancel();
      deadlines.add(request);
      vi.advanceTimersByTime(ms - 1);
      expect(request.aborted).toBe(false);
      vi.advanceTimersByTime(tick + 1);
      expect(request.aborted).toBe(true);
      expect(request.reason).toMatchObject({ name: 'TimeoutError', message: 'no answer within the timeout' });
    },
  );

  it('leaves alone a request that ended in time, and one that began later and is not yet due', () => {
    const deadlines = new Deadlines(100, timeout);
    const done = new RequestCancel();
    const early = new RequestCancel();
    const late = new RequestCancel();
    const end = deadlines.add(done);
    deadlines.add(early);
    vi.advanceTimersByTime(50);
    deadlines.add(late);
    end();
    vi.advanceTimersByTime(60);
    expect([done.aborted, early.aborted, late.aborted]).toEqual([false, true, false]);
    vi.advanceTimersByTime(50);
    expect(late.aborted).toBe(true);
  });

  it('runs its one timer only while requests are in flight, and starts it again for the next', () => {
    const deadlines = new Deadlines(100, timeout);
    expect(vi.getTimerCount()).toBe(0);
    const ends = Array.from({ length: 50 }, () => deadlines.add(new RequestCancel()));
    expect(vi.getTimerCount()).toBe(1);
    for (const end of ends) end();
    vi.advanceTimersByTime(10);
    expect(vi.getTimerCount()).toBe(0);
    const next = new RequestCancel();
    deadlines.add(next);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(110);
    expect(next.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
