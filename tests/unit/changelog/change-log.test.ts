import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { ChangeLog, type Change, type ChangesSince } from '@/lib/changelog';
import { RefwatchError } from '@/lib/model';
import { event, queue, reference, referent } from './fixtures';

function changes(result: ChangesSince): Change[] {
  if (result.resnapshot) throw new Error(`expected changes, got a resnapshot at ${result.revision}`);
  return result.changes;
}

/** What a client sees of each change: entity, id, and its state or a tombstone. */
function summary(result: ChangesSince): string[] {
  return changes(result).map(
    (c) => `${c.entity} ${c.id} ${c.removed ? 'removed' : `${'state' in c.value ? c.value.state : 'value'}`}`,
  );
}

describe('ChangeLog revisions', () => {
  it('starts at revision 0 and numbers each put and remove', () => {
    const log = new ChangeLog();
    expect(log.revision).toBe(0);
    const a = referent('shop', 'orders');
    expect(log.put('referent', a.id, a)).toBe(1);
    expect(log.put('referent', a.id, { ...a, state: 'NotReady' })).toBe(2);
    expect(log.remove('referent', a.id)).toBe(3);
    expect(log.revision).toBe(3);
  });

  it('returns undefined and keeps the revision when removing what is absent or already removed', () => {
    const log = new ChangeLog();
    expect(log.remove('referent', 'nope')).toBeUndefined();
    const a = referent('shop', 'orders');
    log.put('referent', a.id, a);
    log.remove('referent', a.id);
    expect(log.remove('referent', a.id)).toBeUndefined();
    expect(log.revision).toBe(2);
  });

  it('gets the latest value, and nothing for a tombstone', () => {
    const log = new ChangeLog();
    const a = referent('shop', 'orders');
    log.put('referent', a.id, a);
    log.put('referent', a.id, { ...a, state: 'NotReady' });
    expect(log.get('referent', a.id)?.state).toBe('NotReady');
    expect(log.get('reference', a.id)).toBeUndefined();
    log.remove('referent', a.id);
    expect(log.get('referent', a.id)).toBeUndefined();
  });

  it('counts live entities per kind and in total, not tombstones', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('shop', 'b'));
    log.put('queue', 'apps', queue('apps'));
    log.remove('referent', 'a');
    expect(log.size('referent')).toBe(1);
    expect(log.size('queue')).toBe(1);
    expect(log.size('event')).toBe(0);
    expect(log.size()).toBe(2);
  });

  it('rejects an unknown entity kind and bad options with an error naming the field', () => {
    expect(() => new ChangeLog({ maxEvents: -1 })).toThrow(/maxEvents must be a non-negative integer/);
    expect(() => new ChangeLog({ retainRevisions: 1.5 })).toThrow(RefwatchError);
    const log = new ChangeLog();
    expect(() => log.put('nonsense' as 'queue', 'x', queue('x'))).toThrow(
      /unknown entity kind "nonsense"; use one of referrer/,
    );
  });
});

