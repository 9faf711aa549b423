import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { APP_KIND, app, appKey, database, dbKey } from './fixtures';

// What a reconciler is handed (ctx.object, resolve().object, cached()) is the
// cache's own object, frozen: a reconciler that mutates one fails, and the
// other controllers still see what the cluster holds.

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

describe('reconcilers get read-only objects', () => {
  it('a mutation of ctx.object or resolve().object throws; another controller sees neither', async () => {
    const source = new MemoryInformerSource();
    const m = (manager = new Manager({ source, grace: 50, statsIntervalMs: 0 }));
    const errors: string[] = [];
    const seenByReader: unknown[] = [];
    m.addController({
      name: 'mutator',
      for: APP_KIND,
      reconcile: (ctx) => {
        const db = ctx.resolve(dbKey('orders'), 'spec.databaseRef').object;
        if (!db) return;
        try {
          (ctx.object!.metadata as { labels?: Record<string, string> }).labels = { touched: 'yes' };
        } catch (e) {
          errors.push(`object: ${(e as Error).constructor.name}`);
        }
        try {
          (db.status as { conditions: unknown[] }).conditions.push({ type: 'Ready', status: 'False' });
        } catch (e) {
          errors.push(`referent: ${(e as Error).constructor.name}`);
        }
      },
    });
    m.addController({
      name: 'reader',
      for: APP_KIND,
      reconcile: (ctx) => {
        const r = ctx.resolve(dbKey('orders'), 'spec.databaseRef');
        if (r.object)
          seenByReader.push({
            labels: ctx.object!.metadata.labels,
            state: r.state,
            conditions: (r.object.status as { conditions: unknown[] }).conditions.length,
          });
      },
    });
    m.start();
    source.apply(database('orders', true));
    source.apply(app('web', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(errors.length).toBeGreaterThanOrEqual(2));
    expect(errors.slice(0, 2)).toEqual(['object: TypeError', 'referent: TypeError']);
    await vi.waitFor(() => expect(seenByReader.length).toBeGreaterThan(0));
    expect(seenByReader.at(-1)).toEqual({ labels: undefined, state: 'Ready', conditions: 1 });
    // cached() hands out the very object the reconcilers saw, untouched and frozen.
    const cached = m.referenceControllers.cached(dbKey('orders'))!;
    expect(Object.isFrozen(cached.status)).toBe(true);
    expect(source.get(appKey('web'))!.metadata.labels).toBeUndefined();
  });

  it('the memory source stores a frozen copy and leaves the caller its own object', () => {
    const source = new MemoryInformerSource();
    const mine = database('orders', false);
    const stored = source.apply(mine);
    expect(Object.isFrozen(stored.metadata)).toBe(true);
    expect(Object.isFrozen(mine.metadata)).toBe(false);
    mine.metadata.labels = { mine: 'yes' };
    expect(source.get(dbKey('orders'))!.metadata.labels).toBeUndefined();
  });
});
