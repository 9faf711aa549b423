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

const { tokenMatches } = await import('@/lib/model');
const { start, api } = await import('./harness');

const TOKEN = 'embedded-token-0123456789';
const OTHER_LENGTHS = ['x', '', TOKEN.slice(0, -1), `${TOKEN}0`, `${TOKEN}-much-longer-than-the-token`];

describe('the bearer token compare', () => {
  it('tokenMatches compares two 32-byte digests whatever the lengths, and only the token itself matches', () => {
    for (const given of OTHER_LENGTHS) {
      compared.length = 0;
      expect(tokenMatches(given, TOKEN), given).toBe(false);
      expect(compared, given).toEqual([[32, 32]]);
    }
    compared.length = 0;
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
    expect(compared).toEqual([
      [32, 32],
      [32, 32],
    ]);
  });

  it('the embedded API server refuses a token of another length with 401, through the same digest compare', async () => {
    const s = await start({ token: TOKEN });
    for (const given of OTHER_LENGTHS) {
      compared.length = 0;
      const r = await api(s, 'GET', '/api/v1/namespaces', undefined, { authorization: `Bearer ${given}` });
      expect(r.status, given).toBe(401);
      expect(compared, given).toEqual([[32, 32]]);
    }
    compared.length = 0;
    expect((await api(s, 'GET', '/api/v1/namespaces', undefined, { authorization: `Bearer ${TOKEN}` })).status).toBe(
      200,
    );
    expect(compared).toEqual([[32, 32]]);
  });
});