describe('ChangeLog.snapshot', () => {
  it('holds the live entities of every kind at the latest revision', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('shop', 'b'));
    log.put('queue', 'apps', queue('apps', 3));
    log.remove('referent', 'a');
    const snap = log.snapshot();
    expect(snap.revision).toBe(4);
    expect(snap.entities.referent.map((r) => r.id)).toEqual([referent('shop', 'b').id]);
    expect(snap.entities.queue).toEqual([queue('apps', 3)]);
    expect(snap.entities.referrer).toEqual([]);
  });

  it('keeps only what matches a namespace, kind or entity filter', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('billing', 'b'));
    log.put('reference', 'r', reference('shop', 'web', 'a'));
    log.put('queue', 'apps', queue('apps'));
    const shop = log.snapshot({ namespace: 'shop' });
    expect(shop.entities.referent.map((r) => r.namespace)).toEqual(['shop']);
    expect(shop.entities.reference).toHaveLength(1);
    expect(shop.entities.queue).toEqual([]); // a queue has no namespace, so a namespace filter excludes it
    const refsOnly = log.snapshot({ entities: ['reference'], kind: 'Database.demo.refwatch.dev' });
    expect(refsOnly.entities.reference).toHaveLength(1);
    expect(refsOnly.entities.referent).toEqual([]);
    expect(log.snapshot({ kind: 'Cache.demo.refwatch.dev' }).entities.referent).toEqual([]);
  });

  it('reads a kind of many thousands in steps, in order, as it was at its first revision', () => {
    // More entities than two chunks of the read hold (32,768 each), and a last chunk part full.
    const n = 70_001;
    const log = new ChangeLog();
    for (let i = 0; i < n; i++) log.put('referent', `r${i}`, referent(`ns-${i % 3}`, `r${i}`));
    const expected = log.snapshot();
    const steps = log.snapshotSteps({}, 1000);
    let r = steps.next();
    for (let i = 0; !r.done; i++) {
      // Changes while it is read: a state changed, one removed, one added; none is in what it reads.
      log.put('referent', `r${(i * 7919) % n}`, referent('ns-0', `r${(i * 7919) % n}`, 'NotReady'));
      if (i === 3) log.remove('referent', 'r40000');
      if (i === 5) log.put('referent', 'late', referent('ns-0', 'late'));
      r = steps.next();
    }
    expect(r.value.revision).toBe(expected.revision);
    expect(r.value.entities.referent).toHaveLength(n);
    const wrong = r.value.entities.referent.filter((e, i) => e !== expected.entities.referent[i]);
    expect(wrong).toEqual([]);
    // From the namespace's index: the same entities as the whole log holds there now.
    const namespaced = log.snapshot({ namespace: 'ns-1' }).entities.referent.map((e) => e.id);
    const inNs1 = log.snapshot().entities.referent.filter((e) => e.namespace === 'ns-1');
    expect(namespaced.length).toBeGreaterThan(23_000);
    expect(namespaced.sort()).toEqual(inNs1.map((e) => e.id).sort());
  });
});

describe('ChangeLog.changesSince', () => {
  it('returns nothing new at the latest revision', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    expect(log.changesSince(log.revision)).toEqual({ resnapshot: false, revision: 1, changes: [] });
  });

  it('coalesces several updates of one entity into its latest state', () => {
    const log = new ChangeLog();
    const a = referent('shop', 'a');
    log.put('referent', 'a', { ...a, state: 'NotFound' });
    log.put('referent', 'a', { ...a, state: 'NotReady' });
    log.put('referent', 'a', { ...a, state: 'Ready' });
    const result = log.changesSince(0);
    expect(summary(result)).toEqual(['referent a Ready']);
    expect(changes(result)[0]!.revision).toBe(3);
  });

  it('lists changes oldest first, by each entity’s latest change', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('shop', 'b'));
    log.put('referent', 'c', referent('shop', 'c'));
    log.put('referent', 'a', referent('shop', 'a', 'NotReady'));
    expect(summary(log.changesSince(1))).toEqual(['referent b Ready', 'referent c Ready', 'referent a NotReady']);
    expect(changes(log.changesSince(1)).map((c) => c.revision)).toEqual([2, 3, 4]);
  });

  it('skips an entity created and removed since the client looked: it never saw it', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    const seen = log.revision;
    log.put('referent', 'b', referent('shop', 'b'));
    log.put('referent', 'b', referent('shop', 'b', 'NotReady'));
    log.remove('referent', 'b');
    expect(summary(log.changesSince(seen))).toEqual([]);
    expect(log.changesSince(seen).revision).toBe(4);
  });

  it('sends a tombstone for an entity the client saw, then updated and removed', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    const seen = log.revision;
    log.put('referent', 'a', referent('shop', 'a', 'NotReady'));
    log.remove('referent', 'a');
    expect(changes(log.changesSince(seen))).toEqual([{ entity: 'referent', id: 'a', revision: 3, removed: true }]);
  });

  it('sends the value of an entity put again after its removal', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    const seen = log.revision;
    log.remove('referent', 'a');
    log.put('referent', 'a', referent('shop', 'a', 'NotReady'));
    expect(summary(log.changesSince(seen))).toEqual(['referent a NotReady']);
    expect(summary(log.changesSince(0))).toEqual(['referent a NotReady']);
  });

  it('skips an entity the client saw removed, that came back and went again', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.remove('referent', 'a');
    const sawItGone = log.revision;
    log.put('referent', 'a', referent('shop', 'a'));
    log.remove('referent', 'a');
    expect(summary(log.changesSince(sawItGone))).toEqual([]);
    expect(summary(log.changesSince(1))).toEqual(['referent a removed']);
  });

  it('answers resnapshot for a revision the log never handed out', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    // A client that saw another process's log, or sent garbage as Last-Event-ID.
    for (const rev of [2, 99, -1, 0.5, Number.NaN]) {
      expect(log.changesSince(rev)).toEqual({ resnapshot: true, revision: 1 });
    }
  });

  it('filters changes by namespace, kind and entity', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('billing', 'b'));
    log.put('reference', 'r', reference('shop', 'web', 'a'));
    log.put('queue', 'apps', queue('apps'));
    log.remove('referent', 'b');
    expect(changes(log.changesSince(0, { namespace: 'shop' })).map((c) => `${c.entity} ${c.id}`)).toEqual([
      'referent a',
      'reference r',
    ]);
    expect(changes(log.changesSince(0, { entities: ['queue'] })).map((c) => c.id)).toEqual(['apps']);
    expect(changes(log.changesSince(0, { kind: 'Cache.demo.refwatch.dev' }))).toEqual([]);
  });

  it('filters tombstones by the removed entity’s last namespace', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'b', referent('billing', 'b'));
    const seen = log.revision;
    log.remove('referent', 'a');
    log.remove('referent', 'b');
    expect(summary(log.changesSince(seen, { namespace: 'shop' }))).toEqual(['referent a removed']);
    expect(summary(log.changesSince(seen, { namespace: 'billing' }))).toEqual(['referent b removed']);
  });

  it('sends a tombstone to a filtered client when an entity moves out of its namespace', () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('referent', 'z', referent('billing', 'z'));
    const seen = log.revision;
    log.put('referent', 'a', referent('billing', 'a'));
    log.put('referent', 'z', referent('billing', 'z', 'NotReady'));
    expect(summary(log.changesSince(seen, { namespace: 'shop' }))).toEqual(['referent a removed']);
    expect(summary(log.changesSince(seen, { namespace: 'billing' }))).toEqual([
      'referent a Ready',
      'referent z NotReady',
    ]);
  });
});

