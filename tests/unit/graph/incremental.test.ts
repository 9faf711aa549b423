import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyDelta } from '@/components/data/applyDelta';
import { groupModel, regroupModel, type GroupBy } from '@/components/graph/grouping';
import { buildModelState, classifyChange, updateModel } from '@/components/graph/incremental';
import { buildModel, controllerNodeId, objectNodeId } from '@/components/graph/model';
import type { ReferenceControllerState, ReferentState, ReferrerEntity, ReferrerState } from '@/lib/changelog/entities';
import type { Change, Snapshot } from '@/lib/changelog/wire';
import { demoSnapshot, largeSnapshot } from '@/tests/fixtures/snapshot';

const NOW = 1_700_000_000_000;
const APP = 'App.demo.refwatch.dev';

/** base is the demo snapshot plus the cases folding must get right: a key referred by two controllers, and an App that is also a referent. */
function base(): Snapshot {
  const s = demoSnapshot(NOW);
  const checkout = s.referrers.find((r) => r.key === `${APP}/shop/checkout`)!;
  s.referrers.push({
    ...checkout,
    id: `other-watch|${checkout.key}`,
    controller: 'other-watch',
    state: 'Resolved',
    since: NOW - 1000,
  });
  s.referents.push({
    id: `${APP}/shop/storefront`,
    key: `${APP}/shop/storefront`,
    kind: APP,
    namespace: 'shop',
    state: 'Ready',
    referencedBy: 1,
    changedAt: NOW - 5000,
  });
  return s;
}

/** A change before the stream numbers it. */
type ChangeInput = Change extends infer C ? (C extends unknown ? Omit<C, 'revision'> : never) : never;

let revision = 10_000;
function delta(s: Snapshot, changes: ChangeInput[]): Snapshot {
  const from = Math.max(s.revision, revision);
  const withRevisions = changes.map((c) => ({ ...c, revision: ++revision }) as Change);
  return applyDelta(s, { from, revision, changes: withRevisions });
}

function referrerChange(r: ReferrerEntity, patch: Partial<ReferrerEntity>): ChangeInput {
  return { entity: 'referrer', id: r.id, removed: false, value: { ...r, ...patch } };
}

describe('classifyChange', () => {
  it('calls a referrer turning Resolved a status change of that object only', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const waiting = s.referrers.find((r) => r.key === `${APP}/analytics/reports`)!;
    const next = delta(s, [referrerChange(waiting, { state: 'Resolved', since: NOW })]);
    const change = classifyChange(prev, next, NOW, prev.stuckAfterMs);
    expect(change).toEqual({ kind: 'status', keys: new Set([waiting.key]), controllers: [] });
  });

  it('calls a new referrer, a removed referent or a new reference structural', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const r = s.referrers[0]!;
    const added = delta(s, [
      {
        entity: 'referrer',
        id: 'new',
        removed: false,
        value: { ...r, id: 'new', key: `${APP}/shop/new`, state: 'Waiting' },
      },
    ]);
    expect(classifyChange(prev, added, NOW, prev.stuckAfterMs).kind).toBe('structural');
    const removed = delta(s, [{ entity: 'referent', id: s.referents[0]!.id, removed: true }]);
    expect(classifyChange(prev, removed, NOW, prev.stuckAfterMs).kind).toBe('structural');
    const ref = s.references[0]!;
    const referenced = delta(s, [
      { entity: 'reference', id: 'x', removed: false, value: { ...ref, id: 'x', fieldPath: 'spec.otherRef' } },
    ]);
    expect(classifyChange(prev, referenced, NOW, prev.stuckAfterMs).kind).toBe('structural');
  });

  it('calls an entity whose key changed under the same position structural', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const r = s.referrers[0]!;
    const moved = delta(s, [referrerChange(r, { key: `${APP}/elsewhere/x`, namespace: 'elsewhere' })]);
    expect(classifyChange(prev, moved, NOW, prev.stuckAfterMs).kind).toBe('structural');
  });

  it('sees nothing to do when only queues or events changed', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const next = delta(s, [
      {
        entity: 'event',
        id: 'ev-new',
        removed: false,
        value: { id: 'ev-new', at: NOW, type: 'dispatch', message: 'x' } as never,
      },
    ]);
    expect(classifyChange(prev, next, NOW, prev.stuckAfterMs)).toEqual({ kind: 'none' });
    expect(updateModel(prev, next, { now: NOW }).model).toBe(prev.model);
  });

  it('recomputes the referrers that cross the stuck threshold when the clock moves', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const change = classifyChange(prev, s, NOW + 60_000, prev.stuckAfterMs);
    expect(change.kind).toBe('status');
    if (change.kind === 'status') expect(change.keys.has(`${APP}/shop/checkout`)).toBe(true);
    const later = updateModel(prev, s, { now: NOW + 60_000 });
    expect(later.model.nodes.find((n) => n.key === `${APP}/shop/checkout`)?.state).toBe('stuck');
  });
});

