import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../../lib/changelog';
import type { ReferentEntity } from '../../../lib/changelog/entities';
import { HistoryRecorder } from '../../../server/history/recorder';
import { HistoryStore } from '../../../server/history/store';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'refwatch-history-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function referent(key: string, state: ReferentEntity['state'], at: number, message?: string): ReferentEntity {
  const v: ReferentEntity = { id: key, key, kind: 'Secret', namespace: 'shop', state, referencedBy: 1, changedAt: at };
  if (message) v.message = message;
  return v;
}

describe('SQLite history faults', () => {
  it('moves a corrupt file aside, naming the new path, and starts a fresh history', async () => {
    const dir = tempDir();
    const path = join(dir, 'history.db');
    writeFileSync(path, 'this is not a database'.repeat(400));
    const lines: string[] = [];
    const store = await HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c', log: (l) => lines.push(l) });
    await store.write([{ at: 1, type: 'referent', object: 'Secret/shop/a', namespace: 'shop', state: 'Ready' }]);
    expect((await store.timeline({ object: 'Secret/shop/a', limit: 5 })).transitions).toHaveLength(1);
    await store.close();
    const aside = readdirSync(dir).find((f) => f.startsWith('history.db.corrupt-'));
    expect(aside).toBeDefined();
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `${path} is corrupt \\(.*\\); moved it to ${join(dir, aside!).replace(/[.]/g, '\\.')} and started a new history`,
        ),
      ),
    ]);
  });

  it('on a full disk (a tiny tmpfs) keeps running, says so once, counts the drops', async ({ skip }) => {
    const dir = tempDir();
    const mounted =
      process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=192k', 'tmpfs', dir]).status === 0;
    if (!mounted) return skip('SKIPPED: disk full: mounting a tmpfs needs root');
    try {
      const log = new ChangeLog();
      const lines: string[] = [];
      const r = new HistoryRecorder({
        changelog: log,
        open: () => HistoryStore.open({ dialect: 'sqlite', path: join(dir, 'history.db') }, { cluster: 'c' }),
        reconnectMs: { initial: 3_600_000, max: 3_600_000 },
        log: (l) => lines.push(l),
      });
      await r.start();
      for (let i = 0; i < 5_000 && r.status().state === 'up'; i++) {
        log.put(
          'referent',
          `Secret/shop/s${i % 50}`,
          referent(`Secret/shop/s${i % 50}`, Math.floor(i / 50) % 2 ? 'Ready' : 'NotReady', i, 'x'.repeat(200)),
        );
        if (i % 100 === 99) await r.flush();
      }
      await r.flush();
      expect(r.status()).toMatchObject({ state: 'down' });
      expect(r.status().dropped).toBeGreaterThan(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /failed: the disk is full \(SQLITE_FULL: .*\); free space or lower --history-max-size; live results are unaffected/,
      );
      await r.stop();
    } finally {
      execFileSync('umount', ['-l', dir]);
    }
  });

  it('prunes the oldest transitions while the file uses more than --history-max-size', async () => {
    const dir = tempDir();
    const store = await HistoryStore.open({ dialect: 'sqlite', path: join(dir, 'history.db') }, { cluster: 'c' });
    const rows = Array.from({ length: 5_000 }, (_, i) => ({
      at: i,
      type: 'referent' as const,
      object: `Secret/shop/s${i % 100}`,
      namespace: 'shop',
      state: 'NotReady',
      message: 'y'.repeat(100),
    }));
    await store.write(rows);
    const before = await store.stats();
    expect(before.bytes).toBeGreaterThan(400_000);
    const deleted = await store.prune(0, 200_000);
    const after = await store.stats();
    expect(after.bytes).toBeLessThanOrEqual(200_000);
    expect(deleted).toBe(5_000 - after.rows);
    // The oldest went first.
    expect(after.oldestAt).toBe(5_000 - after.rows);
    await store.close();
  });
});

describe('HistoryRecorder', () => {
  it('batches off the dispatch path: a put only queues; the flush timer writes; a full queue drops and counts', async () => {
    const dir = tempDir();
    const log = new ChangeLog();
    const r = new HistoryRecorder({
      changelog: log,
      open: () => HistoryStore.open({ dialect: 'sqlite', path: join(dir, 'h.db') }, { cluster: 'c' }),
      flushMs: 50,
      queueRows: 3,
      batchRows: 1000,
    });
    await r.start();
    for (let i = 0; i < 5; i++) log.put('referent', `Secret/shop/s${i}`, referent(`Secret/shop/s${i}`, 'Ready', i));
    expect(r.status()).toMatchObject({ queued: 3, written: 0, dropped: 2 });
    await expect.poll(() => r.status().written).toBe(3);
    await r.stop();
  });

  it('stop ends its timers and writes what is queued; a stopped recorder records nothing', async () => {
    const dir = tempDir();
    const path = join(dir, 'h.db');
    const log = new ChangeLog();
    const r = new HistoryRecorder({
      changelog: log,
      open: () => HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c' }),
      flushMs: 3_600_000,
      pruneIntervalMs: 10,
    });
    await r.start();
    log.put('referent', 'Secret/shop/a', referent('Secret/shop/a', 'Ready', 1));
    await r.stop();
    expect(r.status()).toMatchObject({ state: 'off', written: 1, queued: 0 });
    log.put('referent', 'Secret/shop/a', referent('Secret/shop/a', 'NotFound', 2));
    expect(r.status().queued).toBe(0);
    const store = await HistoryStore.open({ dialect: 'sqlite', path }, { cluster: 'c' });
    expect((await store.timeline({ object: 'Secret/shop/a', limit: 10 })).transitions.map((t) => t.state)).toEqual([
      'Ready',
    ]);
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  it('rejects a non-positive option, naming it', () => {
    expect(
      () => new HistoryRecorder({ changelog: new ChangeLog(), open: () => Promise.reject(new Error('x')), flushMs: 0 }),
    ).toThrow('HistoryRecorder flushMs must be a number above 0, got 0');
  });
});
