import { describe, expect, it } from 'vitest';
import { requestsRatio, type RequestCount } from '@/bench/peer/requests-ratio';

const run = (implementation: string, perApp: number, unresolved = 0): RequestCount => ({
  implementation,
  apps: 1000,
  unresolved,
  perApp,
});

describe('requestsRatio', () => {
  it("divides refwatch's requests per App by the other implementation's", () => {
    expect(requestsRatio(run('refwatch', 1.02), run('cr-watch', 1.02))).toEqual({ ratio: 1 });
    expect(requestsRatio(run('refwatch', 2.04), run('cr-watch', 1.02))).toEqual({ ratio: 2 });
  });

  it('says a near-zero denominator is not measurable instead of printing an absurd ratio', () => {
    const r = requestsRatio(run('refwatch', 1.02), run('cr-watch', 0.003));
    expect(r).toEqual({
      notMeasurable:
        "cr-watch counted 0.00 requests/App, below the 1.00 its 1000 resolved Apps' status writes alone make: kube-apiserver's counts were not complete when read",
    });
  });

  it('says a negative count is not measurable, whichever side it is on', () => {
    expect(requestsRatio(run('refwatch', -0.4), run('cr-watch', 1.02))).toMatchObject({
      notMeasurable: expect.stringMatching(/^refwatch counted -0\.40 requests\/App/),
    });
    expect(requestsRatio(run('refwatch', 1.02), run('cr-watch', Number.NaN))).toMatchObject({
      notMeasurable: expect.stringMatching(/^cr-watch counted NaN requests\/App/),
    });
  });

  it('lowers the floor by the Apps that did not resolve, which wrote no status', () => {
    expect(requestsRatio(run('refwatch', 0.9, 174), run('cr-watch', 1.02))).toEqual({ ratio: 0.9 / 1.02 });
    expect(requestsRatio(run('refwatch', 0.8, 174), run('cr-watch', 1.02))).toMatchObject({
      notMeasurable: expect.stringContaining('below the 0.83 its 826 resolved Apps'),
    });
  });
});
