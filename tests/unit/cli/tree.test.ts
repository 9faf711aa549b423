import { describe, expect, it } from 'vitest';
import type { Graph } from '@/lib/cli/backend';
import { buildTree, everyNode, treeLines } from '@/lib/cli/tree';
import type { ReferenceEntity, ReferentEntity, ReferrerEntity } from '@/lib/changelog';

const referrer = (key: string, state: ReferrerEntity['state'], controller = 'rules/Pod'): ReferrerEntity => ({
  id: `${controller}|${key}`,
  key,
  controller,
  kind: key.split('/')[0]!,
  namespace: key.split('/')[1]!,
  state,
  since: 0,
  references: 0,
  reconciles: 1,
});
const referent = (key: string, state: ReferentEntity['state'], message?: string): ReferentEntity => ({
  id: key,
  key,
  kind: key.split('/')[0]!,
  namespace: key.split('/')[1]!,
  state,
  referencedBy: 1,
  changedAt: 0,
  ...(message ? { message } : {}),
});
const reference = (from: string, to: string, fieldPath: string, controller = 'rules/Pod'): ReferenceEntity => ({
  id: `${controller}|${from}|${to}|${fieldPath}`,
  controller,
  referrer: from,
  referent: to,
  fieldPath,
  count: 1,
  kind: to.split('/')[0]!,
  namespace: from.split('/')[1]!,
});

// Pod web → PVC data → StorageClass fast; Pod web → Secret s; Pod api → Secret s.
const GRAPH: Graph = {
  referrers: [
    referrer('Pod/shop/web', 'Waiting'),
    referrer('Pod/shop/api', 'Resolved'),
    referrer('PersistentVolumeClaim/shop/data', 'Resolved', 'rules/PersistentVolumeClaim'),
  ],
  referents: [
    referent('PersistentVolumeClaim/shop/data', 'NotReady', 'Pending'),
    referent('StorageClass.storage.k8s.io//fast', 'Ready'),
    referent('Secret/shop/s', 'Ready'),
  ],
  references: [
    reference('Pod/shop/web', 'PersistentVolumeClaim/shop/data', 'spec.volumes[0].persistentVolumeClaim.claimName'),
    reference('Pod/shop/web', 'Secret/shop/s', 'spec.volumes[1].secret.secretName'),
    // The same reference seen by a second controller is one edge.
    reference('Pod/shop/web', 'Secret/shop/s', 'spec.volumes[1].secret.secretName', 'other'),
    reference(
      'PersistentVolumeClaim/shop/data',
      'StorageClass.storage.k8s.io//fast',
      'spec.storageClassName',
      'rules/PersistentVolumeClaim',
    ),
    reference('Pod/shop/api', 'Secret/shop/s', 'spec.containers[0].envFrom[0].secretRef.name'),
  ],
};

describe('buildTree', () => {
  it('follows referents that refer to objects themselves, with their referent state', () => {
    const t = buildTree(GRAPH, 'Pod/shop/web', false);
    expect(treeLines(t).map((l) => `${l.prefix}${l.node.key} ${l.node.state}`)).toEqual([
      'Pod/shop/web Waiting',
      '├── PersistentVolumeClaim/shop/data NotReady',
      '│   └── StorageClass.storage.k8s.io//fast Ready',
      '└── Secret/shop/s Ready',
    ]);
    expect(t.children[0]).toMatchObject({
      fieldPath: 'spec.volumes[0].persistentVolumeClaim.claimName',
      message: 'Pending',
    });
    expect(everyNode(t, (n) => n.state === 'Ready' || n.state === 'Resolved')).toBe(false);
  });

  it('lists who refers to an object with reverse, with referrer states', () => {
    const t = buildTree(GRAPH, 'Secret/shop/s', true);
    expect(treeLines(t).map((l) => `${l.prefix}${l.node.key} ${l.node.state}`)).toEqual([
      'Secret/shop/s Ready',
      '├── Pod/shop/web Waiting',
      '└── Pod/shop/api Resolved',
    ]);
  });

  it('marks a cycle instead of following it for ever', () => {
    const g: Graph = {
      referrers: [referrer('A/n/a', 'Resolved', 'c'), referrer('A/n/b', 'Resolved', 'c')],
      referents: [],
      references: [reference('A/n/a', 'A/n/b', 'x', 'c'), reference('A/n/b', 'A/n/a', 'y', 'c')],
    };
    const t = buildTree(g, 'A/n/a', false);
    expect(t.children[0]!.children[0]).toMatchObject({ key: 'A/n/a', cycle: true, children: [] });
  });

  it('says Unknown for an object refwatch knows nothing of', () => {
    expect(buildTree(GRAPH, 'Pod/shop/nope', false)).toEqual({ key: 'Pod/shop/nope', state: 'Unknown', children: [] });
  });
});
