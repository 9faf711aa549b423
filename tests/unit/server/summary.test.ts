import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog, type ReferenceEntity, type ReferrerEntity } from '@/lib/changelog';
import { ReferrerSummary } from '@/server/summary';
import { SummaryFeed } from '@/server/summary-feed';

const T0 = 1_700_000_000_000;

function app(
  namespace: string,
  name: string,
  state: ReferrerEntity['state'],
  since = T0,
  references = 2,
): ReferrerEntity {
  const key = `App.demo.refwatch.dev/${namespace}/${name}`;
  return {
    id: `apps|${key}`,
    key,
    controller: 'apps',
    kind: 'App.demo.refwatch.dev',
    namespace,
    state,
    since,
    references,
    reconciles: 1,
  };
}

function ref(namespace: string, name: string, kind = 'Secret'): ReferenceEntity {
  const referrer = `App.demo.refwatch.dev/${namespace}/${name}`;
  const referent = `${kind}/${namespace}/${name}-secret`;
  return {
    id: `apps|${referrer}|${referent}|spec.secretRef`,
    controller: 'apps',
    referrer,
    referent,
    fieldPath: 'spec.secretRef',
    count: 1,
    kind,
    namespace,
  };
}

describe('ReferrerSummary', () => {
  it('counts referrers by state and references per namespace and kind, from entities stored before and after it', () => {
    const log = new ChangeLog();
    const put = (r: ReferrerEntity) => log.put('referrer', r.id, r);
    put(app('shop', 'web', 'Resolved'));
    const summary = new ReferrerSummary(log, { stuckThresholdMs: 30_000, now: () => T0 });
    put(app('shop', 'api', 'Waiting'));
    put(app('billing', 'pay', 'NotFound'));
    log.put('reference', ref('shop', 'web').id, ref('shop', 'web'));
    log.put('reference', ref('billing', 'pay').id, ref('billing', 'pay'));
    const s = summary.summary();
    expect(s.totals).toMatchObject({
      referrers: 3,
      references: 2,
      stuck: 0,
      states: { Resolved: 1, Waiting: 1, NotFound: 1, Error: 0 },
    });
    expect(s.namespaces.find((g) => g.name === 'shop')).toMatchObject({
      referrers: 2,
      references: 1,
      states: { Resolved: 1, Waiting: 1 },
    });
    expect(s.kinds.map((g) => g.name)).toEqual(['App.demo.refwatch.dev', 'Secret']);

    put(app('shop', 'api', 'Resolved'));
    log.remove('referrer', app('billing', 'pay', 'NotFound').id);
    log.remove('reference', ref('billing', 'pay').id);
    const after = summary.summary();
    expect(after.totals).toMatchObject({
      referrers: 2,
      references: 1,
      states: { Resolved: 2, Waiting: 0, NotFound: 0 },
    });
    expect(after.namespaces.map((g) => g.name)).toEqual(['shop']); // billing is empty: forgotten
    summary.stop();
  });

  it('counts a referrer stuck once it stays unresolved past the threshold, and lists namespaces stuck first', () => {
    const log = new ChangeLog();
    let now = T0;
    const summary = new ReferrerSummary(log, { stuckThresholdMs: 30_000, now: () => now });
    const put = (r: ReferrerEntity) => log.put('referrer', r.id, r);
    put(app('aaa', 'fine', 'Resolved'));
    put(app('zzz', 'late', 'Waiting', T0, 3));
    put(app('zzz', 'later', 'NotFound', T0 + 20_000));
    expect(summary.summary().totals.stuck).toBe(0);
    now = T0 + 30_000;
    const v = summary.version;
    const s = summary.summary();
    expect(summary.version).toBe(v);
    expect(s.totals).toMatchObject({ stuck: 1, stuckReferences: 3 });
    expect(s.namespaces.map((g) => `${g.name}:${g.stuck}`)).toEqual(['zzz:1', 'aaa:0']);
    expect(s.stuckList.map((x) => x.key)).toEqual(['App.demo.refwatch.dev/zzz/late']);
    expect(summary.isStuck(app('zzz', 'late', 'Waiting').id)).toBe(true);

    // A change takes it out of stuck; unresolved again, it waits the threshold anew.
    put(app('zzz', 'late', 'Waiting', now));
    expect(summary.summary().totals.stuck).toBe(0);
    now = T0 + 50_000;
    expect(summary.summary().stuckList.map((x) => x.key)).toEqual(['App.demo.refwatch.dev/zzz/later']);
    log.remove('referrer', app('zzz', 'later', 'Waiting').id);
    expect(summary.summary().totals).toMatchObject({ stuck: 0, stuckReferences: 0 });
    summary.stop();
  });
});

describe('SummaryFeed', () => {
  afterEach(() => vi.useRealTimers());

  it('sends a changed summary at most once per interval, and runs its timer only while someone listens', async () => {
    vi.useFakeTimers();
    const log = new ChangeLog();
    const summary = new ReferrerSummary(log, { stuckThresholdMs: 30_000 });
    const feed = new SummaryFeed(summary, { intervalMs: 1000 });
    const got: number[] = [];
    const stop = feed.subscribe((s) => got.push(s.totals.referrers));
    for (let i = 0; i < 5; i++)
      log.put('referrer', app('shop', `a${i}`, 'Resolved').id, app('shop', `a${i}`, 'Resolved'));
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(3000); // nothing changed: nothing sent
    log.put('referrer', app('shop', 'b', 'Resolved').id, app('shop', 'b', 'Resolved'));
    await vi.advanceTimersByTimeAsync(1000);
    expect(got).toEqual([5, 6]);
    stop();
    expect(vi.getTimerCount()).toBe(0);
    feed.subscribe(() => got.push(-1));
    feed.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(feed.listening).toBe(0);
    summary.stop();
  });
});
