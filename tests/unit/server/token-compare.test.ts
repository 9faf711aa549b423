import { describe, expect, it, vi } from 'vitest';

// Records what each constant-time compare is given, to see whether the token's length decides anything before it.
const compared = vi.hoisted(() => [] as Array<[number, number]>);
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.push([a.byteLength, b.byteLength]);
      return real.timingSafeEqual(a, b);
    },
  };
});

const { guardMutation } = await import('@/server/http/guard');
const { MutationLimits } = await import('@/server/http/limits');

const TOKEN = 'k8s-refwatch-token-0123456789';

function post(authorization: string): Request {
  return new Request('http://127.0.0.1:3000/api/v1/demo/runs', {
    method: 'POST',
    headers: { host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000', authorization },
  });
}

describe('the token compare', () => {
  it('compares digests of one length whatever the length given, so timing cannot tell the token length', () => {
    for (const given of ['x', `${TOKEN}-longer-than-the-token`, TOKEN.slice(0, -1), '']) {
      compared.length = 0;
      expect(() =>
        guardMutation(post(`Bearer ${given}`), {
          token: TOKEN,
          limits: new MutationLimits({ perClient: 100, total: 1000 }),
        }),
      ).toThrow(expect.objectContaining({ status: 401 }));
      expect(compared, given).toEqual([[32, 32]]);
    }
    compared.length = 0;
    expect(() =>
      guardMutation(post(`Bearer ${TOKEN}`), {
        token: TOKEN,
        limits: new MutationLimits({ perClient: 100, total: 1000 }),
      }),
    ).not.toThrow();
    expect(compared).toEqual([[32, 32]]);
  });
});
