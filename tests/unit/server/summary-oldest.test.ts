import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangeLog, type ReferrerEntity } from '@/lib/changelog';
import { ReferrerSummary, oldest } from '@/server/summary';

const referrer = (id: string, since: number): ReferrerEntity => ({
  id: `watch|${id}`,
  key: `App.demo.refwatch.dev/shop/${id}`,
  controller: 'watch',
  kind: 'App.demo.refwatch.dev',
  namespace: 'shop',
  state: 'Waiting',
  since,
  references: 1,
  reconciles: 1,
});

describe('oldest', () => {
  it('picks the same referrers, in the same order, as sorting them all by since then id', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 4 }), fc.integer({ min: 0, max: 20 })), { maxLength: 200 }),
        fc.integer({ min: 0, max: 60 }),
        (rows, limit) => {
          const values = [...new Map(rows.map(([id, since]) => [id, referrer(id, since)])).values()];
          const sorted = [...values]
            .sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
            .slice(0, limit);
          expect(oldest(values, limit).map((r) => r.id)).toEqual(sorted.map((r) => r.id));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('ReferrerSummary stuck list, kept as referrers change', () => {
  it('lists what sorting every unresolved referrer past the threshold gives, after any changes, removals and passing of time', () => {
    const THRESHOLD = 10;
    const op = fc.oneof(
      fc.record({
        put: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'),
        since: fc.integer({ min: 0, max: 40 }),
        resolved: fc.boolean(),
      }),
      fc.record({ remove: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g') }),
      fc.record({ wait: fc.integer({ min: 1, max: 15 }) }),
      fc.constant({ look: true }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (ops, limit) => {
        const log = new ChangeLog();
        let now = 0;
        const summary = new ReferrerSummary(log, {
          stuckThresholdMs: THRESHOLD,
          stuckListLimit: limit,
          now: () => now,
        });
        const check = () => {
          const expected = log
            .snapshot({ entities: ['referrer'] })
            .entities.referrer.filter((r) => r.state !== 'Resolved' && r.since <= now - THRESHOLD)
            .sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
            .slice(0, limit);
          expect(summary.summary().stuckList.map((r) => r.key)).toEqual(expected.map((r) => r.key));
        };
        for (const o of ops) {
          if ('put' in o) {
            const r = {
              ...referrer(o.put, Math.min(o.since, now)),
              state: o.resolved ? ('Resolved' as const) : ('Waiting' as const),
            };
            log.put('referrer', r.id, r);
          } else if ('remove' in o) log.remove('referrer', referrer(o.remove, 0).id);
          else if ('wait' in o) now += o.wait;
          else check();
        }
        check();
        summary.stop();
      }),
      { numRuns: 300 },
    );
  });
});

describe('ReferrerSummary, when many referrers pass the threshold together', () => {
  it(
    'counts them stuck over several turns of the event loop, each short, and then all of them',
    { timeout: 60_000 },
    async () => {
      const log = new ChangeLog();
      const n = 50_000;
      for (let i = 0; i < n; i++) log.put('referrer', `watch|r${i}`, referrer(`r${i}`, i));
      const summary = new ReferrerSummary(log, { stuckThresholdMs: 0, now: () => n + 1 });
      try {
        const started = performance.now();
        const first = summary.summary().totals.stuck;
        expect(performance.now() - started).toBeLessThan(1000); // bounded by the budget, not the 50,000 referrers
        expect(first).toBeLessThan(n);
        await expect.poll(() => summary.summary().totals.stuck, { timeout: 50_000 }).toBe(n);
        expect(summary.summary().stuckList.map((s) => s.key)).toEqual(
          Array.from({ length: 50 }, (_, i) => `App.demo.refwatch.dev/shop/r${i}`),
        );
      } finally {
        summary.stop();
      }
    },
  );
});
