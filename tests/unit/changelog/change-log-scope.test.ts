import { describe, expect, it } from 'vitest';
import { ChangeLog, type AnyEntity, type EntityKind } from '@/lib/changelog';
import { queue, reference, referent } from './fixtures';

const ids = (log: ChangeLog, filter: Parameters<ChangeLog['snapshot']>[0]) =>
  Object.entries(log.snapshot(filter).entities).flatMap(([entity, values]) =>
    (values as AnyEntity[]).map((v) => `${entity} ${v.id}`),
  );

describe('ChangeLog scopes', () => {
  it('matches q against the object keys an entity names, in any case', () => {
    const log = new ChangeLog();
    log.put('referent', referent('shop', 'orders').id, referent('shop', 'orders'));
    log.put('referent', referent('shop', 'users').id, referent('shop', 'users'));
    log.put('reference', reference('shop', 'web', 'orders').id, reference('shop', 'web', 'orders'));
    log.put('queue', 'apps', queue('apps'));
    expect(ids(log, { q: 'ORDERS' })).toEqual([
      'referent Database.demo.refwatch.dev/shop/orders',
      `reference ${reference('shop', 'web', 'orders').id}`,
    ]);
    expect(ids(log, { q: 'shop/web' })).toEqual([`reference ${reference('shop', 'web', 'orders').id}`]);
    const seen = log.revision;
    log.put('referent', referent('shop', 'users').id, referent('shop', 'users', 'NotReady'));
    log.put('referent', referent('shop', 'orders').id, referent('shop', 'orders', 'NotReady'));
    const since = log.changesSince(seen, { q: 'orders' });
    expect(since.resnapshot ? [] : since.changes.map((c) => c.id)).toEqual(['Database.demo.refwatch.dev/shop/orders']);
  });

  it('serves a namespace from its index, tombstones and moves included', () => {
    const log = new ChangeLog();
    for (const ns of ['shop', 'billing', 'shop'])
      log.put('referent', referent(ns, `db-${ns}`).id, referent(ns, `db-${ns}`));
    log.put('referent', referent('shop', 'b').id, referent('shop', 'b'));
    log.remove('referent', referent('shop', 'b').id);
    expect(ids(log, { namespace: 'shop' })).toEqual(['referent Database.demo.refwatch.dev/shop/db-shop']);
    // The same id under another namespace moves between indexes.
    log.put('referent', referent('shop', 'db-shop').id, { ...referent('shop', 'db-shop'), namespace: 'billing' });
    expect(ids(log, { namespace: 'shop' })).toEqual([]);
    expect(ids(log, { namespace: 'billing' })).toHaveLength(2);
  });

  it('sends a dynamic filter tombstones for changed entities outside it, and a static one none', () => {
    const log = new ChangeLog();
    const a = referent('shop', 'a');
    log.put('referent', a.id, a);
    const inScope = new Set([a.id]);
    const where = (_e: EntityKind, v: AnyEntity) => inScope.has(v.id);
    const seen = log.revision;
    inScope.clear();
    log.put('referent', a.id, referent('shop', 'a', 'NotReady'));
    const dynamic = log.changesSince(seen, { where, dynamic: true });
    const fixed = log.changesSince(seen, { where });
    expect(dynamic.resnapshot ? [] : dynamic.changes.map((c) => `${c.id} ${c.removed}`)).toEqual([`${a.id} true`]);
    expect(fixed.resnapshot ? [] : fixed.changes).toEqual([]);
  });

  it('tells observers each put and remove with the value it replaces', () => {
    const log = new ChangeLog();
    const seen: string[] = [];
    const stop = log.observe((entity, id, prev, next) =>
      seen.push(
        `${entity} ${id} ${(prev as { state?: string } | undefined)?.state ?? '-'} → ${(next as { state?: string } | undefined)?.state ?? '-'}`,
      ),
    );
    const a = referent('shop', 'a');
    log.put('referent', a.id, a);
    log.put('referent', a.id, referent('shop', 'a', 'NotReady'));
    log.remove('referent', a.id);
    log.put('referent', a.id, a);
    stop();
    log.remove('referent', a.id);
    expect(seen).toEqual([
      `referent ${a.id} - → Ready`,
      `referent ${a.id} Ready → NotReady`,
      `referent ${a.id} NotReady → -`,
      `referent ${a.id} - → Ready`,
    ]);
  });

  it('keeps the kinds named in always, whatever the other fields say, on both snapshot paths', () => {
    const log = new ChangeLog();
    log.put('queue', 'apps', queue('apps'));
    log.put('referent', referent('shop', 'a').id, referent('shop', 'a'));
    log.put('referent', referent('billing', 'b').id, referent('billing', 'b'));
    expect(ids(log, { namespace: 'shop', always: ['queue'] })).toEqual([
      'referent Database.demo.refwatch.dev/shop/a',
      'queue apps',
    ]);
    expect(ids(log, { q: 'billing', always: ['queue'] })).toEqual([
      'referent Database.demo.refwatch.dev/billing/b',
      'queue apps',
    ]);
  });

  it('reads a namespace in steps as it was at the first step, when entries move out, back in, or in from elsewhere meanwhile', () => {
    const log = new ChangeLog();
    const a = referent('shop', 'a');
    const b = referent('shop', 'b');
    const c = referent('shop', 'c');
    const d = referent('shop', 'd');
    for (const r of [a, b, c, d]) log.put('referent', r.id, r);
    const elsewhere = referent('billing', 'e');
    log.put('referent', elsewhere.id, elsewhere);
    const steps = log.snapshotSteps({ namespace: 'shop' }, 1);
    steps.next(); // waits before a
    // a moves out and back: filed again at the end of the index, read once, as it was.
    log.put('referent', a.id, { ...a, namespace: 'billing' });
    log.put('referent', a.id, { ...a, state: 'NotReady' });
    steps.next(); // a read; waits before b
    // c changes after a was read: the walk has not reached it, so its old state is kept for it.
    log.put('referent', c.id, referent('shop', 'c', 'NotReady'));
    // d moves out before the walk reaches it; e moves in.
    log.put('referent', d.id, { ...d, namespace: 'billing' });
    log.put('referent', elsewhere.id, { ...elsewhere, namespace: 'shop' });
    let r = steps.next();
    while (!r.done) r = steps.next();
    expect(r.value.entities.referent.map((e) => `${e.key} ${e.state}`).sort()).toEqual(
      [a, b, c, d].map((e) => `${e.key} Ready`),
    );
  });
});
