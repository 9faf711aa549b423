import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceEntity, ReferrerEntity, Snapshot } from '@/lib/changelog';
import { getSnapshot, getStream, getSummary } from '@/server/api';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { BASE, callHandler } from './call';

let rt: Runtime;
const call = (fn: (rt: Runtime, req: Request) => Response | Promise<Response>, path: string) =>
  callHandler(rt, fn, path);

function app(ns: string, name: string, state: ReferrerEntity['state'], since: number): ReferrerEntity {
  const key = `App.demo.refwatch.dev/${ns}/${name}`;
  return {
    id: `apps|${key}`,
    key,
    controller: 'apps',
    kind: 'App.demo.refwatch.dev',
    namespace: ns,
    state,
    since,
    references: 1,
    reconciles: 1,
  };
}
function ref(r: ReferrerEntity, secret: string): ReferenceEntity {
  const referent = `Secret/${r.namespace}/${secret}`;
  return {
    id: `apps|${r.key}|${referent}|spec.secretRef`,
    controller: 'apps',
    referrer: r.key,
    referent,
    fieldPath: 'spec.secretRef',
    count: 1,
    kind: 'Secret',
    namespace: r.namespace,
  };
}

beforeAll(async () => {
  rt = await startRuntime(
    parseConfig({
      REFWATCH_RULE_PACKS: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_STUCK_THRESHOLD: '30s',
    }),
  );
  // Entities straight into the change log: the summary and scopes read nothing else.
  const now = Date.now();
  const fine = app('shop', 'fine', 'Resolved', now);
  const lost = app('billing', 'lost', 'NotFound', now - 3_600_000);
  for (const r of [fine, lost]) rt.changelog.put('referrer', r.id, r);
  for (const r of [ref(fine, 'ok'), ref(lost, 'missing')]) rt.changelog.put('reference', r.id, r);
}, 30_000);

afterAll(async () => {
  await rt?.dispose();
});

describe('GET /api/v1/summary', () => {
  it('counts per namespace and kind, stuck first, with the stuck referrers listed', async () => {
    const r = await call(getSummary, '/api/v1/summary');
    expect(r.status).toBe(200);
    expect(r.body.totals).toMatchObject({ referrers: 2, references: 2, stuck: 1, stuckReferences: 1 });
    expect(r.body.namespaces.map((g: { name: string; stuck: number }) => `${g.name}:${g.stuck}`)).toEqual([
      'billing:1',
      'shop:0',
    ]);
    expect(r.body.stuckList).toEqual([
      expect.objectContaining({ key: 'App.demo.refwatch.dev/billing/lost', state: 'NotFound' }),
    ]);
    expect((await call(getSummary, '/api/v1/summary?namespace=shop')).body.error).toMatchObject({
      code: 'UnknownParameter',
      field: 'namespace',
    });
  });
});

describe('scoped GET /api/v1/snapshot', () => {
  it('answers a search, an object and the stuck referrers, each with the scope’s own stuck entries', async () => {
    const snapshot = async (path: string) => (await call(getSnapshot, path)).body as Snapshot;
    const search = await snapshot('/api/v1/snapshot?q=LOST');
    expect(search.referrers.map((r) => r.key)).toEqual(['App.demo.refwatch.dev/billing/lost']);
    expect(search.stuck.map((s) => s.key)).toEqual(['App.demo.refwatch.dev/billing/lost']);
    const object = await snapshot(`/api/v1/snapshot?object=${encodeURIComponent('Secret/shop/ok')}`);
    expect(object.references).toHaveLength(1);
    expect(object.referrers.map((r) => r.key)).toEqual(['App.demo.refwatch.dev/shop/fine']); // the other end
    expect(object.stuck).toEqual([]);
    const stuck = await snapshot('/api/v1/snapshot?stuck=1');
    expect(stuck.referrers.map((r) => r.key)).toEqual(['App.demo.refwatch.dev/billing/lost']);
    expect(stuck.references.map((r) => r.referent)).toEqual(['Secret/billing/missing']);
  });

  it.each([
    ['/api/v1/snapshot?object=shop', 'object', /object key such as/],
    ['/api/v1/snapshot?stuck=yes', 'stuck', /must be 1/],
    [`/api/v1/snapshot?q=${'x'.repeat(300)}`, 'q', /at most 253/],
    ['/api/v1/stream?overview=2', 'overview', /must be 1/],
  ])('%s is a 400 naming the field and the fix', async (path, field, message) => {
    const r = await call(path.includes('stream') ? getStream : getSnapshot, path);
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe(field);
    expect(r.body.error.message).toMatch(message);
  });
});

describe('GET /api/v1/stream?overview=1', () => {
  it('opens with the summary, without a snapshot', async () => {
    const abort = new AbortController();
    const res = getStream(rt, new Request(`${BASE}/api/v1/stream?overview=1`, { signal: abort.signal }));
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: summary')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).not.toContain('event: snapshot');
    expect(text).toContain('"stuck":1');
    abort.abort();
    await reader.cancel();
  });
});
