import { describe, expect, it } from 'vitest';
import { pastSnapshot, type PastState } from '@/components/data/pastState';
import { buildModel, objectNodeId } from '@/components/graph/model';
import { stuckList } from '@/components/panels/stuck';

const POD = 'Pod/shop/web';
const SECRET = 'Secret/shop/db-password';
const cluster = { mode: 'embedded' as const, server: 'http://127.0.0.1:1', reachable: true };

const past: PastState = {
  cluster: 'embedded',
  at: 10_000,
  states: [
    { id: 1, at: 1000, type: 'controller', object: 'Secret', namespace: '', state: 'Active' },
    { id: 2, at: 1000, type: 'controller', object: 'ConfigMap', namespace: '', state: 'Cancelled' },
    {
      id: 3,
      at: 1001,
      type: 'reference',
      object: POD,
      namespace: 'shop',
      state: 'Added',
      related: SECRET,
      message: 'spec.volumes[0].secret.secretName',
      controller: 'rules/Pod',
    },
    {
      id: 4,
      at: 1002,
      type: 'reference',
      object: POD,
      namespace: 'shop',
      state: 'Removed',
      related: 'ConfigMap/shop/old',
      controller: 'rules/Pod',
    },
    { id: 5, at: 1003, type: 'referent', object: SECRET, namespace: 'shop', state: 'NotFound', manager: 'kubectl' },
    {
      id: 6,
      at: 1004,
      type: 'referrer',
      object: POD,
      namespace: 'shop',
      state: 'NotFound',
      reason: 'NotFound',
      related: SECRET,
      message: `${SECRET} not found`,
      controller: 'rules/Pod',
    },
  ],
};

describe('the graph at a past moment', () => {
  it('draws the recorded states as a snapshot: references still named, controllers not cancelled', () => {
    const s = pastSnapshot(past, { cluster, stuckThresholdMs: 2000 });
    expect(s.referrers).toEqual([
      expect.objectContaining({
        id: `rules/Pod|${POD}`,
        key: POD,
        kind: 'Pod',
        state: 'NotFound',
        reason: `NotFound: ${SECRET}`,
        since: 1004,
        references: 1,
      }),
    ]);
    expect(s.referents).toEqual([
      expect.objectContaining({ key: SECRET, kind: 'Secret', state: 'NotFound', referencedBy: 1, manager: 'kubectl' }),
    ]);
    expect(s.references.map((r) => `${r.referrer} > ${r.referent} ${r.fieldPath}`)).toEqual([
      `${POD} > ${SECRET} spec.volumes[0].secret.secretName`,
    ]);
    expect(s.controllers.map((c) => `${c.kind} ${c.state}`)).toEqual(['Secret Active']);
    expect(s.cluster).toBe(cluster);

    const model = buildModel(s, { now: past.at });
    expect(model.nodes.find((n) => n.id === objectNodeId(POD))).toMatchObject({ state: 'stuck' });
    expect(model.nodes.find((n) => n.id === objectNodeId(SECRET))).toMatchObject({ state: 'notfound' });
    // Stuck as of then: unresolved for 9 s at the moment shown, past the 2 s threshold.
    expect(stuckList(s, past.at).map((e) => [e.key, e.ageMs])).toEqual([[POD, 8996]]);
  });

  it('shows nothing for a moment before anything was recorded', () => {
    const s = pastSnapshot({ cluster: 'embedded', at: 1, states: [] }, { cluster });
    expect([s.referrers, s.referents, s.references, s.controllers]).toEqual([[], [], [], []]);
  });
});