describe('ChangeLog events', () => {
  it('expires the oldest event beyond maxEvents, without a tombstone', () => {
    const log = new ChangeLog({ maxEvents: 2 });
    log.put('event', 'e1', event('e1'));
    const seen = log.revision;
    log.put('event', 'e2', event('e2'));
    log.put('event', 'e3', event('e3'));
    expect(log.size('event')).toBe(2);
    expect(log.get('event', 'e1')).toBeUndefined();
    expect(log.snapshot().entities.event.map((e) => e.id)).toEqual(['e2', 'e3']);
    expect(summary(log.changesSince(seen))).toEqual(['event e2 value', 'event e3 value']);
    expect(summary(log.changesSince(0))).toEqual(['event e2 value', 'event e3 value']);
  });

  it('counts an event put again as recent, so it outlives older ones', () => {
    const log = new ChangeLog({ maxEvents: 2 });
    log.put('event', 'e1', event('e1'));
    log.put('event', 'e2', event('e2'));
    log.put('event', 'e1', { ...event('e1'), message: 'again' });
    log.put('event', 'e3', event('e3'));
    expect(log.snapshot().entities.event.map((e) => e.id)).toEqual(['e1', 'e3']);
  });

  it('drops a removed event silently, at no new revision', () => {
    const log = new ChangeLog();
    log.put('event', 'e1', event('e1'));
    expect(log.remove('event', 'e1')).toBe(1);
    expect(log.revision).toBe(1);
    expect(log.get('event', 'e1')).toBeUndefined();
    expect(summary(log.changesSince(0))).toEqual([]);
  });

  it('never lets events count against other kinds', () => {
    const log = new ChangeLog({ maxEvents: 1 });
    log.put('referent', 'a', referent('shop', 'a'));
    log.put('event', 'e1', event('e1'));
    log.put('event', 'e2', event('e2'));
    expect(log.size('referent')).toBe(1);
    expect(log.size('event')).toBe(1);
  });
});

