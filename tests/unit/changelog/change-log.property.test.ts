import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangeLog, type AnyEntity, type ChangeFilter, type EntityKind } from '@/lib/changelog';

/**
 * The change log against a naive model that keeps every put and remove. For a
 * client that took a (filtered) snapshot at revision r, applying
 * changesSince(r) to that snapshot must give the snapshot at the latest
 * revision, unless the log answers resnapshot because r was compacted away.
 */

const KINDS = ['referent', 'reference', 'queue', 'event'] as const satisfies readonly EntityKind[];
type Kind = (typeof KINDS)[number];

type Value = { id: string; kind: string; namespace?: string; v: number };

type Op =
  | { op: 'put'; entity: Kind; id: string; kind: string; namespace: string | undefined }
  | { op: 'remove'; entity: Kind; id: string }
  | { op: 'checkpoint'; filter: ChangeFilter }
  | { op: 'compact' };

const entityArb = fc.constantFrom(...KINDS);
const idArb = fc.constantFrom('a', 'b', 'c');
const filterArb: fc.Arbitrary<ChangeFilter> = fc.record(
  {
    namespace: fc.constantFrom('x', 'y'),
    kind: fc.constantFrom('A', 'B'),
    entities: fc.subarray([...KINDS], { minLength: 1 }),
  },
  { requiredKeys: [] },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('put' as const),
      entity: entityArb,
      id: idArb,
      kind: fc.constantFrom('A', 'A', 'B'),
      namespace: fc.constantFrom('x', 'x', 'y', undefined),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('remove' as const), entity: entityArb, id: idArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('checkpoint' as const), filter: filterArb }) },
  { weight: 1, arbitrary: fc.constant({ op: 'compact' as const }) },
);

type State = Map<string, Value>; // `${entity}/${id}` → value

const slot = (entity: EntityKind, id: string): string => `${entity}/${id}`;

function inFilter(entity: EntityKind, value: Value, filter: ChangeFilter): boolean {
  if (filter.entities !== undefined && !filter.entities.includes(entity)) return false;
  if (filter.kind !== undefined && value.kind !== filter.kind) return false;
  if (filter.namespace !== undefined && value.namespace !== filter.namespace) return false;
  return true;
}

function filtered(state: State, filter: ChangeFilter): State {
  return new Map([...state].filter(([s, v]) => inFilter(s.split('/')[0] as EntityKind, v, filter)));
}

function fromSnapshot(snapshot: ReturnType<ChangeLog['snapshot']>): State {
  const state: State = new Map();
  for (const [entity, values] of Object.entries(snapshot.entities)) {
    for (const value of values as AnyEntity[])
      state.set(slot(entity as EntityKind, value.id), value as unknown as Value);
  }
  return state;
}

/** One change to an entity in the naive model: what it became, and at which revision. */
type Step = { revision: number; value: Value | undefined };

