import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ChangeLog, type ReferrerEntity } from '@/lib/changelog';
import { buildSnapshot, snapshotJson } from '@/server/snapshot';

const cluster = { mode: 'embedded' as const, server: 'http://127.0.0.1:1', reachable: true };

function referrer(i: number, state: ReferrerEntity['state'], note: string): ReferrerEntity {
  const key = `App.demo.refwatch.dev/shop/app-${i}`;
  return { id: `watch|${key}`, key, controller: 'watch', kind: 'App.demo.refwatch.dev', namespace: 'shop', state, since: i, references: 1, reconciles: 1, message: note };
}

describe('snapshotJson', () => {
  it('is JSON.stringify of the snapshot, also after entities change between snapshots', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ i: fc.integer({ min: 0, max: 20 }), state: fc.constantFrom('Resolved', 'Waiting', 'NotFound', 'Error'), note: fc.string() }), { maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 10 }),
        (puts, removals) => {
          const log = new ChangeLog();
          const half = Math.floor(puts.length / 2);
          for (const p of puts.slice(0, half)) log.put('referrer', `watch|App.demo.refwatch.dev/shop/app-${p.i}`, referrer(p.i, p.state as ReferrerEntity['state'], p.note));
          const first = buildSnapshot({ changelog: log }, cluster, []);
          expect(snapshotJson(first)).toBe(JSON.stringify(first));
          for (const p of puts.slice(half)) log.put('referrer', `watch|App.demo.refwatch.dev/shop/app-${p.i}`, referrer(p.i, p.state as ReferrerEntity['state'], p.note));
          for (const r of removals) log.remove('referrer', `watch|App.demo.refwatch.dev/shop/app-${r}`);
          const second = buildSnapshot({ changelog: log }, cluster, []);
          expect(JSON.parse(snapshotJson(second))).toEqual(JSON.parse(JSON.stringify(second)));
          expect(snapshotJson(second)).toBe(JSON.stringify(second));
        },
      ),
    );
  });
});