describe('ChangeLog compaction', () => {
  it('drops tombstones older than the retained window, and resnapshots clients older than them', () => {
    const log = new ChangeLog({ retainRevisions: 3 });
    log.put('referent', 'a', referent('shop', 'a')); // 1
    log.remove('referent', 'a'); // 2: the tombstone
    log.put('referent', 'b', referent('shop', 'b')); // 3
    log.put('referent', 'b', referent('shop', 'b', 'NotReady')); // 4
    log.put('referent', 'b', referent('shop', 'b')); // 5
    expect(log.compactedRevision).toBe(0); // 2 is not older than 5 - 3
    expect(summary(log.changesSince(1))).toEqual(['referent a removed', 'referent b Ready']);
    log.put('referent', 'c', referent('shop', 'c')); // 6: 2 < 6 - 3, so the tombstone goes
    expect(log.compactedRevision).toBe(2);
    expect(log.changesSince(1)).toEqual({ resnapshot: true, revision: 6 });
    expect(summary(log.changesSince(2))).toEqual(['referent b Ready', 'referent c Ready']);
  });

  it('keeps a tombstone that was put again before it aged out', () => {
    const log = new ChangeLog({ retainRevisions: 1 });
    log.put('referent', 'a', referent('shop', 'a')); // 1
    log.remove('referent', 'a'); // 2
    log.put('referent', 'a', referent('shop', 'a', 'NotReady')); // 3
    log.put('referent', 'b', referent('shop', 'b')); // 4
    log.put('referent', 'c', referent('shop', 'c')); // 5
    expect(log.compactedRevision).toBe(0);
    expect(log.get('referent', 'a')?.state).toBe('NotReady');
    expect(summary(log.changesSince(0))).toEqual(['referent a NotReady', 'referent b Ready', 'referent c Ready']);
  });

  it('treats an entity put after its tombstone was compacted as new', () => {
    const log = new ChangeLog({ retainRevisions: 0 });
    log.put('referent', 'a', referent('shop', 'a')); // 1
    log.remove('referent', 'a'); // 2
    log.put('referent', 'b', referent('shop', 'b')); // 3: drops the tombstone of 2
    const seen = log.revision;
    log.put('referent', 'a', referent('shop', 'a')); // 4
    log.remove('referent', 'a'); // 5
    expect(log.compactedRevision).toBe(2);
    expect(summary(log.changesSince(seen))).toEqual([]);
  });

  it('compacts as it goes, so an explicit compact finds nothing left to drop', () => {
    const log = new ChangeLog({ retainRevisions: 2 });
    for (const name of ['a', 'b', 'c']) log.put('referent', name, referent('shop', name));
    log.remove('referent', 'a'); // 4
    log.remove('referent', 'b'); // 5
    log.put('queue', 'apps', queue('apps')); // 6
    expect(log.compact()).toBe(0); // 4 is not older than 6 - 2
    log.put('queue', 'apps', queue('apps', 1)); // 7: drops 4 (4 < 7 - 2)
    expect(log.compactedRevision).toBe(4);
    expect(log.compact()).toBe(0);
    expect(log.changesSince(3)).toMatchObject({ resnapshot: true });
    expect(summary(log.changesSince(4))).toEqual(['referent b removed', 'queue apps value']);
  });

  it('keeps retained memory bounded under churn: only recent tombstones stay', () => {
    const log = new ChangeLog({ retainRevisions: 100 });
    for (let i = 0; i < 10_000; i++) {
      log.put('referent', `r${i}`, referent('shop', `r${i}`));
      log.remove('referent', `r${i}`);
    }
    // Every tombstone older than the window is gone; tombstones sit on even revisions.
    expect(log.compactedRevision).toBeGreaterThanOrEqual(log.revision - 102);
    expect(log.changesSince(log.revision - 100)).toMatchObject({ resnapshot: false });
    expect(changes(log.changesSince(log.revision - 100)).length).toBeLessThanOrEqual(50);
    expect(log.size()).toBe(0);
  });

  it('lets go of tombstones by age once churn stops, though few revisions followed them', () => {
    let now = 0;
    const log = new ChangeLog({ retainRevisions: 10_000, retainMs: 60_000, now: () => now });
    for (let i = 0; i < 50; i++) log.put('referent', `r${i}`, referent('shop', `r${i}`));
    log.put('queue', 'apps', queue('apps'));
    const before = log.revision;
    for (let i = 0; i < 50; i++) log.remove('referent', `r${i}`);
    now = 30_000;
    log.remove('queue', 'apps'); // a younger tombstone
    expect(log.tombstones()).toBe(51);
    // The log is quiet now: only time passes.
    now = 60_000;
    expect(log.compact()).toBe(0); // none is older than 60 s yet
    now = 60_001;
    expect(log.compact()).toBe(50);
    expect(log.tombstones('referent')).toBe(0);
    expect(log.tombstones('queue')).toBe(1);
    // A client that held the removed referents resyncs; one that saw them go gets deltas.
    expect(log.changesSince(before)).toMatchObject({ resnapshot: true });
    expect(summary(log.changesSince(log.revision - 1))).toEqual(['queue apps removed']);
    now = 90_001;
    expect(log.compact()).toBe(1);
    expect(log.tombstones()).toBe(0);
    expect(log.size()).toBe(0);
  });

  it('rejects a retainMs that is not a whole number of milliseconds, naming the option', () => {
    expect(() => new ChangeLog({ retainMs: -1 })).toThrow(/retainMs must be a non-negative integer/);
  });
});

