import { describe, expect, it } from 'vitest';
import { RefwatchError } from '@/lib/model';
import { DelayingQueue, FakeClock } from '@/lib/queue';

function setup() {
  const clock = new FakeClock();
  return { clock, q: new DelayingQueue({ clock }) };
}

describe('DelayingQueue', () => {
  it('adds at once when the delay is zero or negative', () => {
    const { clock, q } = setup();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('adds a key once its delay has passed, not before', () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    expect(q.len()).toBe(0);
    expect(q.waiting()).toBe(1);
    clock.advance(99);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.tryGet()).toBe('a');
    expect(q.waiting()).toBe(0);
  });

  it('keeps the earliest ready time when a waiting key is added again', () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    q.addAfter('a', 30);
    q.addAfter('a', 500);
    expect(q.waiting()).toBe(1);
    clock.advance(30);
    expect(q.len()).toBe(1);
    clock.advance(1000);
    expect(q.len()).toBe(1);
    expect(q.tryGet()).toBe('a');
  });

  it('adds waiting keys in order of ready time', () => {
    const { clock, q } = setup();
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('middle', 200);
    q.addAfter('tie', 200);
    clock.advance(1000);
    const out = [q.tryGet(), q.tryGet(), q.tryGet(), q.tryGet()];
    expect(out).toEqual(['early', 'middle', 'tie', 'late']);
  });

  it('keeps one timer pending, for the earliest key', () => {
    const { clock, q } = setup();
    for (let i = 0; i < 100; i++) q.addAfter(`k${i}`, 1000 - i);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(901);
    expect(q.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(100);
    expect(q.len()).toBe(100);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a plain add queues a waiting key at once', () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    q.add('a');
    expect(q.tryGet()).toBe('a');
    clock.advance(100);
    expect(q.tryGet()).toBeUndefined(); // still processing: marked dirty, not handed out twice
    q.done('a');
    expect(q.tryGet()).toBe('a');
  });

  it('leaves no timer pending after shutdown and drops waiting keys', async () => {
    const { clock, q } = setup();
    q.addAfter('a', 100);
    q.addAfter('b', 5000);
    await q.shutdown();
    expect(clock.pendingTimers()).toBe(0);
    expect(q.waiting()).toBe(0);
    q.addAfter('c', 10);
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(10_000);
    expect(q.tryGet()).toBeUndefined();
  });

  it('leaves no timer pending after shutdownWithDrain', async () => {
    const { clock, q } = setup();
    q.add('busy');
    q.tryGet();
    q.addAfter('a', 100);
    const drained = q.shutdownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
    q.done('busy');
    await drained;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('waits out delays longer than a platform timer can hold', () => {
    const { clock, q } = setup();
    const long = 2 ** 31 + 5_000;
    q.addAfter('a', long);
    clock.advance(2 ** 31);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(5_000);
    expect(q.tryGet()).toBe('a');
  });

  it('rejects a delay that is not a number of milliseconds, naming the field', () => {
    const { q } = setup();
    expect(() => q.addAfter('a', Number.NaN)).toThrow(RefwatchError);
    expect(() => q.addAfter('a', Infinity)).toThrow(/ms must be a finite number/);
    expect(q.waiting()).toBe(0);
  });

  it('clears its real timer on shutdown', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const q = new DelayingQueue();
    q.addAfter('a', 60_000);
    expect(timers()).toBe(before + 1);
    await q.shutdown();
    expect(timers()).toBe(before);
  });

  it('adds a key after a short real delay', async () => {
    const q = new DelayingQueue();
    q.addAfter('a', 5);
    await expect(q.get()).resolves.toBe('a');
    await q.shutdown();
  });
});
