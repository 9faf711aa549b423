import { describe, expect, it } from 'vitest';
import { timeApps, type Observed } from '@/bench/peer/app-timings';
import type { PlannedApp } from '@/server/demo/scenario';

function app(i: number): PlannedApp {
  const ref = (name: string) => ({ name });
  return {
    name: `app-${i}`,
    spec: { databaseRef: ref(`db-${i}`), cacheRef: ref(`cache-${i}`), secretRef: ref(`secret-${i}`) },
    database: `db-${i}`,
    cache: `cache-${i}`,
    secret: `secret-${i}`,
  };
}

/** App i's referents Ready at the given times (epoch ms), the Secret long before. */
function observed(rows: { db: number; cache: number; seenDb?: number; seenCache?: number; resolved?: number }[]) {
  const o: Observed = { readyAt: new Map(), resolved: new Map(), seen: new Map(), writeMs: new Map() };
  rows.forEach((r, i) => {
    const m = o as { [K in keyof Observed]: Map<string, number> };
    m.readyAt.set(`Secret/secret-${i}`, 0).set(`Database/db-${i}`, r.db).set(`Cache/cache-${i}`, r.cache);
    m.writeMs.set(`Database/db-${i}`, 3).set(`Cache/cache-${i}`, 4);
    if (r.seenDb !== undefined) m.seen.set(`Database/db-${i}`, r.seenDb);
    if (r.seenCache !== undefined) m.seen.set(`Cache/cache-${i}`, r.seenCache);
    if (r.resolved !== undefined) m.resolved.set(`app-${i}`, r.resolved);
  });
  return o;
}

describe('timeApps', () => {
  it("times the reaction from when the last referent's Ready event reached the generator's watch", () => {
    // The Cache was Ready last, at 1,000; the server told the generator's watch at 1,090; the App resolved at 1,095.
    const t = timeApps(
      [app(0)],
      observed([{ db: 500, cache: 1000, seenDb: 510, seenCache: 1090, resolved: 1095 }]),
      2000,
    );
    expect(t.latencies).toEqual([95]);
    expect(t.reactions).toEqual([5]);
    expect(t.samples).toEqual([{ readyAt: 1000, latencyMs: 95, writeMs: 4, seenMs: 90 }]);
  });

  it('keeps a reaction below 0 when the implementation heard of the event before the generator did', () => {
    const t = timeApps([app(0)], observed([{ db: 1000, cache: 500, seenDb: 1020, resolved: 1012 }]), 2000);
    expect(t.reactions).toEqual([-8]);
    expect(t.latencies).toEqual([12]);
  });

  it('times an App from readyAt when the event of its last referent was never seen', () => {
    const t = timeApps([app(0)], observed([{ db: 1000, cache: 500, resolved: 1040 }]), 2000);
    expect(t.reactions).toEqual([40]);
    expect(t.samples[0]!.seenMs).toBeUndefined();
  });

  it('counts an unresolved App as resolved at the end in censored and reactions, not in latencies', () => {
    const t = timeApps(
      [app(0), app(1)],
      observed([
        { db: 1000, cache: 500, seenDb: 1010, resolved: 1020 },
        { db: 1200, cache: 500, seenDb: 1300 },
      ]),
      2000,
    );
    expect(t.latencies).toEqual([20]);
    expect(t.censored).toEqual([20, 800]);
    expect(t.reactions).toEqual([10, 700]);
    expect(t.samples).toHaveLength(1);
  });

  it('leaves out an App whose referent never became Ready, and sorts what it times', () => {
    const o = observed([
      { db: 1000, cache: 500, seenDb: 1030, resolved: 1100 },
      { db: 1000, cache: 500, seenDb: 1005, resolved: 1010 },
      { db: 1000, cache: 500, seenDb: 1005 },
    ]);
    // App 2's Database and Secret are Ready; its Cache never became so.
    (o.readyAt as Map<string, number>).delete('Cache/cache-2');
    const t = timeApps([app(0), app(1), app(2)], o, 2000);
    expect(t.latencies).toEqual([10, 100]);
    expect(t.reactions).toEqual([5, 70]);
  });
});
