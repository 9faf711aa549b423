import { describe, expect, it } from 'vitest';
import { FakeClock, WorkQueue, type QueueMetricsProvider } from '@/lib/queue';

function drain(q: WorkQueue): string[] {
  const out: string[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) out.push(k);
  return out;
}

describe('WorkQueue', () => {
  it('hands keys out first in first out', () => {
    const q = new WorkQueue();
    for (const k of ['a', 'b', 'c']) q.add(k);
    expect(q.len()).toBe(3);
    expect(drain(q)).toEqual(['a', 'b', 'c']);
    expect(q.len()).toBe(0);
  });

  it('queues a key only once however often it is added', () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(drain(q)).toEqual(['a', 'b']);
    expect(q.stats().adds).toBe(2);
  });

  it('never hands out a key that is processing', () => {
    const q = new WorkQueue();
    q.add('a');
    expect(q.tryGet()).toBe('a');
    q.add('a');
    expect(q.len()).toBe(0);
    expect(q.tryGet()).toBeUndefined();
  });

  it('re-queues a key added while processing once, when it is done', () => {
    const q = new WorkQueue();
    q.add('a');
    expect(q.tryGet()).toBe('a');
    q.add('a');
    q.add('a');
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
    expect(drain(q)).toEqual(['a']);
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('does not re-queue a key on done unless it was added meanwhile', () => {
    const q = new WorkQueue();
    q.add('a');
    q.tryGet();
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.tryGet()).toBeUndefined();
  });

  it('ignores done for a key that is not processing', () => {
    const q = new WorkQueue();
    q.add('a');
    q.done('a');
    q.done('zzz');
    expect(q.len()).toBe(1);
    expect(drain(q)).toEqual(['a']);
  });

  it('resolves a waiting get when a key is added', async () => {
    const q = new WorkQueue();
    const pending = q.get();
    q.add('a');
    await expect(pending).resolves.toBe('a');
    expect(q.stats().processing).toBe(1);
  });

  it('gives each waiting get a different key', async () => {
    const q = new WorkQueue();
    const g1 = q.get();
    const g2 = q.get();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(await Promise.all([g1, g2])).toEqual(['a', 'b']);
  });

  it('hands a key re-queued by done to a waiting get', async () => {
    const q = new WorkQueue();
    q.add('a');
    expect(await q.get()).toBe('a');
    const waiting = q.get();
    q.add('a');
    q.done('a');
    await expect(waiting).resolves.toBe('a');
  });

  it('wakes every waiting get with undefined on shutdown', async () => {
    const q = new WorkQueue();
    const getters = [q.get(), q.get(), q.get()];
    await q.shutdown();
    expect(await Promise.all(getters)).toEqual([undefined, undefined, undefined]);
    expect(q.shuttingDown()).toBe(true);
  });

  it('hands out nothing after shutdown and ignores adds', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    await q.shutdown();
    q.add('c');
    expect(q.tryGet()).toBeUndefined();
    await expect(q.get()).resolves.toBeUndefined();
    expect(q.len()).toBe(0);
  });

  it('shuts down idempotently', async () => {
    const q = new WorkQueue();
    await q.shutdown();
    await q.shutdown();
    await q.shutdownWithDrain();
    expect(q.shuttingDown()).toBe(true);
  });

  it('shutdownWithDrain waits until every key being processed is done', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.tryGet();
    q.tryGet();
    let drained = false;
    const drain1 = q.shutdownWithDrain().then(() => (drained = true));
    const drain2 = q.shutdownWithDrain();
    q.done('a');
    await Promise.resolve();
    expect(drained).toBe(false);
    q.add('a'); // ignored: does not extend the drain
    q.done('b');
    await Promise.all([drain1, drain2]);
    expect(drained).toBe(true);
    expect(q.stats().processing).toBe(0);
  });

  it('shutdownWithDrain resolves at once when nothing is processing', async () => {
    const q = new WorkQueue();
    q.add('a');
    await q.shutdownWithDrain();
    expect(q.tryGet()).toBeUndefined();
  });

  it('shutdown ends a pending drain that takes too long', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.tryGet();
    const drain = q.shutdownWithDrain();
    await q.shutdown();
    await drain;
    expect(q.stats().processing).toBe(1);
  });

  it('reports depth, processing time and hooks from the clock', () => {
    const clock = new FakeClock(1000);
    const seen = { adds: 0, latencies: [] as number[], durations: [] as number[] };
    const metrics: QueueMetricsProvider = {
      onAdd: () => seen.adds++,
      onQueueLatency: (ms) => seen.latencies.push(ms),
      onWorkDuration: (ms) => seen.durations.push(ms),
    };
    const q = new WorkQueue({ clock, metrics, name: 'apps' });
    q.add('a');
    q.add('b');
    q.add('a');
    clock.advance(10);
    q.tryGet(); // a, waited 10
    clock.advance(5);
    q.tryGet(); // b, waited 15
    clock.advance(20);
    expect(q.stats()).toEqual({
      depth: 0,
      adds: 2,
      retries: 0,
      processing: 2,
      longestRunningMs: 25,
      unfinishedWorkMs: 45,
    });
    q.done('a');
    expect(q.stats()).toMatchObject({ processing: 1, longestRunningMs: 20, unfinishedWorkMs: 20 });
    expect(seen).toEqual({ adds: 2, latencies: [10, 15], durations: [25] });
    expect(q.name).toBe('apps');
  });

  it('reads the clock once per synchronous burst of adds, and again for the next burst', async () => {
    const clock = new FakeClock(1000);
    const latencies: number[] = [];
    const q = new WorkQueue({ clock, metrics: { onQueueLatency: (ms) => latencies.push(ms) } });
    q.add('a');
    clock.advance(7); // within the burst: b is stamped with the burst's time, as a is
    q.add('b');
    await Promise.resolve();
    q.add('c'); // a new burst reads the clock again
    clock.advance(3);
    q.tryGet();
    q.tryGet();
    q.tryGet();
    expect(latencies).toEqual([10, 10, 3]);
  });

  it('keeps order and dedupe across many keys', () => {
    const q = new WorkQueue();
    const n = 50_000;
    for (let i = 0; i < n; i++) q.add(`k${i}`);
    for (let i = 0; i < n; i += 2) q.add(`k${i}`);
    const out = drain(q);
    expect(out.length).toBe(n);
    expect(out[0]).toBe('k0');
    expect(out[n - 1]).toBe(`k${n - 1}`);
    expect(new Set(out).size).toBe(n);
  });
});
