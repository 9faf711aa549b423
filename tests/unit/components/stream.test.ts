import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeDelta, encodeSnapshot } from '@/lib/changelog/codec';
import type { Delta, Snapshot } from '@/lib/changelog/wire';
import { SnapshotStream, type ConnectionState, type EventSourceLike, type StreamSink } from '@/components/data/stream';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

class FakeEventSource implements EventSourceLike {
  readyState = 0;
  onopen: ((ev: Event) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  closed = false;
  private listeners = new Map<string, ((ev: MessageEvent) => void)[]>();
  addEventListener(type: string, listener: (ev: MessageEvent) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }
  /** emit sends a message as the server does: snapshots and deltas in the lean wire format. */
  emit(type: string, data: unknown) {
    const text =
      type === 'snapshot'
        ? encodeSnapshot(data as Snapshot)
        : type === 'delta'
          ? encodeDelta(data as Delta)
          : JSON.stringify(data);
    for (const l of this.listeners.get(type) ?? []) l(new MessageEvent(type, { data: text }));
  }
  fail(readyState: number) {
    this.readyState = readyState;
    this.onerror?.(new Event('error'));
  }
}

function harness() {
  const sources: FakeEventSource[] = [];
  const frames: (() => void)[] = [];
  const states: ConnectionState[] = [];
  const batches: Delta[][] = [];
  const sink: StreamSink = {
    snapshot: vi.fn(),
    deltas: (d) => batches.push(d),
    cluster: vi.fn(),
    resync: vi.fn(),
    state: (s) => states.push(s),
  };
  const stream = new SnapshotStream(sink, {
    createEventSource: () => {
      const es = new FakeEventSource();
      sources.push(es);
      return es;
    },
    requestFrame: (cb) => frames.push(cb),
    cancelFrame: (id) => {
      frames[id - 1] = () => {};
    },
    lostAfterMs: 5000,
  });
  const runFrames = () => frames.splice(0).forEach((f) => f());
  return { stream, sink, sources, states, batches, runFrames };
}

const delta = (from: number): Delta => ({ from, revision: from + 1, changes: [] });

afterEach(() => {
  vi.useRealTimers();
});

describe('SnapshotStream', () => {
  it('hands deltas to the cache once per animation frame, in order', () => {
    const h = harness();
    h.stream.start();
    h.sources[0]!.open();
    h.sources[0]!.emit('delta', delta(1));
    h.sources[0]!.emit('delta', delta(2));
    h.sources[0]!.emit('delta', delta(3));
    expect(h.batches).toHaveLength(0);
    h.runFrames();
    expect(h.batches).toEqual([[delta(1), delta(2), delta(3)]]);
  });

  it('goes connecting → live, and reconnecting when the connection drops', () => {
    vi.useFakeTimers();
    const h = harness();
    h.stream.start();
    h.sources[0]!.open();
    h.sources[0]!.fail(0);
    expect(h.states).toEqual(['connecting', 'live', 'reconnecting']);
    h.sources[0]!.open();
    expect(h.states.at(-1)).toBe('live');
    void h.stream.stop();
  });

  it('reports lost after a long outage and reopens on its own when the browser gave up', () => {
    vi.useFakeTimers();
    const h = harness();
    h.stream.start();
    h.sources[0]!.fail(2);
    vi.advanceTimersByTime(1000);
    expect(h.sources).toHaveLength(2);
    vi.advanceTimersByTime(5000);
    expect(h.states.at(-1)).toBe('lost');
    void h.stream.stop();
  });

  it('drops buffered deltas when a snapshot arrives, and passes resync and cluster on', () => {
    const h = harness();
    h.stream.start();
    const es = h.sources[0]!;
    es.open();
    es.emit('delta', delta(1));
    es.emit('snapshot', demoSnapshot(0, 50));
    h.runFrames();
    expect(h.batches).toHaveLength(0);
    expect(h.sink.snapshot).toHaveBeenCalledTimes(1);
    expect(h.sink.snapshot).toHaveBeenCalledWith(demoSnapshot(0, 50)); // decoded back to the entity shapes
    es.emit('resync', { revision: 60 });
    es.emit('cluster', { mode: 'embedded', server: 'x', reachable: false });
    expect(h.sink.resync).toHaveBeenCalledTimes(1);
    expect(h.sink.cluster).toHaveBeenCalledWith(expect.objectContaining({ reachable: false }));
  });

  it('skips a malformed message instead of failing', () => {
    const h = harness();
    h.stream.start();
    const es = h.sources[0]!;
    const listeners = (es as unknown as { listeners: Map<string, ((ev: MessageEvent) => void)[]> }).listeners;
    expect(() => listeners.get('delta')![0]!(new MessageEvent('delta', { data: '{not json' }))).not.toThrow();
    // A delta in the old, verbose format is not the wire format: skipped too.
    expect(() =>
      listeners.get('delta')![0]!(new MessageEvent('delta', { data: JSON.stringify(delta(1)) })),
    ).not.toThrow();
    h.runFrames();
    expect(h.batches).toHaveLength(0);
  });

  it('stop closes the connection and leaves no timer or frame behind', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.stream.start();
    h.sources[0]!.fail(2); // arms the reopen and lost timers
    h.sources[0]!.emit('delta', delta(1));
    await h.stream.stop();
    expect(h.sources[0]!.closed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    h.runFrames();
    expect(h.sources).toHaveLength(1);
    expect(h.batches).toHaveLength(0);
  });
});
