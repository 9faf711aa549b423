import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  WIRE_FORMAT,
  WireFormatError,
  decodeDelta,
  decodeSnapshot,
  encodeDelta,
  encodeDeltaParts,
  encodeSnapshot,
  encodeSnapshotParts,
  wireStringsHeld,
  type Change,
  type Delta,
  type EventEntity,
  type ReferenceEntity,
  type ReferentEntity,
  type ReferrerEntity,
  type Snapshot,
  type StuckEntry,
} from '@/lib/changelog';

/**
 * decode(JSON.parse(encode(x))) equals x for snapshots and deltas: entities
 * as the engine writes them (derived fields consistent), and entities whose
 * "derived" fields disagree, odd keys, fractional times and extra fields,
 * which the format must carry as exceptions.
 */

const kinds = [
  'App.demo.refwatch.dev',
  'Database.demo.refwatch.dev',
  'Secret',
  'ClusterRole.rbac.authorization.k8s.io',
];
const namespaces = ['shop', 'team-1', ''];
const key = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom(...kinds), fc.constantFrom(...namespaces), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/))
      .map(([k, n, name]) => `${k}/${n}/${name}`),
  },
  { weight: 1, arbitrary: fc.string() }, // not a key at all: carried whole
  { weight: 1, arbitrary: fc.constant('a/b/c/d') },
);
const text = fc.oneof(
  fc.constantFrom('Ready', 'NotFound: x', 'creating volume pvc-data-0'),
  fc.string({ unit: 'grapheme' }),
);
const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 2e12, noNaN: true }) },
);
const count = fc.nat({ max: 1000 });
/** Mostly the engine's value of a derived field, sometimes another one. */
const maybeOther = <T>(derived: T, other: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(derived) }, { weight: 1, arbitrary: other });
const kindOf = (k: string) => k.slice(0, Math.max(0, k.indexOf('/')));
const nsOf = (k: string) => k.split('/')[1] ?? '';
const extra = fc.option(fc.record({ future: fc.oneof(fc.string(), fc.integer()) }), { nil: undefined, freq: 8 });

const referrer: fc.Arbitrary<ReferrerEntity> = fc
  .record({
    controller: fc.constantFrom('watch', 'demo/backoff'),
    key,
    state: fc.constantFrom('Resolved', 'Waiting', 'NotFound', 'NoMatch', 'Error'),
    reason: fc.option(text, { nil: undefined }),
    message: fc.option(text, { nil: undefined }),
    since: time,
    references: count,
    reconciles: count,
    lastReconcileAt: fc.option(time, { nil: undefined }),
    resolvedAt: fc.option(time, { nil: undefined }),
    warning: fc.option(text, { nil: undefined }),
    selections: fc.option(
      fc.array(
        fc.record({
          fieldPath: fc.constantFrom('spec.selector', 'spec.podSelector'),
          kind: fc.constantFrom('Pod', 'Namespace'),
          selector: fc.constantFrom('', 'app=web', 'tier in (a,b),!canary'),
          where: fc.constantFrom('shop', 'any namespace'),
          state: fc.constantFrom('Ready', 'NoMatch', 'NotReady', 'NotPrimed', 'NoSelector'),
          matched: count,
          ready: count,
        }),
        { maxLength: 2 },
      ),
      { nil: undefined },
    ),
    extra,
  })
  .chain((r) =>
    fc
      .record({
        id: maybeOther(`${r.controller}|${r.key}`, fc.string()),
        kind: maybeOther(kindOf(r.key), fc.string()),
        namespace: maybeOther(nsOf(r.key), fc.string()),
      })
      .map((d) => {
        const { extra: more, ...rest } = r;
        return strip({ ...rest, ...d, ...more }) as unknown as ReferrerEntity;
      }),
  );

const referent: fc.Arbitrary<ReferentEntity> = fc
  .record({
    key,
    state: fc.constantFrom('Ready', 'NotReady', 'NotFound', 'NotPrimed'),
    message: fc.option(text, { nil: undefined }),
    referencedBy: count,
    uid: fc.option(fc.uuid(), { nil: undefined }),
    resourceVersion: fc.option(fc.nat().map(String), { nil: undefined }),
    changedAt: time,
  })
  .chain((r) =>
    fc
      .record({
        id: maybeOther(r.key, fc.string()),
        kind: maybeOther(kindOf(r.key), fc.string()),
        namespace: maybeOther(nsOf(r.key), fc.string()),
      })
      .map((d) => strip({ ...r, ...d }) as unknown as ReferentEntity),
  );