describe('updateModel', () => {
  it('patches a status change: new states, the other nodes and the edges stay the same objects', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const db = s.referents.find((r) => r.key.endsWith('/analytics/warehouse'))!;
    const next = delta(s, [
      { entity: 'referent', id: db.id, removed: false, value: { ...db, state: 'Ready', message: undefined } },
    ]);
    const patched = updateModel(prev, next, { now: NOW });
    expect(patched.model.edges).toBe(prev.model.edges);
    const id = objectNodeId(db.key);
    expect(patched.model.nodes.find((n) => n.id === id)?.state).toBe('resolved');
    const untouched = patched.model.nodes.filter((n, i) => n === prev.model.nodes[i]);
    expect(untouched).toHaveLength(prev.model.nodes.length - 1);
    expect(patched.model).toEqual(buildModel(next, { now: NOW }));
  });

  it('patches a reference controller going into grace', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const c = s.controllers.find((x) => x.state === 'Active')!;
    const next = delta(s, [
      { entity: 'controller', id: c.id, removed: false, value: { ...c, state: 'Grace', reason: 'no references left' } },
    ]);
    const patched = updateModel(prev, next, { now: NOW });
    expect(patched.model.nodes.find((n) => n.id === controllerNodeId(c.kind))).toMatchObject({
      state: 'grace',
      reason: 'no references left',
    });
    expect(patched.model).toEqual(buildModel(next, { now: NOW }));
  });

  it('uses the server’s stuck threshold from the snapshot, 30 s without one', () => {
    const s = { ...base(), stuckThresholdMs: 2000 };
    const checkout = (m: ReturnType<typeof buildModel>) =>
      m.nodes.find((n) => n.key === `${APP}/analytics/reports`)?.state;
    expect(checkout(buildModelState(s, { now: NOW }).model)).toBe('stuck');
    expect(checkout(buildModelState(base(), { now: NOW }).model)).toBe('waiting');
  });
});

const REFERRER_STATES: ReferrerState[] = ['Resolved', 'Waiting', 'NotFound', 'Error'];
const REFERENT_STATES: ReferentState[] = [
  'Ready',
  'NotReady',
  'NotPrimed',
  'NotFound',
  'KindUnknown',
  'Forbidden',
  'WatchError',
];
const CONTROLLER_STATES: ReferenceControllerState[] = ['Starting', 'Priming', 'Active', 'Grace', 'Cancelled'];

/** statusChange picks an existing referrer, referent or controller and gives it a new state (and maybe a message and a time). */
const statusChange = fc.oneof(
  fc.record({
    entity: fc.constant('referrer' as const),
    at: fc.nat(),
    state: fc.constantFrom(...REFERRER_STATES),
    sinceAgo: fc.integer({ min: 0, max: 120_000 }),
    message: fc.option(fc.constantFrom('Ready=False', 'not found'), { nil: undefined }),
  }),
  fc.record({
    entity: fc.constant('referent' as const),
    at: fc.nat(),
    state: fc.constantFrom(...REFERENT_STATES),
    sinceAgo: fc.integer({ min: 0, max: 120_000 }),
    message: fc.option(fc.constantFrom('Ready=False', 'not found'), { nil: undefined }),
  }),
  fc.record({
    entity: fc.constant('controller' as const),
    at: fc.nat(),
    state: fc.constantFrom(...CONTROLLER_STATES),
    sinceAgo: fc.integer({ min: 0, max: 120_000 }),
    message: fc.constant(undefined),
  }),
  fc.record({
    entity: fc.constant('stuck' as const),
    at: fc.nat(),
    state: fc.constant('Waiting' as const),
    sinceAgo: fc.integer({ min: 0, max: 120_000 }),
    message: fc.option(fc.constantFrom('waiting on a typo'), { nil: undefined }),
  }),
);
type StatusChange = typeof statusChange extends fc.Arbitrary<infer T> ? T : never;

