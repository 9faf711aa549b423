import { describe, expect, it } from 'vitest';
import {
  ChangeLog,
  decodeSnapshot,
  type Delta,
  type ReferrerEntity,
  type Snapshot,
  type SnapshotRows,
} from '@/lib/changelog';
import type { CaptureSource } from '@/server/snapshot';
import {
  SLICE_CHARS,
  buildSnapshot,
  captureSnapshot,
  plainDeltaParts,
  plainSnapshotParts,
  slicedText,
  snapshotBody,
} from '@/server/snapshot';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

const cluster = { mode: 'embedded' as const, server: 'http://127.0.0.1:1', reachable: true };

function referrer(i: number, reconciles = 1): ReferrerEntity {
  const key = `App.demo.refwatch.dev/shop/app-${i}`;
  return {
    id: `watch|${key}`,
    key,
    controller: 'watch',
    kind: 'App.demo.refwatch.dev',
    namespace: 'shop',
    state: 'Resolved',
    since: 1_700_000_000_000 + i,
    references: 0,
    reconciles,
  };
}

/** A capture source over a bare change log: every referrer is Resolved, so stuck needs no registry. */
function source(log: ChangeLog): CaptureSource {
  return { changelog: log } as unknown as CaptureSource;
}

/** The snapshot with its Rows as arrays, to compare with one built at once. */
const arrays = (s: SnapshotRows): Snapshot => ({
  ...s,
  referrers: [...s.referrers],
  referents: [...s.referents],
  references: [...s.references],
});

describe('captureSnapshot', () => {
  it('is the snapshot of the revision it started at, though the log changes while it yields', async () => {
    const log = new ChangeLog();
    for (let i = 0; i < 30_000; i++) log.put('referrer', referrer(i).id, referrer(i));
    const expected = buildSnapshot({ changelog: log }, cluster, [], {}, 30_000);
    // Changes land between slices: a timer fires whenever the capture yields the event loop.
    let changed = 0;
    const churn = setInterval(() => {
      const i = changed++ % 30_000;
      log.put('referrer', referrer(i).id, referrer(i, 2));
      if (i % 7 === 0) log.remove('referrer', referrer(i + 1).id);
    }, 0);
    try {
      const captured = await captureSnapshot(source(log), {
        cluster: () => cluster,
        stuckThresholdMs: 30_000,
        sliceMs: 1,
      });
      expect(changed).toBeGreaterThan(0);
      expect(arrays(captured)).toEqual(expected);
    } finally {
      clearInterval(churn);
    }
  });

  it('keeps lists of several chunks as read, and its bodies, lean and plain, are the snapshot built at once', async () => {
    const log = new ChangeLog();
    // Three chunks of the change log's read (32,768 entities each), and a last one part full.
    for (let i = 0; i < 70_001; i++) log.put('referrer', referrer(i).id, referrer(i));
    const expected = buildSnapshot({ changelog: log }, cluster, [], {}, 30_000);
    const captured = await captureSnapshot(source(log), { cluster: () => cluster, stuckThresholdMs: 30_000 });
    expect(Array.isArray(captured.referrers)).toBe(false);
    expect(captured.referrers.length).toBe(70_001);
    const body = async (plain: boolean) => {
      const chunks: Uint8Array[] = [];
      const reader = snapshotBody(captured, undefined, plain).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    };
    expect(decodeSnapshot(await body(false))).toEqual(expected);
    expect(await body(true)).toEqual(expected);
  });
});

describe('snapshotBody', () => {
  it('is the wire JSON of the snapshot, in slices that let timers run between them', async () => {
    const log = new ChangeLog();
    for (let i = 0; i < 20_000; i++) log.put('referrer', referrer(i).id, referrer(i));
    const snapshot = buildSnapshot({ changelog: log }, cluster, []);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const chunks: Uint8Array[] = [];
    try {
      const reader = snapshotBody(snapshot, 1).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    } finally {
      clearInterval(timer);
    }
    expect(chunks.length).toBeGreaterThan(1);
    expect(ticks).toBeGreaterThan(0);
    expect(decodeSnapshot(JSON.parse(Buffer.concat(chunks).toString('utf8')))).toEqual(snapshot);
  });
});

describe('slicedText', () => {
  it('cuts the text into slices of about SLICE_CHARS, however fast it is made', async () => {
    const pieces = Array.from({ length: 300 }, (_, i) => `${String(i).padStart(4, '0')}${'x'.repeat(996)}`);
    const slices: string[] = [];
    for await (const slice of slicedText(pieces, Infinity)) slices.push(slice);
    expect(slices.join('')).toBe(pieces.join(''));
    expect(slices.length).toBeGreaterThanOrEqual(Math.floor((300 * 1000) / (SLICE_CHARS + 1000)));
    for (const slice of slices) expect(slice.length).toBeLessThan(SLICE_CHARS + 1000);
  });
});

describe('plain JSON', () => {
  it('is the snapshot and the delta themselves, the shape a script reads without a decoder', () => {
    const snapshot = demoSnapshot(3, 200);
    expect(JSON.parse([...plainSnapshotParts(snapshot)].join(''))).toEqual(snapshot);
    const delta: Delta = {
      from: snapshot.revision,
      revision: snapshot.revision + 2,
      changes: [
        { entity: 'referrer', id: snapshot.referrers[0]!.id, revision: snapshot.revision + 1, removed: true },
        {
          entity: 'referent',
          id: snapshot.referents[0]!.id,
          revision: snapshot.revision + 2,
          removed: false,
          value: snapshot.referents[0]!,
        },
      ],
    };
    expect(JSON.parse([...plainDeltaParts(delta)].join(''))).toEqual(delta);
    expect(JSON.parse([...plainDeltaParts({ ...delta, changes: [] })].join(''))).toEqual({ ...delta, changes: [] });
  });
});
