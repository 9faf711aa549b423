import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import type { ReferentEntity, ReferrerEntity } from '@/lib/changelog/entities';
import { StateHistory } from '@/server/state-history';

const KEY = 'App.demo.refwatch.dev/shop/web';

function referrer(state: ReferrerEntity['state'], since: number, reason?: string): ReferrerEntity {
  return {
    id: `watch|${KEY}`,
    key: KEY,
    controller: 'watch',
    kind: 'App.demo.refwatch.dev',
    namespace: 'shop',
    state,
    since,
    references: 1,
    reconciles: 1,
    ...(reason ? { reason } : {}),
  };
}

function referent(key: string, state: ReferentEntity['state'], changedAt: number): ReferentEntity {
  return { id: key, key, kind: 'Secret', namespace: 'shop', state, referencedBy: 1, changedAt };
}

describe('StateHistory', () => {
  it('records each state a referrer and a referent enter, newest first, and not a put that keeps the state', () => {
    const log = new ChangeLog();
    const h = new StateHistory(log);
    h.start();
    log.put('referrer', `watch|${KEY}`, referrer('Waiting', 1, 'NotFound'));
    log.put('referrer', `watch|${KEY}`, { ...referrer('Waiting', 1, 'NotFound'), reconciles: 2 });
    log.put('referrer', `watch|${KEY}`, referrer('Resolved', 5));
    log.put('referent', 'Secret/shop/db', referent('Secret/shop/db', 'NotFound', 2));
    log.put('referent', 'Secret/shop/db', referent('Secret/shop/db', 'Ready', 4));
    expect(h.of(KEY).map((t) => [t.at, t.role, t.controller, t.state, t.reason])).toEqual([
      [5, 'referrer', 'watch', 'Resolved', undefined],
      [1, 'referrer', 'watch', 'Waiting', 'NotFound'],
    ]);
    expect(h.of('Secret/shop/db').map((t) => t.state)).toEqual(['Ready', 'NotFound']);
    h.stop();
  });

  it('keeps at most capacity transitions per object, the newest ones', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom<ReferrerEntity['state']>('Resolved', 'Waiting', 'NotFound', 'Error'), {
          maxLength: 60,
        }),
        (capacity, states) => {
          const log = new ChangeLog();
          const h = new StateHistory(log, { capacity });
          h.start();
          const entered: string[] = [];
          states.forEach((s, i) => {
            if (entered.at(-1) !== s) entered.push(s);
            log.put('referrer', `watch|${KEY}`, referrer(s, i));
          });
          expect(h.of(KEY).map((t) => t.state)).toEqual(entered.slice(-capacity).reverse());
          h.stop();
        },
      ),
    );
  });

  it('forgets an object once the log holds it in no role, so nothing outlives what refwatch tracks', () => {
    const log = new ChangeLog();
    const h = new StateHistory(log);
    h.start();
    for (let i = 0; i < 500; i++) {
      const key = `Secret/shop/s${i}`;
      log.put('referent', key, referent(key, 'NotFound', i));
      log.put('referent', key, referent(key, 'Ready', i + 1));
    }
    log.put('referrer', `watch|${KEY}`, referrer('Waiting', 1));
    log.put('referent', KEY, referent(KEY, 'Ready', 2));
    expect(h.size).toBe(501);
    for (let i = 0; i < 500; i++) log.remove('referent', `Secret/shop/s${i}`);
    expect(h.size).toBe(1);
    log.remove('referrer', `watch|${KEY}`);
    expect(h.of(KEY)).toHaveLength(2); // still a referent
    log.remove('referent', KEY);
    expect(h.size).toBe(0);
    expect(h.of(KEY)).toEqual([]);
    h.stop();
  });

  it('catches up from a snapshot when one transaction outgrows the log’s retained window', () => {
    const log = new ChangeLog({ retainRevisions: 10 });
    const h = new StateHistory(log);
    h.start();
    log.put('referent', 'Secret/shop/gone', referent('Secret/shop/gone', 'Ready', 0));
    log.transaction(() => {
      log.remove('referent', 'Secret/shop/gone');
      for (let i = 0; i < 50; i++) log.put('referent', `Secret/shop/s${i}`, referent(`Secret/shop/s${i}`, 'Ready', i));
    });
    expect(h.size).toBe(50);
    expect(h.of('Secret/shop/gone')).toEqual([]);
    h.stop();
  });

  it('stops following the log at stop, and rejects a capacity below 1', () => {
    const log = new ChangeLog();
    const h = new StateHistory(log);
    h.start();
    h.stop();
    log.put('referrer', `watch|${KEY}`, referrer('Waiting', 1));
    expect(h.size).toBe(0);
    expect(() => new StateHistory(log, { capacity: 0 })).toThrow(/capacity must be a whole number from 1 up/);
  });
});
