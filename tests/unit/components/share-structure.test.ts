import { describe, expect, it } from 'vitest';
import { applyDeltas } from '@/components/data/applyDelta';
import { markFromDeltas, shareStructure } from '@/components/data/snapshotQuery';
import type { ReferrerEntity } from '@/lib/changelog/entities';
import type { Snapshot } from '@/lib/changelog/wire';

const referrer = (i: number, state: ReferrerEntity['state']): ReferrerEntity => ({
  id: `demo/watch|App.demo.refwatch.dev/shop/app-${i}`,
  key: `App.demo.refwatch.dev/shop/app-${i}`,
  controller: 'demo/watch',
  kind: 'App.demo.refwatch.dev',
  namespace: 'shop',
  state,
  since: 1_000,
  references: 1,
  reconciles: 1,
});

function snapshot(states: ReferrerEntity['state'][]): Snapshot {
  return {
    revision: 10,
    cluster: { mode: 'embedded', server: 'https://127.0.0.1:6443', reachable: true },
    controllers: [],
    watches: [],
    referrers: states.map((s, i) => referrer(i, s)),
    referents: [],
    references: [],
    queues: [],
    events: [],
    stuck: [],
  };
}

describe('the snapshot query structural sharing', () => {
  it('keeps the previous objects of a fetched snapshot where they are equal', () => {
    const before = snapshot(['Waiting', 'Resolved']);
    const fetched = snapshot(['Resolved', 'Resolved']);
    const shared = shareStructure(before, fetched) as Snapshot;
    expect(shared.referrers[1]).toBe(before.referrers[1]);
    expect(shared.referrers[0]).not.toBe(before.referrers[0]);
    expect(shared.referrers[0]!.state).toBe('Resolved');
  });

  it('takes a snapshot the deltas made as it is, without comparing it again', () => {
    const before = snapshot(['Waiting', 'Resolved']);
    const { snapshot: after } = applyDeltas(before, [
      {
        from: 10,
        revision: 11,
        changes: [
          {
            entity: 'referrer',
            id: before.referrers[0]!.id,
            revision: 11,
            removed: false,
            value: referrer(0, 'Resolved'),
          },
        ],
      },
    ]);
    markFromDeltas(after);
    expect(shareStructure(before, after)).toBe(after);
    expect(after.referrers[1]).toBe(before.referrers[1]); // applyDeltas shared what the delta did not name
    // Not marked, the same snapshot is compared: the structural sharing gives a new top-level object.
    const unmarked = { ...after };
    expect(shareStructure(before, unmarked)).not.toBe(unmarked);
  });
});