const reference: fc.Arbitrary<ReferenceEntity> = fc
  .record({
    controller: fc.constantFrom('watch', 'demo/backoff'),
    referrer: key,
    referent: key,
    fieldPath: fc.constantFrom('spec.databaseRef', 'spec.volumes[0].secret.secretName'),
    count: fc.integer({ min: 1, max: 3 }),
    selector: fc.option(fc.constantFrom('app=web', ''), { nil: undefined }),
  })
  .chain((r) =>
    fc
      .record({
        id: maybeOther(`${r.controller}|${r.referrer}|${r.referent}|${r.fieldPath}`, fc.string()),
        kind: maybeOther(kindOf(r.referent), fc.string()),
        namespace: maybeOther(nsOf(r.referrer), fc.string()),
      })
      .map((d) => ({ ...r, ...d })),
  );

const event: fc.Arbitrary<EventEntity> = fc
  .record({
    id: fc.string({ minLength: 1 }),
    at: time,
    type: fc.constantFrom('Resolved', 'Waiting', 'ControllerStarted'),
    message: text,
    key: fc.option(key, { nil: undefined }),
    kind: fc.option(fc.constantFrom(...kinds), { nil: undefined }),
    namespace: fc.option(fc.constantFrom(...namespaces), { nil: undefined }),
    controller: fc.option(fc.constantFrom('watch'), { nil: undefined }),
    latencyMs: fc.option(fc.double({ min: 0, max: 1e5, noNaN: true }), { nil: undefined }),
  })
  .map((e) => strip(e) as unknown as EventEntity);

const stuckEntry: fc.Arbitrary<StuckEntry> = fc
  .record({
    controller: fc.constantFrom('watch'),
    key,
    state: fc.constantFrom('Waiting', 'NotFound'),
    since: time,
    ageMs: count,
    reason: fc.constantFrom('NotFound', 'NotReady'),
    message: text,
    fix: text,
    referent: fc.option(key, { nil: undefined }),
    rootCause: fc.option(
      fc
        .record({
          path: fc.array(key, { minLength: 3, maxLength: 5 }),
          referent: key,
          state: fc.constantFrom('NotFound', 'NotReady'),
          reason: text,
          message: text,
          fix: text,
          cycle: fc.option(fc.constant(true), { nil: undefined }),
          truncated: fc.option(fc.constant(true), { nil: undefined }),
        })
        .map((rc) => strip(rc) as unknown as StuckEntry['rootCause']),
      { nil: undefined },
    ),
    workload: fc.option(key, { nil: undefined }),
  })
  .chain((s) =>
    maybeOther(`${s.controller}|${s.key}`, fc.string()).map((id) => strip({ ...s, id }) as unknown as StuckEntry),
  );

const queue = fc.record({
  id: fc.constant('watch'),
  controller: fc.constant('watch'),
  depth: count,
  processing: count,
  adds: count,
  retries: count,
  reconciles: count,
  errors: count,
  workers: count,
  longestRunningMs: count,
});

const snapshot: fc.Arbitrary<Snapshot> = fc
  .record({
    revision: fc.nat(),
    referrers: fc.array(referrer, { maxLength: 12 }),
    referents: fc.array(referent, { maxLength: 12 }),
    references: fc.array(reference, { maxLength: 12 }),
    events: fc.array(event, { maxLength: 5 }),
    stuck: fc.array(stuckEntry, { maxLength: 5 }),
    queues: fc.array(queue, { maxLength: 2 }),
    stuckThresholdMs: fc.option(count, { nil: undefined }),
  })
  .map(
    (s) =>
      strip({
        ...s,
        cluster: { mode: 'embedded', server: 'http://127.0.0.1:1', reachable: true },
        controllers: [],
        watches: [],
      }) as unknown as Snapshot,
  );

const change: fc.Arbitrary<Omit<Change, 'revision'>> = fc.oneof(
  referrer.map((value) => ({ entity: 'referrer' as const, id: value.id, removed: false as const, value })),
  referent.map((value) => ({ entity: 'referent' as const, id: value.id, removed: false as const, value })),
  reference.map((value) => ({ entity: 'reference' as const, id: value.id, removed: false as const, value })),
  event.map((value) => ({ entity: 'event' as const, id: value.id, removed: false as const, value })),
  queue.map((value) => ({ entity: 'queue' as const, id: value.id, removed: false as const, value })),
  fc.record({
    entity: fc.constantFrom('referrer' as const, 'reference' as const, 'controller' as const),
    id: fc.string(),
    removed: fc.constant(true as const),
  }),
);

const delta: fc.Arbitrary<Delta> = fc
  .record({
    from: fc.nat({ max: 1e6 }),
    changes: fc.array(fc.tuple(change, fc.integer({ min: 1, max: 5 })), { maxLength: 15 }),
  })
  .map(({ from, changes }) => {
    let revision = from;
    const out = changes.map(([c, step]) => ({ ...c, revision: (revision += step) }) as Change);
    return { from, revision: revision + 1, changes: out };
  });

/** Drops undefined-valued properties, as JSON does. */
function strip<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