describe('ChangeLog against a naive model', () => {
  it('brings every client from its snapshot to the latest one with changesSince', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 5, maxLength: 120, size: 'max' }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 4 }),
        (ops, retainRevisions, maxEvents) => {
          const log = new ChangeLog({ retainRevisions, maxEvents });
          const state: State = new Map();
          const history = new Map<string, Step[]>(); // every revisioned change per entity
          const liveEvents: string[] = []; // ids, least recently put first
          const expired = new Set<string>(); // events dropped silently, at any time
          const clients: { rev: number; filter: ChangeFilter; state: State }[] = [];
          let v = 0;

          const record = (s: string, step: Step): void => {
            history.set(s, [...(history.get(s) ?? []), step]);
          };

          for (const op of ops) {
            if (op.op === 'put') {
              const value: Value = {
                id: op.id,
                kind: op.kind,
                v: ++v,
                ...(op.namespace === undefined ? {} : { namespace: op.namespace }),
              };
              const revision = log.put(op.entity, op.id, value as unknown as AnyEntity as never);
              expect(revision).toBe(log.revision);
              state.set(slot(op.entity, op.id), value);
              record(slot(op.entity, op.id), { revision, value });
              if (op.entity === 'event') {
                liveEvents.splice(liveEvents.indexOf(op.id) >>> 0, liveEvents.includes(op.id) ? 1 : 0);
                liveEvents.push(op.id);
                if (liveEvents.length > maxEvents) {
                  const oldest = liveEvents.shift()!;
                  state.delete(slot('event', oldest));
                  expired.add(oldest);
                }
              }
            } else if (op.op === 'remove') {
              const s = slot(op.entity, op.id);
              const before = log.revision;
              const revision = log.remove(op.entity, op.id);
              if (!state.has(s)) {
                expect(revision).toBeUndefined();
              } else if (op.entity === 'event') {
                expect(revision).toBe(before); // silent: no revision, no tombstone
                liveEvents.splice(liveEvents.indexOf(op.id), 1);
                expired.add(op.id);
                state.delete(s);
              } else {
                expect(revision).toBe(before + 1);
                state.delete(s);
                record(s, { revision: revision!, value: undefined });
              }
            } else if (op.op === 'compact') {
              log.compact();
            } else {
              const snapshot = log.snapshot(op.filter);
              expect(snapshot.revision).toBe(log.revision);
              const clientState = fromSnapshot(snapshot);
              expect(clientState).toEqual(filtered(state, op.filter));
              clients.push({ rev: snapshot.revision, filter: op.filter, state: clientState });
            }
          }

          for (const kind of KINDS) {
            expect(log.size(kind)).toBe([...state.keys()].filter((s) => s.startsWith(`${kind}/`)).length);
          }

          for (const client of clients) {
            const result = log.changesSince(client.rev, client.filter);
            expect(result.revision).toBe(log.revision);
            if (client.rev >= log.revision - retainRevisions) expect(result.resnapshot).toBe(false);
            if (result.resnapshot) {
              // Only because a removal the client has not seen aged out of the window.
              expect(client.rev).toBeLessThan(log.compactedRevision);
              const removals = [...history.values()]
                .flat()
                .filter((step) => step.value === undefined)
                .map((step) => step.revision);
              expect(removals.some((r) => r > client.rev && r < log.revision - retainRevisions)).toBe(true);
              continue;
            }

            // Coalesced, oldest first, and nothing the client already has.
            const revisions = result.changes.map((c) => c.revision);
            expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
            expect(new Set(revisions).size).toBe(revisions.length);
            expect(new Set(result.changes.map((c) => slot(c.entity, c.id))).size).toBe(result.changes.length);
            for (const r of revisions) expect(r > client.rev && r <= log.revision).toBe(true);

            const applied = new Map(client.state);
            for (const change of result.changes) {
              const s = slot(change.entity, change.id);
              if (change.removed) {
                // Told of a removal only if it may hold the entity: it did at rev, or since
                // then the entity came to life more than once, or changed kind or namespace.
                const { lives, moved } = since(history.get(s) ?? [], client.rev);
                expect(client.state.has(s) || lives >= 2 || moved).toBe(true);
                applied.delete(s);
              } else {
                applied.set(s, change.value as unknown as Value);
              }
            }

            // Clients trim their own timelines: they may keep events that expired silently.
            const expected = filtered(state, client.filter);
            for (const [s, value] of applied) {
              if (s.startsWith('event/') && !expected.has(s)) {
                expect(expired.has(s.slice('event/'.length))).toBe(true);
                applied.delete(s);
              } else {
                expect(value).toEqual(expected.get(s));
              }
            }
            expect(applied.size).toBe(expected.size);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** From an entity's history: how often it was created or put back since rev, and whether its scope changed. */
function since(steps: Step[], rev: number): { lives: number; moved: boolean } {
  let lives = 0;
  const scopes = new Set<string>();
  let lastValue: Value | undefined; // a removed entity keeps its last scope
  steps.forEach((step, i) => {
    const previous = steps[i - 1];
    if (step.revision > rev && step.value !== undefined && previous?.value === undefined) lives++;
    if (step.value !== undefined) {
      if (step.revision > rev && lastValue !== undefined) scopes.add(`${lastValue.kind}|${lastValue.namespace}`);
      if (step.revision > rev) scopes.add(`${step.value.kind}|${step.value.namespace}`);
      lastValue = step.value;
    }
  });
  return { lives, moved: scopes.size > 1 };
}

/** Puts and removes over a few ids and two namespaces, for a log read in steps; values name a key, as a scope's `q` reads. */
const stepIdsArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const stepChangeArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('put' as const),
      entity: entityArb,
      id: stepIdsArb,
      kind: fc.constantFrom('A', 'B'),
      namespace: fc.constantFrom('x', 'y', undefined),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), entity: entityArb, id: stepIdsArb }) },
);
type StepChange =
  | { op: 'put'; entity: Kind; id: string; kind: string; namespace: string | undefined }
  | { op: 'remove'; entity: Kind; id: string };

/** readInSteps fills a log (entries compacted and expiring fast) with `before`, then reads it in steps with `between[i]` applied after step i. */
function readInSteps(
  log: ChangeLog,
  before: StepChange[],
  between: StepChange[][],
  filter: ChangeFilter | undefined,
  step: number,
  atStart: () => void,
) {
  let v = 0;
  const apply = (c: StepChange) => {
    if (c.op === 'remove') {
      log.remove(c.entity, c.id);
      return;
    }
    const key = `${c.namespace ?? '-'}/${c.id}`;
    log.put(c.entity, c.id, {
      id: c.id,
      kind: c.kind,
      v: ++v,
      key,
      referrer: key,
      referent: key,
      ...(c.namespace ? { namespace: c.namespace } : {}),
    } as never);
  };
  before.forEach(apply);
  atStart();
  const steps = log.snapshotSteps(filter, step);
  let r = steps.next();
  for (let i = 0; !r.done; i++) {
    (between[i] ?? []).forEach(apply);
    r = steps.next();
  }
  return r.value;
}

