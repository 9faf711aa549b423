import { describe, expect, it } from 'vitest';
import type { ReferenceEntity, ReferentEntity, ReferrerEntity } from '@/lib/changelog/entities';
import type { Snapshot } from '@/lib/changelog/wire';
import { buildModel, keyOfNodeId, objectNodeId, SELECTOR_EDGE_CAP, selectorNodeId } from '@/components/graph/model';
import { buildModelState, updateModel } from '@/components/graph/incremental';

const NOW = 1_700_000_000_000;

function service(
  name: string,
  selections: ReferrerEntity['selections'],
  state: ReferrerEntity['state'],
): ReferrerEntity {
  const key = `Service/shop/${name}`;
  return {
    id: `rules/Service|${key}`,
    key,
    controller: 'rules/Service',
    kind: 'Service',
    namespace: 'shop',
    state,
    since: NOW - 1000,
    references: 0,
    reconciles: 1,
    selections,
  };
}

function edge(referrer: string, pod: string): ReferenceEntity {
  return {
    id: `rules/Service|${referrer}|Pod/shop/${pod}|spec.selector`,
    controller: 'rules/Service',
    referrer,
    referent: `Pod/shop/${pod}`,
    fieldPath: 'spec.selector',
    count: 1,
    kind: 'Pod',
    namespace: 'shop',
    selector: 'app=web',
  };
}

function pod(name: string, state: ReferentEntity['state']): ReferentEntity {
  const key = `Pod/shop/${name}`;
  return { id: key, key, kind: 'Pod', namespace: 'shop', state, referencedBy: 1, changedAt: NOW - 500 };
}

function snapshot(
  referrers: ReferrerEntity[],
  references: ReferenceEntity[],
  referents: ReferentEntity[] = [],
): Snapshot {
  return {
    revision: 1,
    cluster: { mode: 'embedded', server: '', reachable: true },
    controllers: [],
    watches: [],
    referrers,
    referents,
    references,
    queues: [],
    events: [],
    stuck: [],
  } as Snapshot;
}

const matching = (n: number) =>
  service(
    'web',
    [
      {
        fieldPath: 'spec.selector',
        kind: 'Pod',
        selector: 'app=web',
        where: 'shop',
        state: 'Ready',
        matched: n,
        ready: n,
      },
    ],
    'Resolved',
  );

describe('selector references on the graph', () => {
  it('draws each match as a selector edge, and past the cap one "+k more" node', () => {
    const pods = Array.from({ length: SELECTOR_EDGE_CAP + 5 }, (_, i) => `web-${String(i).padStart(2, '0')}`);
    const model = buildModel(
      snapshot(
        [matching(pods.length)],
        pods.map((p) => edge('Service/shop/web', p)),
      ),
      { now: NOW },
    );
    const fromService = model.edges.filter((e) => e.source === objectNodeId('Service/shop/web'));
    expect(fromService).toHaveLength(SELECTOR_EDGE_CAP + 1);
    expect(fromService.every((e) => e.selector === 'app=web')).toBe(true);
    const more = model.nodes.find((n) => n.id === selectorNodeId('Service/shop/web', 'spec.selector'));
    expect(more).toMatchObject({ label: '+5 more', size: 5 });
    // The undrawn Pods are not on the graph; selecting the summary selects the Service, whose details list them.
    expect(model.nodes.some((n) => n.id === objectNodeId('Pod/shop/web-24'))).toBe(false);
    expect(keyOfNodeId(more!.id)).toBe('Service/shop/web');
  });

  it('draws a selector that matches nothing as a node labelled with the selector', () => {
    const lonely = service(
      'web',
      [
        {
          fieldPath: 'spec.selector',
          kind: 'Pod',
          selector: 'app=web-v2',
          where: 'shop',
          state: 'NoMatch',
          matched: 0,
          ready: 0,
        },
      ],
      'NoMatch',
    );
    const model = buildModel(snapshot([lonely], []), { now: NOW });
    expect(model.nodes.find((n) => n.id === selectorNodeId('Service/shop/web', 'spec.selector'))).toMatchObject({
      label: 'Pod: app=web-v2',
      state: 'notfound',
    });
    expect(model.edges).toContainEqual(
      expect.objectContaining({
        source: objectNodeId('Service/shop/web'),
        selector: 'app=web-v2',
        label: 'spec.selector',
      }),
    );
  });

  it('rebuilds when a selector starts matching nothing, so the incremental model equals a fresh build', () => {
    const before = snapshot([matching(1)], [edge('Service/shop/web', 'web-1')]);
    const state = buildModelState(before, { now: NOW });
    const lonely = service(
      'web',
      [
        {
          fieldPath: 'spec.selector',
          kind: 'Pod',
          selector: 'app=web',
          where: 'shop',
          state: 'NoMatch',
          matched: 0,
          ready: 0,
        },
      ],
      'NoMatch',
    );
    const after = { ...before, referrers: [lonely] };
    expect(updateModel(state, after, { now: NOW }).model).toEqual(buildModel(after, { now: NOW }));
  });

  describe('the "+k more" node shows the worst state of the matches it hides', () => {
    const pods = Array.from({ length: SELECTOR_EDGE_CAP + 5 }, (_, i) => `web-${String(i).padStart(2, '0')}`);
    const moreId = selectorNodeId('Service/shop/web', 'spec.selector');
    const scene = (notReady: readonly string[]) =>
      snapshot(
        [matching(pods.length)],
        pods.map((p) => edge('Service/shop/web', p)),
        pods.map((p) => pod(p, notReady.includes(p) ? 'NotReady' : 'Ready')),
      );

    it('is waiting when a hidden match is NotReady, and resolved when every hidden match is Ready', () => {
      // web-20 … web-24 are past the cap (matches are drawn in key order).
      const stuck = buildModel(scene(['web-22']), { now: NOW }).nodes.find((n) => n.id === moreId);
      expect(stuck).toMatchObject({ label: '+5 more', state: 'waiting' });
      expect(stuck?.reason).toContain('1 of them not Ready');
      const fine = buildModel(scene([]), { now: NOW }).nodes.find((n) => n.id === moreId);
      expect(fine).toMatchObject({ label: '+5 more', state: 'resolved' });
      expect(fine?.reason).not.toContain('not Ready');
    });

    it('follows a hidden match turning NotReady and back on the incremental path', () => {
      const ready = scene([]);
      const state = buildModelState(ready, { now: NOW });
      // applyDelta replaces only the changed entity: the same arrays elsewhere, a status change.
      const referents = ready.referents.map((r) => (r.key === 'Pod/shop/web-23' ? pod('web-23', 'NotReady') : r));
      const notReady = { ...ready, referents };
      const patched = updateModel(state, notReady, { now: NOW });
      expect(patched.model.edges).toBe(state.model.edges); // patched, not rebuilt
      expect(patched.model.nodes.find((n) => n.id === moreId)).toMatchObject({ state: 'waiting' });
      expect(patched.model).toEqual(buildModel(notReady, { now: NOW }));
      const back = {
        ...notReady,
        referents: notReady.referents.map((r) => (r.key === 'Pod/shop/web-23' ? pod('web-23', 'Ready') : r)),
      };
      const again = updateModel(patched, back, { now: NOW });
      expect(again.model.nodes.find((n) => n.id === moreId)).toMatchObject({ state: 'resolved' });
      expect(again.model).toEqual(buildModel(back, { now: NOW }));
    });
  });
});
