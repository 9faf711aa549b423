import { afterEach, describe, expect, it, vi } from 'vitest';
import { getMetrics } from '@/server/api';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

async function tombstonesOnMetrics(): Promise<number> {
  const text = await (await getMetrics(rt!)).text();
  return [...text.matchAll(/^refwatch_changelog_entities\{entity="[a-z]+",state="tombstone"\} (\d+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe('the runtime compacts its change log while it is quiet', () => {
  it('drops tombstones that aged out though nothing changed since, and /metrics shows it', async () => {
    rt = await startRuntime(
      parseConfig({ REFWATCH_RULE_PACKS: 'none', REFWATCH_DEMO: 'off', REFWATCH_EXAMPLE: 'none' }),
      {
        changelog: { retainMs: 200 },
        compactIntervalMs: 50,
      },
    );
    const log = rt.changelog;
    // The runtime settles first: its watches (ReferenceRules' CRD watch among them) primed, as the change log says.
    const r = rt;
    await vi.waitFor(
      () => {
        const watches = log.snapshot({ entities: ['watch'] }).entities.watch ?? [];
        expect(watches.length).toBe(r.pool.watches().length);
        expect(watches.every((w) => w.primed)).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    const referent = {
      id: 'Database.demo.refwatch.dev/shop/orders',
      key: 'Database.demo.refwatch.dev/shop/orders',
      kind: 'Database.demo.refwatch.dev',
      namespace: 'shop',
      state: 'Ready' as const,
      referencedBy: 0,
      changedAt: 0,
    };
    log.put('referent', referent.id, referent);
    log.remove('referent', referent.id);
    expect(log.tombstones('referent')).toBe(1);
    expect(await tombstonesOnMetrics()).toBeGreaterThanOrEqual(1);
    const revision = log.revision;
    await vi.waitFor(() => expect(log.tombstones('referent')).toBe(0), { timeout: 5_000, interval: 50 });
    // No revision was needed for it to go: the timer compacted.
    expect(log.revision).toBe(revision);
    expect(log.compactedRevision).toBe(revision);
    expect(await tombstonesOnMetrics()).toBe(0);
  });
});
