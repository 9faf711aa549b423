import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../../lib/changelog';
import { HistoryRecorder } from '../../../server/history/recorder';
import { BatchEncoder, WRITER_NICE, decode } from '../../../server/history/sqlite-writer';
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

  it.runIf(process.platform === 'linux')(
    'runs at a lower priority than the engine, whose thread goes first where both want a core',
    async () => {
      // The nice value of each of this process's threads: the 19th field of /proc/self/task/TID/stat.
      const nices = () =>
        readdirSync('/proc/self/task').flatMap((tid) => {
          try {
            const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
            return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
          } catch {
            return []; // a thread that ended meanwhile
          }
        });
      const lowered = Math.min(19, getPriority() + WRITER_NICE);
      expect(WRITER_NICE).toBeGreaterThan(0);
      const before = nices().filter((n) => n === lowered).length;
      const store = await HistoryStore.open({ dialect: 'sqlite', path: join(tempDir(), 'h.db') }, { cluster: 'c' });
      await store.write(rows(10));
      expect(nices().filter((n) => n === lowered).length).toBe(before + 1);
      await store.close();
      expect(nices().filter((n) => n === lowered).length).toBe(before);
    },
  );

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

describe('a batch posted to the writer thread', () => {
  it('is numbers in one transferable buffer, and each string crosses once', () => {
    const encoder = new BatchEncoder();
    const table: string[] = [];
    const first = encoder.encode(rows(3));
    expect(first.values).toBeInstanceOf(Float64Array);
    expect(first.values.buffer).toBeInstanceOf(ArrayBuffer);
    expect(decode(first, table)[1]).toEqual([
      'Secret/shop/a',
      'shop',
      1,
      'referent',
      'Ready',
      null,
      null,
      'm1',
      '1',
      'helm',
      null,
    ]);
    // The same object, states and manager again: only the new messages and resource versions are sent.
    const second = encoder.encode(rows(3).map((r) => ({ ...r, message: `n${r.at}`, resourceVersion: `v${r.at}` })));
    expect(second.reset).toBe(false);
    expect([...second.strings].sort()).toEqual(['n0', 'n1', 'n2', 'v0', 'v1', 'v2']);
    expect(decode(second, table)[0]).toEqual([
      'Secret/shop/a',
      'shop',
      0,
      'referent',
      'NotReady',
      null,
      'ConfigMap/shop/c',
      'n0',
      'v0',
      'helm',
      null,
    ]);
  });

  it('starts the string table over beyond its bound, and the thread follows', () => {
    const encoder = new BatchEncoder(10);
    const table: string[] = [];
    decode(encoder.encode(rows(6)), table);
    const next = encoder.encode(rows(2, 'Secret/shop/b'));
    expect(next.reset).toBe(true);
    expect(next.strings).toContain('helm');
    expect(decode(next, table).map((r) => [r[0], r[7]])).toEqual([
      ['Secret/shop/b', 'm0'],
      ['Secret/shop/b', 'm1'],
    ]);
    expect(table.length).toBe(next.strings.length);
  });

  it('written through resets of the table, every row reads back as it was', async () => {
    const store = await HistoryStore.open({ dialect: 'sqlite', path: join(tempDir(), 'h.db') }, { cluster: 'c' });
    try {
      // 20,000 unique messages and resource versions a batch: the default table of 50,000 starts over twice.
      for (let b = 0; b < 3; b++)
        await store.write(rows(20_000).map((r) => ({ ...r, at: b * 20_000 + r.at, message: `b${b}m${r.at}` })));
      const page = await store.timeline({ object: 'Secret/shop/a', limit: 60_000 });
      expect(page.transitions).toHaveLength(60_000);
      for (const i of [0, 19_999, 20_000, 39_999, 40_003, 59_999]) {
        const t = page.transitions[i]!;
        const r = i % 20_000;
        expect([t.at, t.message, t.resourceVersion, t.state, t.related]).toEqual([
          i,
          `b${Math.floor(i / 20_000)}m${r}`,
          String(r),
          r % 2 ? 'Ready' : 'NotReady',
          r % 3 === 0 ? 'ConfigMap/shop/c' : undefined,
        ]);
      }
    } finally {
      await store.close();
    }
  });
});
