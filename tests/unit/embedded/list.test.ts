import { describe, expect, it } from 'vitest';
import { api, namespace, start } from './harness';

const CM = '/api/v1/namespaces/shop/configmaps';

async function seeded(n: number, retainedEvents?: number) {
  const s = await start({ objects: [namespace('shop'), namespace('other')], retainedEvents });
  for (let i = 0; i < n; i++) {
    await api(s, 'POST', CM, {
      metadata: {
        name: `cm-${String(i).padStart(2, '0')}`,
        labels: { tier: i % 2 === 0 ? 'even' : 'odd', idx: String(i) },
      },
    });
  }
  return s;
}

const names = (body: { items: { metadata: { name: string } }[] }) => body.items.map((i) => i.metadata.name);

describe('embedded API server: list', () => {
  it('pages with limit and continue at the first page’s resourceVersion', async () => {
    const s = await seeded(5);
    const first = await api(s, 'GET', `${CM}?limit=2`);
    expect(names(first.body)).toEqual(['cm-00', 'cm-01']);
    expect(first.body.metadata.remainingItemCount).toBe(3);
    const listRv = first.body.metadata.resourceVersion;

    // A change after the first page does not show in later pages: they read at the list's resourceVersion.
    await api(s, 'POST', CM, { metadata: { name: 'cm-99' } });
    const second = await api(s, 'GET', `${CM}?limit=2&continue=${first.body.metadata.continue}`);
    expect(names(second.body)).toEqual(['cm-02', 'cm-03']);
    expect(second.body.metadata.resourceVersion).toBe(listRv);
    const third = await api(s, 'GET', `${CM}?limit=2&continue=${second.body.metadata.continue}`);
    expect(names(third.body)).toEqual(['cm-04']);
    expect(third.body.metadata.continue).toBeUndefined();
  });

  it('answers 410 Expired for a continue token whose resourceVersion was compacted', async () => {
    const s = await seeded(3);
    const first = await api(s, 'GET', `${CM}?limit=1`);
    await api(s, 'POST', CM, { metadata: { name: 'later' } });
    s.faults.compactNow();
    const res = await api(s, 'GET', `${CM}?limit=1&continue=${first.body.metadata.continue}`);
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(res.body.message).toMatch(/^The provided continue parameter is too old to display a consistent list result/);
    // The Status carries a token that continues at the latest state, as the real server's does.
    const resumed = await api(s, 'GET', `${CM}?limit=10&continue=${res.body.metadata.continue}`);
    expect(names(resumed.body)).toEqual(['cm-01', 'cm-02', 'later']);
  });

  it('expires continue tokens that fell out of the retained window', async () => {
    const s = await seeded(3, 5);
    const first = await api(s, 'GET', `${CM}?limit=1`);
    for (let i = 0; i < 6; i++)
      await api(s, 'POST', '/api/v1/namespaces/other/configmaps', { metadata: { name: `churn-${i}` } });
    expect((await api(s, 'GET', `${CM}?limit=1&continue=${first.body.metadata.continue}`)).status).toBe(410);
  });

  it('filters by label selectors: =, ==, !=, in, notin, exists, !exists', async () => {
    const s = await seeded(4);
    await api(s, 'POST', CM, { metadata: { name: 'unlabelled' } });
    const q = async (sel: string) =>
      names((await api(s, 'GET', `${CM}?labelSelector=${encodeURIComponent(sel)}`)).body);
    expect(await q('tier=even')).toEqual(['cm-00', 'cm-02']);
    expect(await q('tier==odd')).toEqual(['cm-01', 'cm-03']);
    expect(await q('tier!=even')).toEqual(['cm-01', 'cm-03', 'unlabelled']);
    expect(await q('idx in (0,3)')).toEqual(['cm-00', 'cm-03']);
    expect(await q('idx notin (0,3)')).toEqual(['cm-01', 'cm-02', 'unlabelled']);
    expect(await q('tier')).toEqual(['cm-00', 'cm-01', 'cm-02', 'cm-03']);
    expect(await q('!tier')).toEqual(['unlabelled']);
    expect(await q('tier=even,idx=2')).toEqual(['cm-02']);
    expect((await api(s, 'GET', `${CM}?labelSelector=${encodeURIComponent('bad key!')}`)).status).toBe(400);
  });

  it('filters by metadata.name and metadata.namespace and refuses other fields with 400', async () => {
    const s = await seeded(3);
    await api(s, 'POST', '/api/v1/namespaces/other/configmaps', { metadata: { name: 'cm-00' } });
    const q = async (path: string) => (await api(s, 'GET', path)).body;
    expect(names(await q(`${CM}?fieldSelector=metadata.name%3Dcm-01`))).toEqual(['cm-01']);
    expect(names(await q(`${CM}?fieldSelector=metadata.name!%3Dcm-01`))).toEqual(['cm-00', 'cm-02']);
    const other = await q('/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother');
    expect(other.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace)).toEqual(['other']);
    const bad = await api(s, 'GET', `${CM}?fieldSelector=spec.foo%3Dbar`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: spec.foo' });
  });

  it('selects core Events on their subject, as kube-apiserver does, and nothing else on other kinds', async () => {
    const s = await seeded(0);
    const EV = '/api/v1/namespaces/shop/events';
    const event = (name: string, kind: string, subject: string, reason: string) =>
      api(s, 'POST', EV, {
        metadata: { name },
        involvedObject: { apiVersion: 'v1', kind, name: subject, namespace: 'shop' },
        reason,
        type: 'Warning',
        source: { component: 'kubelet' },
      });
    await event('a', 'Pod', 'web', 'FailedMount');
    await event('b', 'ConfigMap', 'web', 'Other');
    await event('c', 'Pod', 'db', 'FailedMount');
    const q = async (sel: string) =>
      names((await api(s, 'GET', `${EV}?fieldSelector=${encodeURIComponent(sel)}`)).body);
    expect(await q('involvedObject.kind=Pod,involvedObject.name=web')).toEqual(['a']);
    expect(await q('involvedObject.kind!=Pod')).toEqual(['b']);
    expect(await q('reason=FailedMount,source=kubelet,type=Warning,involvedObject.namespace=shop')).toEqual(['a', 'c']);
    const bad = await api(s, 'GET', `${CM}?fieldSelector=${encodeURIComponent('involvedObject.name=web')}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: involvedObject.name' });
  });

  it('pages through selector matches and omits remainingItemCount with a selector', async () => {
    const s = await seeded(6);
    const first = await api(s, 'GET', `${CM}?limit=2&labelSelector=tier%3Dodd`);
    expect(names(first.body)).toEqual(['cm-01', 'cm-03']);
    expect(first.body.metadata.remainingItemCount).toBeUndefined();
    const next = await api(s, 'GET', `${CM}?limit=2&labelSelector=tier%3Dodd&continue=${first.body.metadata.continue}`);
    expect(names(next.body)).toEqual(['cm-05']);
  });

  it('reads at an exact resourceVersion while it is retained', async () => {
    const s = await seeded(2);
    const rv = (await api(s, 'GET', CM)).body.metadata.resourceVersion;
    await api(s, 'DELETE', `${CM}/cm-00`);
    const exact = await api(s, 'GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(names(exact.body)).toEqual(['cm-00', 'cm-01']);
    expect(exact.body.metadata.resourceVersion).toBe(rv);
    s.faults.compactNow();
    expect((await api(s, 'GET', `${CM}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).status).toBe(410);
    expect((await api(s, 'GET', `${CM}?resourceVersionMatch=Exact`)).status).toBe(422);
  });
});
