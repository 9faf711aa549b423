import { describe, expect, it } from 'vitest';
import type { Change, ReferenceEntity, ReferentEntity, ReferrerEntity } from '@/lib/changelog';
import { WatchView } from '@/lib/cli/watch-view';

const referrer = (key: string, state: ReferrerEntity['state'], reason?: string): ReferrerEntity => ({
  id: `rules/Pod|${key}`,
  key,
  controller: 'rules/Pod',
  kind: 'Pod',
  namespace: key.split('/')[1]!,
  state,
  since: 0,
  references: 1,
  reconciles: 1,
  ...(reason ? { reason } : {}),
});
const referent = (key: string, state: ReferentEntity['state']): ReferentEntity => ({
  id: key,
  key,
  kind: key.split('/')[0]!,
  namespace: key.split('/')[1]!,
  state,
  referencedBy: 1,
  changedAt: 0,
});
const reference = (from: string, to: string): ReferenceEntity => ({
  id: `rules/Pod|${from}|${to}|f`,
  controller: 'rules/Pod',
  referrer: from,
  referent: to,
  fieldPath: 'f',
  count: 1,
  kind: to.split('/')[0]!,
  namespace: from.split('/')[1]!,
});
const put = (c: ReferrerEntity | ReferentEntity | ReferenceEntity, entity: Change['entity'], revision = 1): Change =>
  ({ entity, id: c.id, revision, removed: false, value: c }) as Change;

describe('WatchView', () => {
  it('starts with every object in scope, then reports only state changes of the object and its referents', () => {
    const view = new WatchView({ key: 'Pod/shop/db' });
    const start = view.reset({
      referrers: [
        referrer('Pod/shop/db', 'Waiting', 'NotReady: PersistentVolumeClaim/shop/data'),
        referrer('Pod/shop/other', 'Waiting'),
      ],
      referents: [
        referent('PersistentVolumeClaim/shop/data', 'NotReady'),
        referent('Secret/shop/elsewhere', 'NotFound'),
      ],
      references: [
        reference('Pod/shop/db', 'PersistentVolumeClaim/shop/data'),
        reference('Pod/shop/other', 'Secret/shop/elsewhere'),
      ],
    });
    expect(start.map((r) => [r.object, r.state])).toEqual([
      ['Pod/shop/db', 'Waiting'],
      ['PersistentVolumeClaim/shop/data', 'NotReady'],
    ]);
    // A reconcile that changes nothing visible prints nothing.
    expect(
      view.apply([
        put(
          { ...referrer('Pod/shop/db', 'Waiting', 'NotReady: PersistentVolumeClaim/shop/data'), reconciles: 2 },
          'referrer',
        ),
      ]),
    ).toEqual([]);
    // Out of scope.
    expect(
      view.apply([
        put(referrer('Pod/shop/other', 'Resolved'), 'referrer'),
        put(referent('Secret/shop/elsewhere', 'Ready'), 'referent'),
      ]),
    ).toEqual([]);
    const rows = view.apply([
      put(referent('PersistentVolumeClaim/shop/data', 'Ready'), 'referent'),
      put(referrer('Pod/shop/db', 'Resolved'), 'referrer'),
    ]);
    expect(rows.map((r) => [r.object, r.role, r.state])).toEqual([
      ['PersistentVolumeClaim/shop/data', 'referent', 'Ready'],
      ['Pod/shop/db', 'referrer', 'Resolved'],
    ]);
    expect(view.apply([{ entity: 'referrer', id: 'rules/Pod|Pod/shop/db', revision: 9, removed: true }])).toMatchObject(
      [{ object: 'Pod/shop/db', state: 'Deleted' }],
    );
  });

  it('follows a namespace: referrers there and the referents a new reference brings in', () => {
    const view = new WatchView({ namespace: 'shop' });
    expect(view.reset({ referrers: [referrer('Pod/other/x', 'Waiting')], referents: [], references: [] })).toEqual([]);
    const rows = view.apply([
      put(reference('Pod/shop/web', 'Secret/shop/s'), 'reference'),
      put(referent('Secret/shop/s', 'NotFound'), 'referent'),
      put(referrer('Pod/shop/web', 'NotFound', 'NotFound: Secret/shop/s'), 'referrer'),
    ]);
    expect(rows.map((r) => [r.object, r.state, r.message])).toEqual([
      ['Secret/shop/s', 'NotFound', ''],
      ['Pod/shop/web', 'NotFound', 'NotFound: Secret/shop/s'],
    ]);
  });
});
