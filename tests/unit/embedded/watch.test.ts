import { describe, expect, it } from 'vitest';
import { api, database, DATABASE_CRD, DB_PATH, namespace, start, watch } from './harness';

const CM = '/api/v1/namespaces/shop/configmaps';

describe('embedded API server: watch', () => {
  it('starts with ADDED for current objects when resourceVersion is unset, then streams changes', async () => {
    const s = await start({ objects: [namespace('shop')] });
    await api(s, 'POST', CM, { metadata: { name: 'before' } });
    const w = await watch(s, `${CM}?watch=true`);
    expect(w.status).toBe(200);
    await expect.poll(() => w.names()).toEqual(['ADDED before']);
    await api(s, 'PATCH', `${CM}/before`, { data: { a: '1' } }, { 'content-type': 'application/merge-patch+json' });
    await api(s, 'POST', CM, { metadata: { name: 'after' } });
    await api(s, 'DELETE', `${CM}/before`);
    await expect.poll(() => w.names()).toEqual(['ADDED before', 'MODIFIED before', 'ADDED after', 'DELETED before']);
    // Watch events carry kind and apiVersion, and the DELETED object has the deletion's resourceVersion.
    const deleted = w.events[3]!.object;
    expect(deleted).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: '1' } });
    expect(Number(deleted.metadata.resourceVersion)).toBeGreaterThan(
      Number(w.events[2]!.object.metadata.resourceVersion),
    );
    await w.close();
  });

  it('streams only the changes after an explicit resourceVersion', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const a = (await api(s, 'POST', CM, { metadata: { name: 'a' } })).body;
    await api(s, 'POST', CM, { metadata: { name: 'b' } });
    await api(s, 'POST', CM, { metadata: { name: 'c' } });
    const w = await watch(s, `${CM}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    await expect.poll(() => w.names()).toEqual(['ADDED b', 'ADDED c']);
    await w.close();
  });

  it('sends an in-stream 410 ERROR for a compacted resourceVersion, then ends', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const a = (await api(s, 'POST', CM, { metadata: { name: 'a' } })).body;
    await api(s, 'POST', CM, { metadata: { name: 'b' } });
    s.faults.compactNow();
    const w = await watch(s, `${CM}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    expect(w.status).toBe(200);
    await expect.poll(() => w.ended).toBe(true);
    expect(w.events).toHaveLength(1);
    expect(w.events[0]!.type).toBe('ERROR');
    expect(w.events[0]!.object).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
    });
    expect(w.events[0]!.object.message).toMatch(
      new RegExp(`^too old resource version: ${a.metadata.resourceVersion} \\(\\d+\\)$`),
    );
  });

  it('sends BOOKMARK events carrying the current resourceVersion when asked', async () => {
    const s = await start({ objects: [namespace('shop')], bookmarkIntervalMs: 50 });
    const rv = (await api(s, 'GET', CM)).body.metadata.resourceVersion;
    const w = await watch(s, `${CM}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    await expect.poll(() => w.events.filter((e) => e.type === 'BOOKMARK').length).toBeGreaterThanOrEqual(2);
    const bookmark = w.events.find((e) => e.type === 'BOOKMARK')!.object;
    expect(bookmark).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: rv } });
    await w.close();

    const plain = await watch(s, `${CM}?watch=1&resourceVersion=${rv}`);
    await api(s, 'POST', CM, { metadata: { name: 'x' } });
    await expect.poll(() => plain.names()).toEqual(['ADDED x']);
    expect(plain.events.some((e) => e.type === 'BOOKMARK')).toBe(false);
    await plain.close();
  });

  it('ends the watch cleanly after timeoutSeconds', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const w = await watch(s, `${CM}?watch=1&timeoutSeconds=1`);
    await expect.poll(() => w.ended, { timeout: 5000 }).toBe(true);
    expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    expect(s.openWatches().configmaps ?? 0).toBe(0);
  });

  it('with sendInitialEvents sends every object, then the initial-events-end bookmark, then changes', async () => {
    const s = await start({ objects: [namespace('shop')] });
    await api(s, 'POST', CM, { metadata: { name: 'one' } });
    await api(s, 'POST', CM, { metadata: { name: 'two' } });
    const current = (await api(s, 'GET', CM)).body.metadata.resourceVersion;
    const w = await watch(
      s,
      `${CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    await expect.poll(() => w.events.length).toBe(3);
    expect(w.names()).toEqual(['ADDED one', 'ADDED two', 'BOOKMARK']);
    expect(w.events[2]!.object.metadata).toEqual({
      resourceVersion: current,
      annotations: { 'k8s.io/initial-events-end': 'true' },
    });
    await api(s, 'POST', CM, { metadata: { name: 'three' } });
    await expect.poll(() => w.names()).toEqual(['ADDED one', 'ADDED two', 'BOOKMARK', 'ADDED three']);
    await w.close();
  });

  it('rejects sendInitialEvents without resourceVersionMatch=NotOlderThan with 422 like kube-apiserver', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const res = await api(s, 'GET', `${CM}?watch=1&sendInitialEvents=true`);
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  });

  it('delivers an object leaving the selector as DELETED and entering it as ADDED', async () => {
    const s = await start({ objects: [DATABASE_CRD, namespace('shop')] });
    const path = `${DB_PATH}/namespaces/shop/databases`;
    await api(
      s,
      'POST',
      path,
      database('orders', 'shop', { metadata: { name: 'orders', namespace: 'shop', labels: { team: 'a' } } }),
    );
    const w = await watch(s, `${path}?watch=1&labelSelector=team%3Da`);
    await expect.poll(() => w.names()).toEqual(['ADDED orders']);
    const relabel = (team: string) =>
      api(
        s,
        'PATCH',
        `${path}/orders`,
        { metadata: { labels: { team } } },
        { 'content-type': 'application/merge-patch+json' },
      );
    await relabel('b');
    await expect.poll(() => w.names()).toEqual(['ADDED orders', 'DELETED orders']);
    // The DELETED event carries the last matching content.
    expect(w.events[1]!.object.metadata.labels).toEqual({ team: 'a' });
    await relabel('a');
    await expect.poll(() => w.names()).toEqual(['ADDED orders', 'DELETED orders', 'ADDED orders']);
    await w.close();
  });

  it('watches one object through its name in the path', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const w = await watch(s, `${CM}/solo?watch=1`);
    await api(s, 'POST', CM, { metadata: { name: 'other' } });
    await api(s, 'POST', CM, { metadata: { name: 'solo' } });
    await expect.poll(() => w.names()).toEqual(['ADDED solo']);
    await w.close();
  });

  it('counts open watches per resource and stops counting when the client aborts', async () => {
    const s = await start({ objects: [DATABASE_CRD, namespace('shop')] });
    expect(s.openWatches()).toEqual({});
    const a = await watch(s, `${CM}?watch=1`);
    const b = await watch(s, '/api/v1/configmaps?watch=1');
    const c = await watch(s, `${DB_PATH}/databases?watch=1`);
    await expect.poll(() => s.openWatches()).toEqual({ configmaps: 2, 'databases.demo.refwatch.dev': 1 });
    await a.close();
    await expect.poll(() => s.openWatches()).toEqual({ configmaps: 1, 'databases.demo.refwatch.dev': 1 });
    await b.close();
    await c.close();
    await expect.poll(() => s.openWatches()).toEqual({});
  });
});
