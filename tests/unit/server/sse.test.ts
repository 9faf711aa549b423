import { describe, expect, it } from 'vitest';
import {
  ChangeLog,
  decodeDelta,
  decodeSnapshot,
  type Delta,
  type ReferentEntity,
  type Snapshot,
} from '@/lib/changelog';
import { sseStream } from '@/server/http/sse';
import { buildSnapshot } from '@/server/snapshot';
import type { Summary } from '@/server/summary';

const cluster = { mode: 'embedded' as const, server: 'http://127.0.0.1:1', reachable: true };

function referent(name: string, state: ReferentEntity['state'] = 'NotReady'): ReferentEntity {
  const key = `Database.demo.refwatch.dev/shop/${name}`;
  return { id: key, key, kind: 'Database.demo.refwatch.dev', namespace: 'shop', state, referencedBy: 1, changedAt: 0 };
}

interface Message {
  event: string;
  id?: number;
  data?: unknown;
  comment?: string;
}

/** A tiny SSE parser over the stream, reading on demand. */
function reader(stream: ReadableStream<Uint8Array>) {
  const r = stream.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let bytes = 0;
  return {
    get bytes() {
      return bytes;
    },
    async next(): Promise<Message> {
      for (;;) {
        const end = buf.indexOf('\n\n');
        if (end >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const m: Message = { event: 'message' };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) m.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) m.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) m.event = line.slice(7);
            else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6));
          }
          // Snapshots and deltas travel in the lean wire format.
          if (m.event === 'snapshot') m.data = decodeSnapshot(m.data);
          if (m.event === 'delta') m.data = decodeDelta(m.data);
          return m;
        }
        const { value, done } = await r.read();
        if (done) throw new Error('stream ended');
        bytes += value.byteLength;
        buf += decoder.decode(value, { stream: true });
      }
    },
    async until(pred: (m: Message) => boolean): Promise<Message> {
      for (;;) {
        const m = await this.next();
        if (pred(m)) return m;
      }
    },
    cancel: () => r.cancel(),
  };
}

function open(log: ChangeLog, extra: Partial<Parameters<typeof sseStream>[0]> = {}) {
  const abort = new AbortController();
  let closed = 0;
  const stream = sseStream({
    changelog: log,
    snapshot: () => buildSnapshot({ changelog: log }, cluster, []),
    signal: abort.signal,
    flushDelayMs: 1,
    onClose: () => closed++,
    ...extra,
  });
  return { rd: reader(stream), abort, closed: () => closed };
}

