import { describe, expect, it } from 'vitest';
import { stuckList, unlistedStuck, withServerStuck } from '@/components/panels/stuck';
import { objectDetails } from '@/components/panels/inspect';
import { normalizeSnapshot } from '@/components/data/snapshotQuery';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;

describe('stuckList', () => {
  it('lists the server’s stuck referrers oldest first, with ages from now', () => {
    const list = stuckList(demoSnapshot(NOW), NOW + 1000);
    expect(list.map((s) => s.key.split('/').pop())).toEqual(['payments', 'catalog', 'refunds']);
    expect(list[0]!.ageMs).toBe(261_000);
    expect(list[0]!.fix).toContain('namespace shop');
  });

  it('adds referrers unresolved past the threshold that the server has not listed yet', () => {
    const list = stuckList(demoSnapshot(NOW), NOW + 60_000);
    expect(list.map((s) => s.key.split('/').pop())).toEqual([
      'payments',
      'catalog',
      'refunds',
      'reports',
      'ingest',
      'checkout',
    ]);
    expect(list.find((s) => s.key.endsWith('/checkout'))?.message).toContain('2/3 replicas');
  });

  it('drops an entry whose referrer has resolved since', () => {
    const s = demoSnapshot(NOW);
    s.referrers.find((r) => r.key.endsWith('/catalog'))!.state = 'Resolved';
    expect(stuckList(s, NOW).some((x) => x.key.endsWith('/catalog'))).toBe(false);
  });
});

describe('the server’s stuck list, read again', () => {
  it('names the entries the browser added itself, and none while the server lists them all', () => {
    const s = demoSnapshot(NOW);
    expect(unlistedStuck(s, stuckList(s, NOW + 1000))).toEqual([]);
    const unlisted = unlistedStuck(s, stuckList(s, NOW + 60_000));
    expect(unlisted.map((id) => id.split('/').pop()).sort()).toEqual(['checkout', 'ingest', 'reports']);
  });

  it('takes the server’s diagnosis for every entry, limited to the referrers the snapshot holds', () => {
    const s = demoSnapshot(NOW);
    const checkout = s.referrers.find((r) => r.key.endsWith('/checkout'))!;
    const fresh = [
      ...s.stuck.map((e) => ({ ...e, message: `${e.message} (again)` })),
      { ...s.stuck[0]!, id: checkout.id, key: checkout.key, message: 'diagnosed by the server', fix: 'a fix' },
      { ...s.stuck[0]!, id: 'watch|App.demo.refwatch.dev/elsewhere/x', key: 'App.demo.refwatch.dev/elsewhere/x' },
    ];
    const merged = withServerStuck(s, fresh);
    expect(merged.stuck.some((e) => e.key.endsWith('/x'))).toBe(false);
    const list = stuckList(merged, NOW + 60_000);
    expect(list.find((e) => e.key === checkout.key)?.message).toBe('diagnosed by the server');
    expect(list.filter((e) => e.message.endsWith('(again)'))).toHaveLength(s.stuck.length);
    expect(unlistedStuck(merged, list)).not.toContain(checkout.id);
  });
});

describe('objectDetails', () => {
  it('gathers a referrer’s references with each referent’s cached state', () => {
    const d = objectDetails(demoSnapshot(NOW), 'App.demo.refwatch.dev/shop/checkout');
    expect(d.outgoing.map((o) => [o.fieldPath, o.referentEntity?.state])).toEqual([
      ['spec.cacheRef', 'NotReady'],
      ['spec.databaseRef', 'Ready'],
    ]);
    expect(d.referrers).toHaveLength(1);
  });

  it('lists who refers to a referent, and the controller watching its kind', () => {
    const d = objectDetails(demoSnapshot(NOW), 'Database.demo.refwatch.dev/shop/orders');
    expect(d.incoming.map((i) => i.referrer.split('/').pop())).toEqual(['checkout', 'storefront']);
    expect(d.controller?.state).toBe('Active');
  });
});

describe('the stuck threshold', () => {
  it('follows the server’s threshold from the snapshot, and 30 s from a server that sends none', () => {
    const s = demoSnapshot(NOW);
    const extra = (list: ReturnType<typeof stuckList>) =>
      list.filter((x) => x.fix === '').map((x) => x.key.split('/').pop());
    expect(extra(stuckList(s, NOW + 10_000))).not.toContain('checkout');
    expect(extra(stuckList({ ...s, stuckThresholdMs: 2000 }, NOW + 10_000))).toContain('checkout');
  });

  it('keeps a valid threshold from the wire and drops a malformed one', () => {
    expect(normalizeSnapshot({ ...demoSnapshot(NOW), stuckThresholdMs: 2000 }).stuckThresholdMs).toBe(2000);
    expect(normalizeSnapshot({ ...demoSnapshot(NOW), stuckThresholdMs: 'soon' }).stuckThresholdMs).toBeUndefined();
  });
});
