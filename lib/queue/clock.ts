/** TimerHandle is whatever a Clock's setTimeout returns; only that clock's clearTimeout understands it. */
export type TimerHandle = unknown;

/**
 * Clock is the queue's only source of time. `now()` is monotonic milliseconds
 * (not epoch time); `setTimeout` calls `fn` once, no earlier than `ms` later,
 * unless `clearTimeout` cancels it first.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** realClock is the process's monotonic clock and timers. */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * FakeClock is a Clock that moves only when told to, so tests of timed
 * behaviour are deterministic. `advance(ms)` fires every timer that falls due
 * within the window in due order (ties in creation order), with `now()` equal
 * to each timer's due time while it runs; timers set while firing are honoured
 * if they fall due within the same window.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Number of timers set and neither fired nor cleared. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing the timers that fall due. */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (;;) {
      const next = this.earliestDue(target);
      if (next === undefined) break;
      this.timers.delete(next.id);
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }

  private earliestDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers.values()) {
      if (t.due > limit) continue;
      if (best === undefined || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }
}