describe('SSE stream', () => {
  it('starts with a snapshot whose id is its revision, then sends coalesced deltas', async () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('a'));
    const { rd, abort } = open(log);
    const first = await rd.next();
    expect(first.event).toBe('snapshot');
    expect(first.id).toBe(log.revision);
    expect((first.data as Snapshot).referents.map((r) => r.key)).toEqual([referent('a').key]);
    log.put('referent', 'b', referent('b'));
    log.put('referent', 'b', referent('b', 'Ready'));
    const d = await rd.until((m) => m.event === 'delta');
    const delta = d.data as Delta;
    expect(delta.from).toBe(first.id);
    expect(d.id).toBe(delta.revision);
    expect(delta.changes).toHaveLength(1); // two puts of b coalesced
    expect(delta.changes[0]).toMatchObject({ entity: 'referent', id: 'b', removed: false, value: { state: 'Ready' } });
    abort.abort();
  });

  it('resumes from Last-Event-ID with exactly the missed changes, coalesced', async () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('a'));
    log.put('referent', 'b', referent('b'));
    const seen = log.revision;
    log.put('referent', 'a', referent('a', 'Ready'));
    log.put('referent', 'a', referent('a', 'NotFound'));
    log.remove('referent', 'b');
    log.put('referent', 'c', referent('c'));
    log.remove('referent', 'c'); // created and removed after `seen`: never sent
    const { rd, abort } = open(log, { lastEventId: String(seen) });
    const m = await rd.next();
    expect(m.event).toBe('delta');
    const delta = m.data as Delta;
    expect(delta.from).toBe(seen);
    expect(delta.revision).toBe(log.revision);
    expect(delta.changes.map((c) => [c.id, c.removed])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    abort.abort();
  });

  it('answers a revision older than the retained window with resync and a fresh snapshot', async () => {
    const log = new ChangeLog({ retainRevisions: 5 });
    for (let i = 0; i < 20; i++) {
      log.put('referent', `x${i}`, referent(`x${i}`));
      log.remove('referent', `x${i}`);
    }
    log.compact();
    const { rd, abort } = open(log, { lastEventId: '1' });
    expect((await rd.next()).event).toBe('resync');
    const snap = await rd.next();
    expect(snap.event).toBe('snapshot');
    expect(snap.id).toBe(log.revision);
    abort.abort();
  });

  it('a client that stops reading costs bounded memory, and catches up coalesced; others are unaffected', async () => {
    const log = new ChangeLog();
    const slow = open(log, { highWaterBytes: 4096 });
    const fast = open(log);
    await slow.rd.next();
    await fast.rd.next();
    let fastLatest = 0;
    const fastDone = (async () => {
      for (;;) {
        const m = await fast.rd.next();
        if (m.event === 'delta') fastLatest = (m.data as Delta).revision;
        if (fastLatest === 2000) return;
      }
    })();
    // 2,000 changes to 10 entities while the slow client reads nothing.
    for (let i = 0; i < 2000; i++) {
      log.put('referent', `k${i % 10}`, { ...referent(`k${i % 10}`), changedAt: i });
      if (i % 100 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    await fastDone;
    expect(fastLatest).toBe(log.revision);
    // The slow client now reads: it gets the latest state of the 10 entities, not 2,000 changes.
    const before = slow.rd.bytes;
    let latest = 0;
    const seen = new Map<string, number>();
    while (latest < log.revision) {
      const m = await slow.rd.next();
      if (m.event !== 'delta') continue;
      const d = m.data as Delta;
      latest = d.revision;
      for (const c of d.changes) if (!c.removed) seen.set(c.id, (c.value as ReferentEntity).changedAt);
    }
    expect(seen.get('k9')).toBe(1999);
    expect(slow.rd.bytes - before).toBeLessThan(64 * 1024);
    slow.abort.abort();
    fast.abort.abort();
  });

  it('sends heartbeats and stops everything when the client goes away', async () => {
    const log = new ChangeLog();
    const { rd, abort, closed } = open(log, { heartbeatMs: 20 });
    await rd.next();
    const ping = await rd.until((m) => m.comment === 'ping');
    expect(ping.comment).toBe('ping');
    abort.abort();
    expect(closed()).toBe(1);
    await expect(rd.next()).rejects.toThrow('stream ended');
  });

  it('a cancelled reader unsubscribes too', async () => {
    const log = new ChangeLog();
    const { rd, closed } = open(log);
    await rd.next();
    await rd.cancel();
    expect(closed()).toBe(1);
  });

  it('sends a large snapshot in slices, whole, with the latest cluster and summary and the changes made meanwhile after it', async () => {
    const log = new ChangeLog();
    for (let i = 0; i < 20_000; i++) log.put('referent', `r${i}`, referent(`r${i}`));
    const revision = log.revision;
    const listeners = new Set<(info: typeof cluster) => void>();
    const summaries = new Set<(summary: Summary) => void>();
    const summary = (stuck: number) => ({ revision: log.revision, stuck }) as unknown as Summary;
    const { rd, abort } = open(log, {
      heartbeatMs: 1,
      cluster: { current: () => cluster, subscribe: (l) => (listeners.add(l), () => listeners.delete(l)) },
      summary: { current: () => summary(1), subscribe: (l) => (summaries.add(l), () => summaries.delete(l)) },
      // Changes, a cluster event and a new summary land while the snapshot is still being written.
      snapshot: async () => {
        const snap = buildSnapshot({ changelog: log }, cluster, []);
        setImmediate(() => {
          log.put('referent', 'late', referent('late', 'Ready'));
          for (const l of listeners) l({ ...cluster, reachable: false });
          for (const l of summaries) l(summary(2));
        });
        return snap;
      },
    });
    const first = await rd.next();
    expect(first.event).toBe('snapshot');
    expect(first.id).toBe(revision);
    expect((first.data as Snapshot).referents).toHaveLength(20_000);
    const rest = [];
    for (let i = 0; i < 3; i++) rest.push(await rd.until((m) => m.event !== 'message'));
    expect(rest.map((m) => m.event).sort()).toEqual(['cluster', 'delta', 'summary']);
    const delta = rest.find((m) => m.event === 'delta')!.data as Delta;
    expect(delta).toMatchObject({ from: revision, changes: [{ id: 'late', removed: false }] });
    expect(rest.find((m) => m.event === 'cluster')!.data).toMatchObject({ reachable: false });
    // Only the latest summary: the one current at the start waited behind the snapshot and was replaced.
    expect(rest.find((m) => m.event === 'summary')!.data).toMatchObject({ stuck: 2 });
    abort.abort();
  });

  it('resumes with a delta of thousands of changes, written in slices, whole', async () => {
    const log = new ChangeLog();
    log.put('referent', 'a', referent('a'));
    const seen = log.revision;
    for (let i = 0; i < 5000; i++) log.put('referent', `r${i}`, referent(`r${i}`, 'Ready'));
    const { rd, abort } = open(log, { lastEventId: String(seen), heartbeatMs: 1 });
    const m = await rd.until((x) => x.event === 'delta');
    const delta = m.data as Delta;
    expect(m.id).toBe(log.revision);
    expect(delta.from).toBe(seen);
    expect(delta.changes).toHaveLength(5000);
    expect(delta.changes.at(-1)).toMatchObject({ id: 'r4999', removed: false, value: { state: 'Ready' } });
    log.put('referent', 'a', referent('a', 'Ready'));
    const next = (await rd.until((x) => x.event === 'delta')).data as Delta;
    expect(next).toMatchObject({ from: m.id, changes: [{ id: 'a' }] });
    abort.abort();
  });
});