describe('ChangeLog.next', () => {
  it('resolves at once when the revision is already past', async () => {
    const log = new ChangeLog();
    log.put('queue', 'apps', queue('apps'));
    await expect(log.next(0)).resolves.toBe(1);
  });

  it('resolves with the revision of the next change', async () => {
    const log = new ChangeLog();
    const waiting = log.next(0);
    expect(log.waiting).toBe(1);
    log.put('queue', 'apps', queue('apps'));
    await expect(waiting).resolves.toBe(1);
    expect(log.waiting).toBe(0);
  });

  it('waits past changes that do not reach the requested revision', async () => {
    const log = new ChangeLog();
    const settled = vi.fn();
    const waiting = log.next(2).then(settled);
    log.put('queue', 'apps', queue('apps', 1));
    log.put('queue', 'apps', queue('apps', 2));
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
    log.put('queue', 'apps', queue('apps', 3));
    await waiting;
    expect(settled).toHaveBeenCalledWith(3);
  });

  it('rejects with an AbortError when aborted, and leaves no waiter or listener behind', async () => {
    const log = new ChangeLog();
    const controller = new AbortController();
    const waiting = log.next(0, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.waiting).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once for a signal already aborted', async () => {
    const log = new ChangeLog();
    log.put('queue', 'apps', queue('apps'));
    await expect(log.next(0, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.waiting).toBe(0);
  });

  it('removes its abort listener once resolved, so a long-lived signal does not accumulate them', async () => {
    const log = new ChangeLog();
    const controller = new AbortController();
    for (let i = 0; i < 100; i++) {
      const waiting = log.next(log.revision, controller.signal);
      log.put('queue', 'apps', queue('apps', i));
      await waiting;
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(log.waiting).toBe(0);
  });
});

describe('ChangeLog.subscribe and transaction', () => {
  it('tells each subscriber the new revision after each change, until it unsubscribes', () => {
    const log = new ChangeLog();
    const seen: number[] = [];
    const unsubscribe = log.subscribe((rev) => seen.push(rev));
    log.put('queue', 'apps', queue('apps'));
    log.remove('queue', 'apps');
    log.remove('queue', 'apps'); // absent: nothing to tell
    unsubscribe();
    log.put('queue', 'apps', queue('apps'));
    expect(seen).toEqual([1, 2]);
  });

  it('tells subscribers and waiters once per transaction, at its end', async () => {
    const log = new ChangeLog();
    const seen: number[] = [];
    log.subscribe((rev) => seen.push(rev));
    const waiting = log.next(0);
    const result = log.transaction(() => {
      log.put('referent', 'a', referent('shop', 'a'));
      log.transaction(() => log.put('referent', 'b', referent('shop', 'b')));
      log.put('reference', 'r', reference('shop', 'web', 'a'));
      expect(seen).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual([3]);
    await expect(waiting).resolves.toBe(3);
  });

  it('announces what a failed transaction stored before it threw', () => {
    const log = new ChangeLog();
    const seen: number[] = [];
    log.subscribe((rev) => seen.push(rev));
    expect(() =>
      log.transaction(() => {
        log.put('referent', 'a', referent('shop', 'a'));
        throw new Error('reconcile failed');
      }),
    ).toThrow('reconcile failed');
    expect(seen).toEqual([1]);
    expect(log.get('referent', 'a')).toBeDefined();
  });

  it('reports a throwing subscriber without failing the change or starving the others', () => {
    const errors: unknown[] = [];
    const log = new ChangeLog({ onListenerError: (e) => errors.push(e) });
    const seen: number[] = [];
    log.subscribe(() => {
      throw new Error('broken client');
    });
    log.subscribe((rev) => seen.push(rev));
    expect(log.put('queue', 'apps', queue('apps'))).toBe(1);
    expect(seen).toEqual([1]);
    expect(errors).toEqual([new Error('broken client')]);
  });
});
