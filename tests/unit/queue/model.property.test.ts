import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DelayingQueue, FakeClock, WorkQueue } from '@/lib/queue';

/** The queue's contract written as plainly as possible, with arrays and sets. */
class ModelQueue {
  queue: string[] = [];
  dirty = new Set<string>();
  processing = new Set<string>();
  waiters: number[] = []; // ids of waiting gets, oldest first
  results = new Map<number, string | undefined>();
  stopped = false;
  waiting = new Map<string, { readyAt: number; seq: number }>();
  seq = 0;
  now = 0;

  add(k: string): void {
    if (this.stopped || this.dirty.has(k)) return;
    this.dirty.add(k);
    if (!this.processing.has(k)) this.enqueue(k);
  }
  private enqueue(k: string): void {
    const w = this.waiters.shift();
    if (w === undefined) this.queue.push(k);
    else this.results.set(w, this.take(k));
  }
  private take(k: string): string {
    this.dirty.delete(k);
    this.processing.add(k);
    return k;
  }
  tryGet(): string | undefined {
    const k = this.queue.shift();
    return k === undefined ? undefined : this.take(k);
  }
  get(id: number): void {
    const k = this.tryGet();
    if (k !== undefined || this.stopped) this.results.set(id, k);
    else this.waiters.push(id);
  }
  done(k: string): void {
    if (!this.processing.delete(k)) return;
    if (!this.stopped && this.dirty.has(k)) this.enqueue(k);
  }
  shutdown(): void {
    this.stopped = true;
    this.queue = [];
    this.dirty.clear();
    this.waiting.clear();
    for (const w of this.waiters) this.results.set(w, undefined);
    this.waiters = [];
  }
  addAfter(k: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(k);
    const known = this.waiting.get(k);
    if (known) known.readyAt = Math.min(known.readyAt, this.now + ms);
    else this.waiting.set(k, { readyAt: this.now + ms, seq: this.seq++ });
  }
  advance(ms: number): void {
    this.now += ms;
    const ready = [...this.waiting.entries()]
      .filter(([, e]) => e.readyAt <= this.now)
      .sort(([, a], [, b]) => a.readyAt - b.readyAt || a.seq - b.seq);
    for (const [k] of ready) {
      this.waiting.delete(k);
      this.add(k);
    }
  }
}

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');

type Op =
  | { op: 'add'; k: string }
  | { op: 'tryGet' }
  | { op: 'get' }
  | { op: 'done'; k: string }
  | { op: 'shutdown' }
  | { op: 'addAfter'; k: string; ms: number }
  | { op: 'advance'; ms: number };

const baseOps: fc.Arbitrary<Op>[] = [
  key.map((k) => ({ op: 'add' as const, k })),
  fc.constant({ op: 'tryGet' as const }),
  fc.constant({ op: 'get' as const }),
  key.map((k) => ({ op: 'done' as const, k })),
];
const shutdownOp = fc.constant({ op: 'shutdown' as const });
const delayOps: fc.Arbitrary<Op>[] = [
  fc.record({ op: fc.constant('addAfter' as const), k: key, ms: fc.integer({ min: -5, max: 50 }) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) }),
];

async function run(ops: Op[], delaying: boolean): Promise<void> {
  const clock = new FakeClock();
  const q = delaying ? new DelayingQueue({ clock }) : new WorkQueue({ clock });
  const m = new ModelQueue();
  const pending = new Map<number, Promise<string | undefined>>();
  let nextId = 0;
  for (const o of ops) {
    switch (o.op) {
      case 'add':
        q.add(o.k);
        m.add(o.k);
        break;
      case 'tryGet':
        expect(q.tryGet()).toBe(m.tryGet());
        break;
      case 'get': {
        const id = nextId++;
        pending.set(id, q.get());
        m.get(id);
        break;
      }
      case 'done':
        q.done(o.k);
        m.done(o.k);
        break;
      case 'shutdown':
        await q.shutdown();
        m.shutdown();
        break;
      case 'addAfter':
        (q as DelayingQueue).addAfter(o.k, o.ms);
        m.addAfter(o.k, o.ms);
        break;
      case 'advance':
        clock.advance(o.ms);
        m.advance(o.ms);
        break;
    }
    expect(q.len()).toBe(m.queue.length);
    expect(q.stats().processing).toBe(m.processing.size);
    if (delaying) {
      expect((q as DelayingQueue).waiting()).toBe(m.waiting.size);
      expect(clock.pendingTimers()).toBe(m.waiting.size > 0 ? 1 : 0);
    }
  }
  await q.shutdown();
  m.shutdown();
  expect(clock.pendingTimers()).toBe(0);
  for (const [id, p] of pending) expect(await p).toBe(m.results.get(id));
}

describe('WorkQueue against a naive model', () => {
  it('hands out the same keys in the same order for any sequence of add/get/done', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(...baseOps), { maxLength: 120, size: 'medium' }), (ops) => run(ops, false)),
      { numRuns: 300 },
    );
  });

  it('agrees with the model when shutdown happens part way', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ arbitrary: fc.oneof(...baseOps), weight: 20 }, { arbitrary: shutdownOp, weight: 1 }), {
          maxLength: 120,
          size: 'medium',
        }),
        (ops) => run(ops, false),
      ),
      { numRuns: 200 },
    );
  });

  it('never hands out a key that is processing, and every added key is handed out', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(...baseOps.filter((_, i) => i !== 2)), { maxLength: 150, size: 'medium' }),
        (ops) => {
          const q = new WorkQueue();
          const processing = new Set<string>();
          const owed = new Set<string>(); // added and not handed out since
          for (const o of ops) {
            if (o.op === 'add') owed.add(o.k);
            if (o.op === 'add') q.add(o.k);
            if (o.op === 'done' && processing.delete(o.k)) q.done(o.k);
            if (o.op === 'tryGet') {
              const k = q.tryGet();
              if (k !== undefined) {
                expect(processing.has(k)).toBe(false);
                processing.add(k);
                owed.delete(k);
              }
            }
          }
          for (const k of processing) q.done(k);
          for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) owed.delete(k);
          expect([...owed]).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('DelayingQueue against a naive model with a fake clock', () => {
  it('adds delayed keys at the earliest ready time, in ready order, with at most one timer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            ...baseOps.map((arbitrary) => ({ arbitrary, weight: 2 })),
            ...delayOps.map((arbitrary) => ({ arbitrary, weight: 3 })),
            { arbitrary: shutdownOp, weight: 1 },
          ),
          { maxLength: 150, size: 'medium' },
        ),
        (ops) => run(ops, true),
      ),
      { numRuns: 300 },
    );
  });
});