describe('ChangeLog.snapshotSteps', () => {
  it('is the snapshot of its first revision, whatever changes between its steps', () => {
    fc.assert(
      fc.property(
        fc.array(stepChangeArb, { maxLength: 30, size: 'max' }),
        fc.array(fc.array(stepChangeArb, { maxLength: 4, size: 'max' }), { maxLength: 40, size: 'max' }),
        fc.option(filterArb, { nil: undefined }),
        fc.integer({ min: 1, max: 3 }),
        (before, between, filter, step) => {
          // Small retention and event cap: entries are compacted and expire while the snapshot is read.
          const log = new ChangeLog({ retainRevisions: 2, maxEvents: 3 });
          let expected: ReturnType<ChangeLog['snapshot']> | undefined;
          const value = readInSteps(log, before, between, filter, step, () => (expected = log.snapshot(filter)));
          expect(value.revision).toBe(expected!.revision);
          expect(fromSnapshot(value)).toEqual(fromSnapshot(expected!));
          for (const kind of KINDS) expect(value.entities[kind]).toHaveLength(expected!.entities[kind].length);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('ChangeLog.snapshotSteps over a namespace index', () => {
  type Scoped = Value & { key: string; referrer: string; referent: string };
  /** What a scope takes, said plainly: the fields, `always` first, as docs/api.md lists them. */
  function inScope(entity: EntityKind, value: Scoped, filter: ChangeFilter): boolean {
    if (filter.entities !== undefined && !filter.entities.includes(entity)) return false;
    if (filter.always?.includes(entity)) return true;
    if (!inFilter(entity, value, { ...filter, entities: undefined })) return false;
    const keys = entity === 'queue' ? [] : entity === 'reference' ? [value.referrer, value.referent] : [value.key];
    if (filter.q !== undefined && !keys.some((k) => k.toLowerCase().includes(filter.q!.toLowerCase()))) return false;
    return filter.where === undefined || filter.where(entity, value as unknown as AnyEntity);
  }
  // Often the namespace alone, so entries moved out of it while it is read are often in the scope too.
  const scopeArb: fc.Arbitrary<ChangeFilter> = fc.oneof(
    fc.record({ namespace: fc.constantFrom('x', 'y') }),
    fc.record(
      {
        namespace: fc.constantFrom('x', 'y'),
        kind: fc.constantFrom('A', 'B'),
        entities: fc.subarray([...KINDS], { minLength: 1 }),
        always: fc.subarray([...KINDS], { minLength: 1 }),
        q: fc.constantFrom('X/', 'b', 'y/c'),
        where: fc.constant((_e: EntityKind, v: AnyEntity) => (v as unknown as Value).v % 3 !== 0),
      },
      { requiredKeys: ['namespace'] },
    ),
  );

  it('is what the whole log holds in that scope at its first revision, while entries move between namespaces, expire and are compacted', () => {
    fc.assert(
      fc.property(
        fc.array(stepChangeArb, { maxLength: 30, size: 'max' }),
        fc.array(fc.array(stepChangeArb, { maxLength: 4, size: 'max' }), { maxLength: 40, size: 'max' }),
        scopeArb,
        fc.integer({ min: 1, max: 3 }),
        (before, between, filter, step) => {
          const log = new ChangeLog({ retainRevisions: 2, maxEvents: 3 });
          // An observer that reads a snapshot of its own inside every change, and mirrors the live state from what it is told.
          const mirror: State = new Map();
          log.observe((entity, id, _previous, next) => {
            log.snapshot(filter);
            if (next === undefined) mirror.delete(slot(entity, id));
            else mirror.set(slot(entity, id), next as unknown as Value);
          });
          let expected: State = new Map();
          const value = readInSteps(log, before, between, filter, step, () => {
            const whole = fromSnapshot(log.snapshot());
            expected = new Map(
              [...whole].filter(([s, v]) => inScope(s.split('/')[0] as EntityKind, v as Scoped, filter)),
            );
          });
          expect(fromSnapshot(value)).toEqual(expected);
          for (const kind of KINDS)
            expect(value.entities[kind]).toHaveLength(
              [...expected.keys()].filter((s) => s.startsWith(`${kind}/`)).length,
            );
          expect(mirror).toEqual(fromSnapshot(log.snapshot()));
        },
      ),
      { numRuns: 500 },
    );
  });
});