/** applyStatusChanges applies the changes as the stream would: one delta, plus the stuck list the server would send next. */
function applyStatusChanges(s: Snapshot, changes: readonly StatusChange[]): Snapshot {
  const out: ChangeInput[] = [];
  let stuck = s.stuck;
  for (const c of changes) {
    if (c.entity === 'referrer') {
      const r = s.referrers[c.at % s.referrers.length]!;
      out.push({
        entity: 'referrer',
        id: r.id,
        removed: false,
        value: {
          ...r,
          state: c.state,
          since: NOW - c.sinceAgo,
          ...(c.message ? { message: c.message } : { message: undefined }),
        },
      });
    } else if (c.entity === 'referent') {
      const r = s.referents[c.at % s.referents.length]!;
      out.push({
        entity: 'referent',
        id: r.id,
        removed: false,
        value: {
          ...r,
          state: c.state,
          changedAt: NOW - c.sinceAgo,
          ...(c.message ? { message: c.message } : { message: undefined }),
        },
      });
    } else if (c.entity === 'controller') {
      const x = s.controllers[c.at % s.controllers.length]!;
      out.push({
        entity: 'controller',
        id: x.id,
        removed: false,
        value: {
          ...x,
          state: c.state,
          history: [...x.history, { at: NOW - c.sinceAgo, state: c.state, reason: 'test' }],
        },
      });
    } else {
      // Toggle one referrer's presence on the server's stuck list.
      const r = s.referrers[c.at % s.referrers.length]!;
      stuck = stuck.some((x) => x.id === r.id)
        ? stuck.filter((x) => x.id !== r.id)
        : [
            ...stuck,
            {
              id: r.id,
              key: r.key,
              controller: r.controller,
              state: r.state,
              since: r.since,
              ageMs: 0,
              reason: 'NotFound',
              message: c.message ?? '',
              fix: '',
            },
          ];
    }
  }
  const next = delta(s, out);
  return stuck === s.stuck ? next : { ...next, stuck };
}

const snapshots = fc
  .constantFrom('demo', 'large')
  .map((which) => (which === 'demo' ? base() : largeSnapshot(NOW, 120, 6)));

describe('incremental and full models agree', () => {
  it('applying random status-only changes incrementally gives the model a rebuild from the new snapshot gives', () => {
    fc.assert(
      fc.property(
        snapshots,
        fc.array(fc.array(statusChange, { maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 90_000 }), { minLength: 4, maxLength: 4 }),
        (start, batches, clock) => {
          let s = start;
          let state = buildModelState(s, { now: NOW });
          batches.forEach((batch, i) => {
            s = applyStatusChanges(s, batch);
            const now = NOW + clock[i]!;
            const change = classifyChange(state, s, now, state.stuckAfterMs);
            expect(change.kind).not.toBe('structural');
            state = updateModel(state, s, { now });
            expect(state.model).toEqual(buildModel(s, { now }));
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('regrouping a status-only change gives the groups grouping from scratch gives, collapsed or expanded', () => {
    const by = fc.constantFrom<GroupBy>('none', 'namespace', 'kind', 'flat');
    fc.assert(
      fc.property(
        snapshots,
        fc.array(statusChange, { minLength: 1, maxLength: 20 }),
        by,
        fc.boolean(),
        fc.subarray(['grp:namespace:shop', 'grp:namespace:team-1', 'grp:kind:Secret']),
        (s, batch, groupBy, collapse, expandedList) => {
          const opts = { by: groupBy, expanded: new Set(expandedList), collapseAbove: collapse ? 10 : 2000 };
          const prev = buildModelState(s, { now: NOW });
          const next = updateModel(prev, applyStatusChanges(s, batch), { now: NOW });
          const grouped = groupModel(prev.model, opts);
          expect(regroupModel(grouped, prev.model, next.model, opts)).toEqual(groupModel(next.model, opts));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('takes the full path for structural changes and still agrees with a rebuild', () => {
    const s = base();
    const prev = buildModelState(s, { now: NOW });
    const gone = delta(s, [{ entity: 'referrer', id: s.referrers[2]!.id, removed: true }]);
    const next = updateModel(prev, gone, { now: NOW });
    expect(next.model).toEqual(buildModel(gone, { now: NOW }));
    const opts = { by: 'namespace' as const, expanded: new Set<string>() };
    expect(regroupModel(groupModel(prev.model, opts), prev.model, next.model, opts)).toEqual(
      groupModel(next.model, opts),
    );
  });
});