// The properties are CPU-bound (hundreds of runs, some of 100,000s of rows): a few seconds on an idle
// machine, minutes on a loaded 2-core one. Nothing here is timed; the limit only catches a hang.
describe('lean wire format', { timeout: 240_000 }, () => {
  it('decodes every snapshot it encodes to the same snapshot', () => {
    fc.assert(
      fc.property(snapshot, (s) => {
        expect(decodeSnapshot(JSON.parse(encodeSnapshot(s)))).toEqual(s);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes every delta it encodes to the same delta, changes in order', () => {
    fc.assert(
      fc.property(delta, (d) => {
        expect(decodeDelta(JSON.parse(encodeDelta(d)))).toEqual(d);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes snapshots of more rows than one encoding step (columns in several pieces, key tables of many keys)', () => {
    const large = fc.record({
      referrers: fc.array(referrer, { minLength: 501, maxLength: 1200 }),
      references: fc.array(reference, { minLength: 501, maxLength: 1200 }),
    });
    fc.assert(
      fc.property(snapshot, large, (s, { referrers, references }) => {
        const big = { ...s, referrers, references };
        expect(decodeSnapshot(JSON.parse(encodeSnapshot(big)))).toEqual(big);
      }),
      { numRuns: 10 },
    );
  });

  it('gives the same text in pieces as at once', () => {
    fc.assert(
      fc.property(snapshot, delta, (s, d) => {
        expect([...encodeSnapshotParts(s)].join('')).toBe(encodeSnapshot(s));
        expect([...encodeDeltaParts(d)].join('')).toBe(encodeDelta(d));
      }),
      { numRuns: 50 },
    );
  });

  it('encodes rows it sent before, in other messages, as it encodes fresh copies of them', () => {
    fc.assert(
      fc.property(snapshot, delta, snapshot, (s, d, other) => {
        const first = encodeSnapshot(s);
        encodeDelta(d);
        encodeSnapshot(other);
        // A message mixing rows sent before with new ones, in another order.
        const mixed = {
          ...s,
          referrers: [...other.referrers, ...s.referrers].reverse(),
          references: [...s.references, ...other.references],
        };
        expect(decodeSnapshot(JSON.parse(encodeSnapshot(mixed)))).toEqual(mixed);
        expect(encodeSnapshot(s)).toBe(first);
        expect(encodeSnapshot(structuredClone(s))).toBe(first);
        const rows = d.changes.flatMap((c) => (c.removed ? [] : [c]));
        expect(decodeDelta(JSON.parse(encodeDelta({ ...d, changes: rows })))).toEqual({ ...d, changes: rows });
      }),
      { numRuns: 200 },
    );
  });

  it('forgets strings no snapshot sends any more: its registry stays within twice the largest snapshot, plus a margin', () => {
    const snapshotOf = (round: number): Snapshot => ({
      revision: round,
      cluster: { mode: 'embedded', server: '', reachable: true },
      controllers: [],
      watches: [],
      // The same keys each round, with a message never sent before.
      referrers: Array.from({ length: 5000 }, (_, i) => ({
        id: `watch|App.demo.refwatch.dev/shop/web-${i}`,
        controller: 'watch',
        key: `App.demo.refwatch.dev/shop/web-${i}`,
        kind: 'App.demo.refwatch.dev',
        namespace: 'shop',
        state: 'Waiting',
        message: `round ${round}: waiting for orders-${i}`,
        since: 1_700_000_000_000,
        references: 1,
        reconciles: round,
      })) as ReferrerEntity[],
      referents: [],
      references: [],
      queues: [],
      events: [],
      stuck: [],
    });
    const sizes: number[] = [];
    for (let round = 0; round < 40; round++) {
      const s = snapshotOf(round);
      expect(decodeSnapshot(JSON.parse(encodeSnapshot(s)))).toEqual(s);
      sizes.push(wireStringsHeld());
    }
    // 10,003 strings a snapshot (5,000 keys, 5,000 messages, 3 more): without forgetting, 40 rounds would hold 205,000.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2 * 10_003 + 50_000 + 10_003);
    expect(sizes.some((size, i) => i > 0 && size < sizes[i - 1]!)).toBe(true);
  });

  it('encodes snapshots of hundreds of thousands of rows: rows kept across several maps, and beyond what the registry keeps', () => {
    const references = (n: number): ReferenceEntity[] =>
      Array.from({ length: n }, (_, i) => {
        const referrer = `App.demo.refwatch.dev/team-${i % 50}/web-${i}`;
        const referent = `Database.demo.refwatch.dev/team-${i % 50}/orders-${i % 7000}`;
        return {
          id: `watch|${referrer}|${referent}|spec.databaseRef`,
          controller: 'watch',
          referrer,
          referent,
          fieldPath: 'spec.databaseRef',
          count: 1,
          kind: 'Database.demo.refwatch.dev',
          namespace: `team-${i % 50}`,
        };
      });
    const snapshotOf = (refs: ReferenceEntity[]): Snapshot => ({
      revision: 1,
      cluster: { mode: 'embedded', server: '', reachable: true },
      controllers: [],
      watches: [],
      referrers: [],
      referents: [],
      references: refs,
      queues: [],
      events: [],
      stuck: [],
    });
    // 200,000 rows: the registry kept between messages takes them, their codes kept in several maps.
    const kept = snapshotOf(references(200_000));
    const first = encodeSnapshot(kept);
    expect(encodeSnapshot(kept)).toBe(first);
    expect(decodeSnapshot(JSON.parse(first))).toEqual(kept);
    // 300,000 rows: a registry of its own, dropped with the message.
    const held = wireStringsHeld();
    const big = snapshotOf(references(300_000));
    const text = encodeSnapshot(big);
    expect(wireStringsHeld()).toBe(held);
    expect(decodeSnapshot(JSON.parse(text))).toEqual(big);
  });

  it('sends a column of megabytes in cuts that split no character: each piece is whole UTF-16', () => {
    // uids of astral characters (two UTF-16 units each) of uneven lengths: the column's text is kept in pieces
    // of hundreds of thousands of units and sent in cuts, which land in the middle of a pair unless kept from it.
    const referents: ReferentEntity[] = Array.from({ length: 14_000 }, (_, i) => ({
      id: `Secret/shop/s-${i}`,
      key: `Secret/shop/s-${i}`,
      kind: 'Secret',
      namespace: 'shop',
      state: 'Ready',
      referencedBy: 1,
      changedAt: 1_700_000_000_000 + i,
      uid: `${'x'.repeat(i % 3)}${'\u{1F600}'.repeat(20 + (i % 7))}`,
    }));
    const s: Snapshot = {
      revision: 1,
      cluster: { mode: 'embedded', server: '', reachable: true },
      controllers: [],
      watches: [],
      referrers: [],
      referents,
      references: [],
      queues: [],
      events: [],
      stuck: [],
    };
    const parts = [...encodeSnapshotParts(s)];
    // A piece with half a pair comes back from UTF-8 with U+FFFD in its place.
    expect(parts.filter((p) => Buffer.from(p, 'utf8').toString('utf8') !== p)).toEqual([]);
    // Each piece encoded on its own, as a response's slices are, gives the bytes of the whole.
    const bytes = Buffer.concat(parts.map((p) => Buffer.from(p, 'utf8')));
    const text = encodeSnapshot(s);
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(bytes.equals(Buffer.from(text, 'utf8'))).toBe(true);
    expect(decodeSnapshot(JSON.parse(text))).toEqual(s);
  });

  it('carries a reference once: no id, kind or namespace that its other fields give', () => {
    const ref: ReferenceEntity = {
      id: 'watch|App.demo.refwatch.dev/shop/web|Database.demo.refwatch.dev/shop/orders|spec.databaseRef',
      controller: 'watch',
      referrer: 'App.demo.refwatch.dev/shop/web',
      referent: 'Database.demo.refwatch.dev/shop/orders',
      fieldPath: 'spec.databaseRef',
      count: 1,
      kind: 'Database.demo.refwatch.dev',
      namespace: 'shop',
    };
    const s = {
      revision: 1,
      cluster: { mode: 'embedded', server: '', reachable: true },
      controllers: [],
      watches: [],
      referrers: [],
      referents: [],
      references: [ref],
      queues: [],
      events: [],
      stuck: [],
    } satisfies Snapshot;
    const wire = JSON.parse(encodeSnapshot(s));
    expect(wire.references).toEqual({
      n: 1,
      controller: [1],
      referrer: [0],
      referent: [1],
      fieldPath: [5],
      count: [1],
      selector: [0], // a name reference: no selector
    });
    expect(wire.keys.name).toEqual(['web', 'orders']);
    expect(wire.strings).toEqual([
      'watch',
      'App.demo.refwatch.dev',
      'shop',
      'Database.demo.refwatch.dev',
      'spec.databaseRef',
    ]);
    expect(decodeSnapshot(wire).references).toEqual([ref]);
  });

  it('refuses a message of another format, naming it', () => {
    expect(() => decodeSnapshot({ revision: 1, referrers: [] })).toThrow(WireFormatError);
    expect(() => decodeSnapshot({ revision: 1, referrers: [] })).toThrow(
      /format null, this client reads refwatch\.lean\/1/,
    );
    expect(() =>
      decodeDelta({
        format: WIRE_FORMAT,
        from: 1,
        revision: 2,
        changes: { entity: 'r', revision: [1], removed: [] },
        keys: { kind: [], namespace: [], name: [] },
        strings: [],
      }),
    ).toThrow(/more referrer changes than referrers/);
  });
});
