import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines, RequestCancel } from '@/lib/kube/transport';

describe('Deadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const timeout = () => new DOMException('no answer within 100 ms', 'TimeoutError');

  it('aborts a request that outlives the timeout, within a tick of it, with the reason given', () => {
    const deadlines = new Deadlines(100, timeout);
    const request = new RequestCancel();
    deadlines.add(request);
    vi.advanceTimersByTime(99);
    expect(request.aborted).toBe(false);
    vi.advanceTimersByTime(11);
    expect(request.aborted).toBe(true);
    expect(request.reason).toMatchObject({ name: 'TimeoutError', message: 'no answer within 100 ms' });
  });

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
    expect(deadlines.running).toBe(false);
    const ends = Array.from({ length: 50 }, () => deadlines.add(new RequestCancel()));
    expect(deadlines.running).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    for (const end of ends) end();
    vi.advanceTimersByTime(10);
    expect(deadlines.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    const next = new RequestCancel();
    deadlines.add(next);
    expect(deadlines.running).toBe(true);
    vi.advanceTimersByTime(110);
    expect(next.aborted).toBe(true);
    expect(deadlines.running).toBe(false);
  });

  it('looks at least once a second, however long the timeout', () => {
    const deadlines = new Deadlines(60_000, timeout);
    const request = new RequestCancel();
    deadlines.add(request);
    vi.advanceTimersByTime(59_999);
    expect(request.aborted).toBe(false);
    vi.advanceTimersByTime(1_001);
    expect(request.aborted).toBe(true);
  });
});
