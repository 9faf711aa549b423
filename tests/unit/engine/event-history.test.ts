import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeLog } from '@/lib/changelog';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { APP_KIND, app, appKey, database, dbKey } from './fixtures';

const managers: Manager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

/** run resolves one App through a Database that turns Ready, so its referrer goes Waiting, then Resolved. */
async function run(changelog?: ChangeLog, seen: string[] = []): Promise<Manager> {
  const source = new MemoryInformerSource();
  const manager = new Manager({ source, grace: 50, statsIntervalMs: 0, ...(changelog ? { changelog } : {}) });
  managers.push(manager);
  manager.changelog.observe((entity, _id, _previous, next) => {
    if (next) seen.push(entity);
  });
  manager.addController({
    name: 'apps',
    for: APP_KIND,
    reconcile(ctx) {
      ctx.resolve(dbKey('orders'), 'spec.databaseRef');
    },
  });
  manager.start();
  source.apply(database('orders', false));
  source.apply(app('web', { databaseRef: 'orders' }));
  await vi.waitFor(() => expect(manager.changelog.get('referrer', `apps|${appKey('web')}`)?.state).toBe('Waiting'));
  source.apply(database('orders', true));
  await vi.waitFor(() => expect(manager.changelog.get('referrer', `apps|${appKey('web')}`)?.state).toBe('Resolved'));
  return manager;
}

const events = (m: Manager) => m.changelog.snapshot({ entities: ['event'] }).entities.event;

describe('event history', () => {
  it('a Manager given no change log builds and stores no events', async () => {
    const stored: string[] = [];
    const manager = await run(undefined, stored);
    expect(manager.changelog.keepsEvents).toBe(false);
    // Not even one put and expired at once: no revision, no allocation for an event nobody keeps.
    expect(stored).not.toContain('event');
    expect(events(manager)).toEqual([]);
    // Referrer, reference and controller states are still published, for explain and stuck.
    expect(stored).toEqual(expect.arrayContaining(['referrer', 'reference', 'controller']));
    expect(manager.changelog.get('controller', 'Database.demo.refwatch.dev')?.state).toBe('Active');
  });

  it('a Manager given a ChangeLog keeps its events: the referrer waiting and resolved, the watch started', async () => {
    const stored: string[] = [];
    const manager = await run(new ChangeLog(), stored);
    expect(manager.changelog.keepsEvents).toBe(true);
    expect(stored).toContain('event');
    const types = events(manager).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['Waiting', 'Resolved', 'ControllerStarted']));
  });
});
