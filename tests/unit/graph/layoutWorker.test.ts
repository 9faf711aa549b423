import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LayeredRequest, LayeredResponse } from '@/components/graph/layered';
import { startLayoutWorker, type WorkerLike } from '@/components/graph/layoutWorker';

/** FakeWorker records what the client posts; the test answers as the worker would. */
class FakeWorker implements WorkerLike {
  posted: LayeredRequest[] = [];
  terminated = false;
  onmessage: ((ev: MessageEvent<LayeredResponse>) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  postMessage(m: LayeredRequest) {
    this.posted.push(m);
  }
  terminate() {
    this.terminated = true;
  }
  answer(res: LayeredResponse) {
    this.onmessage?.({ data: res } as MessageEvent<LayeredResponse>);
  }
}

const graph = { nodes: [], edges: [] };

describe('startLayoutWorker', () => {
  let fake: FakeWorker;
  const create = vi.fn(() => (fake = new FakeWorker()));
  afterEach(() => create.mockClear());

  it('starts the worker on the first layout only, and resolves with its positions', async () => {
    const w = startLayoutWorker(create);
    expect(create).not.toHaveBeenCalled();
    const p = w.layout(graph);
    expect(create).toHaveBeenCalledTimes(1);
    fake.answer({ id: fake.posted[0]!.id, positions: [['a', { x: 1, y: 2 }]], engine: 'elk' });
    await expect(p).resolves.toEqual(new Map([['a', { x: 1, y: 2 }]]));
    w.stop();
  });

  it('keeps one request in flight; a newer one replaces the one waiting', async () => {
    const w = startLayoutWorker(create);
    const first = w.layout(graph);
    const second = w.layout(graph);
    const third = w.layout(graph);
    expect(fake.posted).toHaveLength(1);
    await expect(second).resolves.toBeUndefined();
    fake.answer({ id: fake.posted[0]!.id, positions: [], engine: 'elk' });
    await expect(first).resolves.toEqual(new Map());
    expect(fake.posted).toHaveLength(2);
    // An answer to a request that is no longer in flight is ignored.
    fake.answer({ id: fake.posted[0]!.id, positions: [['stale', { x: 0, y: 0 }]], engine: 'elk' });
    fake.answer({ id: fake.posted[1]!.id, positions: [['b', { x: 3, y: 4 }]], engine: 'sweep' });
    await expect(third).resolves.toEqual(new Map([['b', { x: 3, y: 4 }]]));
    w.stop();
  });

  it('rejects with the reason when the layout fails or the worker cannot load', async () => {
    const w = startLayoutWorker(create);
    const failed = w.layout(graph);
    fake.answer({ id: fake.posted[0]!.id, error: 'boom' });
    await expect(failed).rejects.toThrow('layered layout failed: boom');
    const broken = w.layout(graph);
    fake.onerror?.({ message: '', preventDefault() {} } as ErrorEvent);
    await expect(broken).rejects.toThrow('it could not be loaded');
    w.stop();
  });

  it('stop terminates the worker, resolves what is pending with nothing, and refuses new work', async () => {
    const w = startLayoutWorker(create);
    const inFlight = w.layout(graph);
    const waiting = w.layout(graph);
    w.stop();
    expect(fake.terminated).toBe(true);
    expect(w.stopped).toBe(true);
    await expect(inFlight).resolves.toBeUndefined();
    await expect(waiting).resolves.toBeUndefined();
    await expect(w.layout(graph)).resolves.toBeUndefined();
    expect(create).toHaveBeenCalledTimes(1);
    w.stop(); // twice is harmless
  });
});

describe('layered.worker', () => {
  it('answers a request with positions from ELK, and an error as a message', async () => {
    const posted: LayeredResponse[] = [];
    const scope = {
      onmessage: null as ((ev: { data: unknown }) => Promise<void>) | null,
      postMessage: (m: LayeredResponse) => posted.push(m),
    };
    vi.stubGlobal('self', scope);
    try {
      await import('@/components/graph/layered.worker');
      const node = (id: string, roles: ('referrer' | 'referent')[]) => ({
        id,
        type: 'object' as const,
        roles,
        kind: 'App',
        namespace: 'ns',
        key: id,
        label: id,
        state: 'resolved' as const,
      });
      await scope.onmessage!({
        data: {
          id: 7,
          nodes: [node('a', ['referrer']), node('b', ['referent'])],
          edges: [{ source: 'a', target: 'b' }],
        },
      });
      expect(posted[0]).toMatchObject({ id: 7, engine: 'elk' });
      const at = new Map((posted[0] as { positions: [string, { x: number }][] }).positions);
      expect(at.get('a')!.x).toBeLessThan(at.get('b')!.x);
      // Loading ELK did not take the worker's message handler away.
      await scope.onmessage!({ data: { id: 8, nodes: null, edges: [] } });
      expect(posted[1]).toMatchObject({ id: 8, error: expect.any(String) });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
