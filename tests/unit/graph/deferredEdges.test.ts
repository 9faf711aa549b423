import { afterEach, describe, expect, it, vi } from 'vitest';
import { runInChunks, splitByView, viewRect } from '@/components/graph/deferredEdges';
import { layoutNodeOf, readableViewport, sweepLayout } from '@/components/graph/layered';
import { buildModel } from '@/components/graph/model';
import { synthesize } from '@/bench/browser/scope-data';

const NOW = 1_700_000_000_000;

describe('the edges of the opening view', () => {
  it('viewRect is the model box a viewport shows, widened by the margin', () => {
    expect(viewRect({ zoom: 2, pan: { x: -100, y: 50 } }, 800, 400, 10)).toEqual({
      x1: 40,
      y1: -35,
      x2: 460,
      y2: 185,
    });
  });

  it('viewRect refuses a zoom that is not positive, naming it', () => {
    expect(() => viewRect({ zoom: 0, pan: { x: 0, y: 0 } }, 800, 400)).toThrow(/zoom must be a positive number, got 0/);
  });

  it('splitByView keeps edges with an end in view or a line across it, and holds back the others', () => {
    const at = new Map([
      ['in', { x: 50, y: 50 }],
      ['left', { x: -500, y: 50 }],
      ['above', { x: 50, y: -500 }],
      ['below', { x: 50, y: 900 }],
      ['far', { x: 5000, y: 5000 }],
      ['far2', { x: 6000, y: 5000 }],
    ]);
    const edge = (source: string, target: string) => ({ id: `${source}>${target}`, source, target });
    const edges = [edge('left', 'in'), edge('above', 'below'), edge('far', 'far2'), edge('far', 'ghost')];
    const { inView, later } = splitByView(edges, at, { x1: 0, y1: 0, x2: 100, y2: 100 });
    expect(inView.map((e) => e.id)).toEqual(['left>in', 'above>below', 'far>ghost']);
    expect(later.map((e) => e.id)).toEqual(['far>far2']);
  });

  it('on the 5,000-node scope, holds back most edges and none that touches the opening view', () => {
    const { snapshot } = synthesize(NOW);
    const model = buildModel(snapshot, { now: NOW });
    const positions = sweepLayout(
      model.nodes.map(layoutNodeOf),
      model.edges.map((e) => ({ source: e.source, target: e.target })),
    );
    const width = 1000;
    const height = 450;
    const rect = viewRect(readableViewport(positions.values(), width, height), width, height);
    const { inView, later } = splitByView(model.edges, positions, rect);
    expect(inView.length + later.length).toBe(model.edges.length);
    expect(later.length).toBeGreaterThan(0.9 * model.edges.length);
    const seen = (id: string) => {
      const p = positions.get(id)!;
      return p.x >= rect.x1 && p.x <= rect.x2 && p.y >= rect.y1 && p.y <= rect.y2;
    };
    const touching = model.edges.filter((e) => seen(e.source) || seen(e.target));
    expect(touching.length).toBeGreaterThan(0);
    const held = new Set(later.map((e) => e.id));
    expect(touching.filter((e) => held.has(e.id))).toEqual([]);
  });
});

describe('runInChunks', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const counter = (chunks: number) => {
    let runs = 0;
    return {
      chunk: () => ++runs >= chunks,
      get runs() {
        return runs;
      },
    };
  };

  it('runs one chunk per task until the job says done, then calls onDone once', async () => {
    vi.useFakeTimers();
    const job = counter(3);
    const onDone = vi.fn();
    const runner = runInChunks(job.chunk, onDone);
    expect(job.runs).toBe(0);
    await vi.advanceTimersToNextTimerAsync();
    expect(job.runs).toBe(1);
    await vi.runAllTimersAsync();
    expect(job.runs).toBe(3);
    expect(onDone).toHaveBeenCalledTimes(1);
    expect(runner.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stop() drops the chunks not yet run and leaves no timer', async () => {
    vi.useFakeTimers();
    const job = counter(10);
    const onDone = vi.fn();
    const runner = runInChunks(job.chunk, onDone);
    await vi.advanceTimersToNextTimerAsync();
    runner.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.runAllTimersAsync();
    expect(job.runs).toBe(1);
    expect(onDone).not.toHaveBeenCalled();
    expect(runner.done).toBe(true);
  });

  it('finish() runs the remaining chunks at once, and nothing runs after it', async () => {
    vi.useFakeTimers();
    const job = counter(5);
    const onDone = vi.fn();
    const runner = runInChunks(job.chunk, onDone);
    runner.finish();
    expect(job.runs).toBe(5);
    expect(onDone).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
    runner.finish();
    await vi.runAllTimersAsync();
    expect(job.runs).toBe(5);
    expect(onDone).toHaveBeenCalledTimes(1);
  });
});
