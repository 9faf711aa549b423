import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../../lib/changelog';
import { HistoryRecorder } from '../../../server/history/recorder';
import { HistoryStore, type Transition } from '../../../server/history/store';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'refwatch-history-writer-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rows(n: number, object = 'Secret/shop/a'): Transition[] {
  return Array.from({ length: n }, (_, i) => ({
    at: i,
    type: 'referent' as const,
    object,
    namespace: 'shop',
    state: i % 2 ? 'Ready' : 'NotReady',
    message: `m${i}`,
    manager: 'helm',
    resourceVersion: String(i),
    ...(i % 3 === 0 ? { related: 'ConfigMap/shop/c' } : {}),
  }));
}

describe('the SQLite writer thread', () => {
  it('writes beside the event loop: the loop turns while a large batch is written', async () => {
    const store = await HistoryStore.open({ dialect: 'sqlite', path: join(tempDir(), 'h.db') }, { cluster: 'c' });
    try {
      const order: string[] = [];
      const written = store.write(rows(20_000)).then(() => order.push('written'));
      setImmediate(() => order.push('event loop turned'));
      await written;
      // On the main thread the whole transaction runs in one go, and the loop turns only after it.
      expect(order).toEqual(['event loop turned', 'written']);
      const page = await store.timeline({ object: 'Secret/shop/a', limit: 20_000 });
      expect(page.transitions).toHaveLength(20_000);
      expect(page.transitions[3]).toEqual({
        id: page.transitions[3]!.id,
        at: 3,
        type: 'referent',
        object: 'Secret/shop/a',
        namespace: 'shop',
        state: 'Ready',
        related: 'ConfigMap/shop/c',
        message: 'm3',
        manager: 'helm',
        resourceVersion: '3',
      });
      expect(page.transitions[4]).not.toHaveProperty('related');
    } finally {
      await store.close();
    }
  });

  it('close writes what was sent before it, ends the thread, and later writes are refused', async () => {
    const path = join(tempDir(), 'h.db');
    const store = await HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c' });
    expect(store.writerRunning).toBe(true);
    const pending = store.write(rows(5_000));
    await store.close();
    await expect(pending).resolves.toBeUndefined();
    expect(store.writerRunning).toBe(false);
    await expect(store.write(rows(1))).rejects.toThrow(/history writer thread stopped/);
    const again = await HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c' });
    expect((await again.stats()).rows).toBe(5_000);
    await again.close();
  });

  it("a recorder's stop flushes its queue through the thread and ends it", async () => {
    const path = join(tempDir(), 'h.db');
    const log = new ChangeLog();
    const stores: HistoryStore[] = [];
    const r = new HistoryRecorder({
      changelog: log,
      open: async () => {
        const s = await HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c' });
        stores.push(s);
        return s;
      },
      flushMs: 3_600_000,
    });
    await r.start();
    for (let i = 0; i < 10; i++)
      log.put('referent', `Secret/shop/s${i}`, {
        id: `Secret/shop/s${i}`,
        key: `Secret/shop/s${i}`,
        kind: 'Secret',
        namespace: 'shop',
        state: 'Ready',
        referencedBy: 1,
        changedAt: i,
      });
    expect(r.status()).toMatchObject({ queued: 10, written: 0 });
    expect(stores[0]!.writerRunning).toBe(true);
    await r.stop();
    expect(r.status()).toMatchObject({ state: 'off', written: 10, dropped: 0 });
    expect(stores).toHaveLength(1);
    expect(stores[0]!.writerRunning).toBe(false);
  });
});
