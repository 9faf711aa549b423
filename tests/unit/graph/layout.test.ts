import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  debounce,
  fcoseOptions,
  fitPositions,
  layeredPositions,
  packBoxes,
  seedPositions,
} from '@/components/graph/layout';

describe('fcoseOptions', () => {
  it('starts an incremental layout from the current positions and does not refit the view', () => {
    const o = fcoseOptions('incremental', 50);
    expect(o.randomize).toBe(false);
    expect(o.fit).toBe(false);
  });

  it('randomizes and fits only a full layout', () => {
    const o = fcoseOptions('full', 50);
    expect(o.randomize).toBe(true);
    expect(o.fit).toBe(true);
  });

  it('spreads a graph of summary nodes further apart', () => {
    expect(fcoseOptions('full', 30, { summaries: true }).idealEdgeLength).toBeGreaterThan(
      fcoseOptions('full', 30).idealEdgeLength,
    );
  });

  it('does not animate large graphs', () => {
    expect(fcoseOptions('incremental', 50).animate).toBe(true);
    expect(fcoseOptions('incremental', 3000).animate).toBe(false);
    expect(fcoseOptions('incremental', 3000).quality).toBe('draft');
  });
});

describe('seedPositions', () => {
  it('places a new node near its placed neighbours and leaves unconnected ones alone', () => {
    const placed = new Map([
      ['a', { x: 0, y: 0 }],
      ['b', { x: 200, y: 0 }],
    ]);
    const seeds = seedPositions(
      ['n', 'lonely'],
      [
        { source: 'a', target: 'n' },
        { source: 'n', target: 'b' },
      ],
      placed,
    );
    const n = seeds.get('n')!;
    expect(Math.hypot(n.x - 100, n.y - 0)).toBeLessThanOrEqual(61);
    expect(seeds.has('lonely')).toBe(false);
  });

  it('fans out siblings so they do not start on top of each other', () => {
    const placed = new Map([['hub', { x: 0, y: 0 }]]);
    const seeds = seedPositions(
      ['x', 'y'],
      [
        { source: 'hub', target: 'x' },
        { source: 'hub', target: 'y' },
      ],
      placed,
    );
    expect(seeds.get('x')).not.toEqual(seeds.get('y'));
  });
});

describe('debounce', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once for a burst of structural changes, and not at all after cancel', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const d = debounce(fn, 250);
    d.schedule();
    d.schedule();
    d.schedule();
    vi.advanceTimersByTime(300);
    expect(fn).toHaveBeenCalledTimes(1);
    d.schedule();
    d.cancel();
    vi.advanceTimersByTime(300);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('packBoxes', () => {
  it('moves disconnected components so that no two overlap', () => {
    const boxes = [
      { id: 'big', x1: 0, y1: 0, w: 600, h: 400 },
      { id: 'a', x1: 100, y1: 100, w: 120, h: 40 },
      { id: 'b', x1: 110, y1: 90, w: 120, h: 40 },
      { id: 'c', x1: -50, y1: 20, w: 80, h: 80 },
    ];
    const moves = packBoxes(boxes, 20);
    const placed = boxes.map((b) => ({ ...b, x1: b.x1 + moves.get(b.id)!.x, y1: b.y1 + moves.get(b.id)!.y }));
    for (const p of placed) {
      for (const q of placed) {
        if (p === q) continue;
        const apart = p.x1 + p.w <= q.x1 || q.x1 + q.w <= p.x1 || p.y1 + p.h <= q.y1 || q.y1 + q.h <= p.y1;
        expect(apart).toBe(true);
      }
    }
  });
});

describe('layeredPositions and fitPositions', () => {
  const n = (id: string, type: 'object' | 'controller', roles: ('referrer' | 'referent')[], namespace = 'shop') => ({
    id,
    type,
    roles,
    namespace,
    kind: 'K',
    key: id,
  });

  it('puts referrers left of referents and reference controllers rightmost, without overlap', () => {
    const nodes = [
      n('ctl', 'controller', []),
      ...Array.from({ length: 50 }, (_, i) => n(`app-${i}`, 'object', ['referrer'])),
      n('both', 'object', ['referrer', 'referent']),
      ...Array.from({ length: 30 }, (_, i) => n(`db-${i}`, 'object', ['referent'])),
    ];
    const at = layeredPositions(nodes);
    expect(at.size).toBe(nodes.length);
    const xs = (prefix: string) => [...at].filter(([id]) => id.startsWith(prefix)).map(([, p]) => p.x);
    expect(Math.max(...xs('app-'))).toBeLessThan(at.get('both')!.x);
    expect(at.get('both')!.x).toBeLessThan(Math.min(...xs('db-')));
    expect(Math.max(...xs('db-'))).toBeLessThan(at.get('ctl')!.x);
    expect(new Set([...at.values()].map((p) => `${p.x},${p.y}`)).size).toBe(nodes.length);
  });

  it('fits the positions into the viewport, centred, never above the readable zoom', () => {
    const fit = fitPositions(
      [
        { x: 0, y: 0 },
        { x: 1000, y: 500 },
      ],
      1100,
      600,
      0,
      50,
    );
    expect(fit.zoom).toBeCloseTo(1);
    expect(fit.pan).toEqual({ x: 50, y: 50 });
    expect(fitPositions([{ x: 0, y: 0 }], 1000, 600).zoom).toBe(1.4);
  });
});
