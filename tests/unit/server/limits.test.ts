import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/server/config';
import { MutationLimits, StreamSlots, clientOf } from '@/server/http/limits';

const req = (forwarded?: string) =>
  new Request('http://127.0.0.1:3000/api/v1/demo/runs', {
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  });

describe('clientOf', () => {
  it('is the nearest hop: the address a proxy appended, or the socket address Next put there', () => {
    expect(clientOf(req('127.0.0.1'))).toBe('127.0.0.1');
    expect(clientOf(req('203.0.113.9, 10.0.0.4'))).toBe('10.0.0.4');
    expect(clientOf(req('::ffff:127.0.0.1'))).toBe('127.0.0.1');
    expect(clientOf(req('::1'))).toBe('::1');
    expect(clientOf(req())).toBe('unknown');
  });
});

describe('MutationLimits', () => {
  it('holds all clients together to the total, however many they pose as', () => {
    const limits = new MutationLimits({ perClient: 1, total: 2, now: () => 0 });
    for (let i = 0; i < 8; i++) limits.take(`10.0.0.${i}`);
    expect(() => limits.take('10.0.0.99')).toThrow(
      expect.objectContaining({
        status: 429,
        message: expect.stringMatching(/all clients together: at most 2 per second/),
      }),
    );
  });

  it('forgets clients whose buckets have refilled, so posing as many clients does not grow memory', () => {
    let now = 0;
    const limits = new MutationLimits({ perClient: 1, total: 1_000_000, maxClients: 100, now: () => now });
    for (let i = 0; i < 100; i++) limits.take(`10.1.0.${i}`);
    expect(limits.size).toBe(100);
    now += 4000; // a burst of 4 refills in 4 s
    limits.take('10.2.0.1');
    expect(limits.size).toBe(1);
  });
});

describe('StreamSlots', () => {
  it('releases a slot once, however often release is called', () => {
    const slots = new StreamSlots({ perClient: 1, total: 10 });
    const release = slots.acquire('a');
    release();
    release();
    expect(slots.opened()).toBe(0);
    slots.acquire('a');
    expect(() => slots.acquire('a')).toThrow(expect.objectContaining({ status: 429, code: 'TooManyStreams' }));
  });
});

describe('the limits settings', () => {
  it('default to 5 changes a second, 16 streams per client and 256 in all', () => {
    expect(parseConfig({})).toMatchObject({ mutationRate: 5, streamsPerClient: 16, streamsTotal: 256 });
  });

  it.each([
    ['REFWATCH_MUTATION_RATE', '0', '--mutation-rate'],
    ['REFWATCH_STREAMS_PER_CLIENT', '1.5', '--streams-per-client'],
    ['REFWATCH_STREAMS_TOTAL', 'many', '--streams-total'],
  ])('refuse %s=%s naming the variable, its flag and what it accepts', (env, value, flag) => {
    expect(() => parseConfig({ [env]: value })).toThrow(
      expect.objectContaining({ message: expect.stringContaining(`${env} (flag ${flag})`) }),
    );
    expect(() => parseConfig({ [env]: value })).toThrow(/accepted: .*(number)/);
  });
});
