import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Deque } from '@/lib/queue';

describe('Deque', () => {
  it('behaves like an array used as a FIFO, across growth and wrap-around', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 999 }), fc.constant('shift' as const)), {
          maxLength: 300,
          size: 'medium',
        }),
        (ops) => {
          const d = new Deque<number>(4);
          const model: number[] = [];
          for (const op of ops) {
            if (op === 'shift') expect(d.shift()).toBe(model.shift());
            else {
              d.push(op);
              model.push(op);
            }
            expect(d.length).toBe(model.length);
            expect(d.peek()).toBe(model[0]);
          }
          expect([...d]).toEqual(model);
        },
      ),
    );
  });

  it('is empty after clear and usable again', () => {
    const d = new Deque<string>();
    for (let i = 0; i < 100; i++) d.push(`k${i}`);
    d.clear();
    expect(d.length).toBe(0);
    expect(d.shift()).toBeUndefined();
    d.push('x');
    expect(d.shift()).toBe('x');
  });
});
