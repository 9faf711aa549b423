import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getExplain, getHealthz, getMetrics, getReadyz, getSnapshot, getStuck } from '@/server/api';
import { parseConfig } from '@/server/config';
import { ApiError, toResponse } from '@/server/http/errors';
import { guardMutation } from '@/server/http/guard';
import { MutationLimits } from '@/server/http/limits';
import { readJsonBody } from '@/server/http/validate';
import { startRuntime, type Runtime } from '@/server/runtime';
import { BASE, callHandler } from './call';
import { z } from 'zod';
import { decodeSnapshot } from '@/lib/changelog';

let rt: Runtime;

const call = (fn: (rt: Runtime, req: Request) => Response | Promise<Response>, path: string, init?: RequestInit) =>
  callHandler(rt, fn, path, init);

const client = () => rt.connection.client;
async function create(path: string, body: object) {
  await client().request('POST', path, { body });
}

beforeAll(async () => {
  rt = await startRuntime(
    parseConfig({
      REFWATCH_GRACE: '300ms',
      REFWATCH_RULE_PACKS: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_EXAMPLE: 'none',
    }),
  );
  // A controller under test: Apps declare their refs in spec.refs as object keys.
  rt.manager.addController({
    name: 'test',
    for: { group: 'demo.refwatch.dev', kind: 'App' },
    reconcile(ctx) {
      const refs = ((ctx.object?.metadata.annotations ?? {})['test/refs'] ?? '').split(',').filter(Boolean);
      refs.forEach((k, i) => ctx.resolve(k, `metadata.annotations.ref${i}`));
    },
  });
  await create('/api/v1/namespaces', { metadata: { name: 'shop' } });
  await create('/api/v1/namespaces', { metadata: { name: 'billing' } });
  await create('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases', { metadata: { name: 'orders' } });
  await create('/apis/demo.refwatch.dev/v1alpha1/namespaces/billing/databases', { metadata: { name: 'ledger' } });
  await create('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases', { metadata: { name: 'slow' } });
  await client().request('PATCH', '/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases/orders/status', {
    contentType: 'application/merge-patch+json',
    body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned' }] } },
  });
  await client().request('PATCH', '/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases/slow/status', {
    contentType: 'application/merge-patch+json',
    body: {
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'creating volume' }] },
    },
  });
  const app = (name: string, refs: string[]) =>
    create('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/apps', {
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'App',
      metadata: { name, annotations: { 'test/refs': refs.join(',') } },
    });
  await app('typo', ['Database.demo.refwatch.dev/shop/ordrs']);
  await app('elsewhere', ['Database.demo.refwatch.dev/shop/ledger']);
  await app('waiting', ['Database.demo.refwatch.dev/shop/slow']);
  await app('unknown', ['Widget.nowhere.refwatch.dev/shop/x']);
  await app('good', ['Database.demo.refwatch.dev/shop/orders']);
  await vi.waitFor(
    () => expect(rt.changelog.get('referrer', 'test|App.demo.refwatch.dev/shop/good')?.state).toBe('Resolved'),
    { timeout: 10_000 },
  );
}, 30_000);

afterAll(async () => {
  await rt?.dispose();
});

function reference(body: any) {
  return body.controllers[0].references[0];
}

describe('GET /api/v1/snapshot', () => {
  it('returns the whole state at one revision, without credentials', async () => {
    const r = await call(getSnapshot, '/api/v1/snapshot');
    expect(r.status).toBe(200);
    const s = decodeSnapshot(r.body);
    expect(s.revision).toBe(rt.changelog.revision);
    expect(s.cluster).toMatchObject({ mode: 'embedded', reachable: true });
    expect(s.referrers.map((x) => x.key)).toContain('App.demo.refwatch.dev/shop/good');
    expect(s.controllers.map((x) => x.kind)).toContain('Database.demo.refwatch.dev');
    expect(s.references.map((x) => x.id)).toContain(
      'test|App.demo.refwatch.dev/shop/good|Database.demo.refwatch.dev/shop/orders|metadata.annotations.ref0',
    );
    for (const k of ['watches', 'referents', 'references', 'queues', 'events', 'stuck'] as const)
      expect(Array.isArray(s[k])).toBe(true);
    const token = (rt.connection.embedded!.kubeconfig() as any).users[0].user.token as string;
    expect(token.length).toBeGreaterThan(0);
    expect(r.text).not.toContain(token);
  });

  it('filters by namespace', async () => {
    const r = await call(getSnapshot, '/api/v1/snapshot?namespace=billing');
    expect(r.status).toBe(200);
    expect(decodeSnapshot(r.body).referrers).toEqual([]);
  });

  it.each([
    ['/api/v1/snapshot?colour=red', 'UnknownParameter', 'colour'],
    ['/api/v1/snapshot?namespace=Shop', 'InvalidParameter', 'namespace'],
    ['/api/v1/snapshot?kind=database', 'InvalidParameter', 'kind'],
    ['/api/v1/snapshot?namespace=a&namespace=b', 'RepeatedParameter', 'namespace'],
  ])('rejects %s naming the parameter', async (path, code, field) => {
    const r = await call(getSnapshot, path);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code, field });
    expect(r.body.error.message).toContain(field);
  });
});

describe('GET /api/v1/explain', () => {
  it('NotFound: a typo suggests the close name', async () => {
    const r = await call(getExplain, '/api/v1/explain?object=' + encodeURIComponent('App.demo.refwatch.dev/shop/typo'));
    expect(r.status).toBe(200);
    expect(reference(r.body)).toMatchObject({
      state: 'NotFound',
      suggestions: ['Database.demo.refwatch.dev/shop/orders'],
    });
    expect(reference(r.body).message).toContain('did you mean orders?');
  });

  it('NotFound: the same name in another namespace', async () => {
    const r = await call(getExplain, '/api/v1/explain?object=App.demo.refwatch.dev/shop/elsewhere');
    expect(reference(r.body).state).toBe('NotFound');
    expect(reference(r.body).message).toContain('billing');
  });

  it("NotReady: the condition's reason and message", async () => {
    const r = await call(getExplain, '/api/v1/explain?object=App.demo.refwatch.dev/shop/waiting');
    expect(reference(r.body)).toMatchObject({ state: 'NotReady', reason: 'Provisioning' });
    expect(reference(r.body).message).toContain('creating volume');
  });

  it('KindUnknown: the CRD is not installed', async () => {
    await vi.waitFor(async () => {
      const r = await call(getExplain, '/api/v1/explain?object=App.demo.refwatch.dev/shop/unknown');
      expect(reference(r.body).state).toBe('KindUnknown');
      expect(reference(r.body).fix).toMatch(/CustomResourceDefinition/i);
    });
  });

  it('Forbidden: names the missing RBAC rule', async () => {
    rt.connection.embedded!.faults.forbid('demo.refwatch.dev', 'caches');
    try {
      await create('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/apps', {
        apiVersion: 'demo.refwatch.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'forbidden', annotations: { 'test/refs': 'Cache.demo.refwatch.dev/shop/sessions' } },
      });
      await vi.waitFor(
        async () => {
          const r = await call(getExplain, '/api/v1/explain?object=App.demo.refwatch.dev/shop/forbidden');
          expect(reference(r.body).state).toBe('Forbidden');
          expect(reference(r.body).fix).toContain('caches');
          expect(reference(r.body).fix).toContain('watch');
        },
        { timeout: 10_000 },
      );
    } finally {
      rt.connection.embedded!.faults.unforbid('demo.refwatch.dev', 'caches');
    }
  });

  it('rejects a missing, malformed or unknown object', async () => {
    const missing = await call(getExplain, '/api/v1/explain');
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe('object');
    const bad = await call(getExplain, '/api/v1/explain?object=App/Shop/x');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('object.namespace');
    const unknown = await call(getExplain, '/api/v1/explain?object=App.demo.refwatch.dev/shop/goood');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('App.demo.refwatch.dev/shop/good');
  });
});

describe('GET /api/v1/stuck', () => {
  it('lists unresolved referrers oldest first, each with a reason and a fix', async () => {
    const r = await call(getStuck, '/api/v1/stuck?olderThan=0s');
    expect(r.status).toBe(200);
    const keys = r.body.items.map((s: any) => s.key);
    expect(keys).toContain('App.demo.refwatch.dev/shop/typo');
    expect(keys).not.toContain('App.demo.refwatch.dev/shop/good');
    const since = r.body.items.map((s: any) => s.since);
    expect([...since].sort((a, b) => a - b)).toEqual(since);
    for (const s of r.body.items) expect(s.fix.length).toBeGreaterThan(0);
  });

  it('a long threshold lists none; a bad duration is a 400 naming olderThan', async () => {
    expect((await call(getStuck, '/api/v1/stuck?olderThan=1h')).body.items).toEqual([]);
    const bad = await call(getStuck, '/api/v1/stuck?olderThan=soon');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('olderThan');
  });
});

describe('probes and metrics', () => {
  it('/healthz, /readyz and /metrics answer', async () => {
    expect((await call(() => getHealthz(), '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await call((r) => getReadyz(r), '/readyz');
    expect([200, 503]).toContain(ready.status);
    expect(['ready', 'degraded'].includes(ready.body.status)).toBe(ready.status === 200);
    const m = await call((r) => getMetrics(r), '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/^refwatch_references \d+/m);
    expect(m.text).toMatch(/refwatch_reference_controllers\{state="Active"\} [1-9]/);
    expect(m.text).toContain('refwatch_queue_latency_seconds_bucket');
  });
});

describe('mutating requests', () => {
  const post = (headers: Record<string, string>, body = '{}') =>
    new Request(BASE + '/api/v1/demo/runs', {
      method: 'POST',
      headers: { host: '127.0.0.1:3000', 'content-type': 'application/json', ...headers },
      body,
    });

  it('refuses a cross-origin POST, and a cross-site one without Origin', () => {
    const limits = new MutationLimits({ perClient: 100, total: 1000 });
    expect(() => guardMutation(post({ origin: 'http://evil.example' }), { limits })).toThrow(
      expect.objectContaining({ status: 403, field: 'origin' }),
    );
    expect(() => guardMutation(post({ 'sec-fetch-site': 'cross-site' }), { limits })).toThrow(
      expect.objectContaining({ status: 403 }),
    );
    expect(() => guardMutation(post({ origin: 'http://127.0.0.1:3000' }), { limits })).not.toThrow();
  });

  it('needs the bearer token when one is configured', () => {
    const limits = new MutationLimits({ perClient: 100, total: 1000 });
    const token = 'a-long-enough-token-1234';
    expect(() => guardMutation(post({ origin: 'http://127.0.0.1:3000' }), { token, limits })).toThrow(
      expect.objectContaining({ status: 401 }),
    );
    expect(() =>
      guardMutation(post({ origin: 'http://127.0.0.1:3000', authorization: 'Bearer wrong' }), { token, limits }),
    ).toThrow(expect.objectContaining({ status: 401 }));
    expect(() =>
      guardMutation(post({ origin: 'http://127.0.0.1:3000', authorization: `Bearer ${token}` }), { token, limits }),
    ).not.toThrow();
  });

  it('rate-limits mutations per client: a busy client waits, another goes on', () => {
    const limits = new MutationLimits({ perClient: 1, total: 100, now: () => 0 });
    const from = (address: string) => post({ origin: 'http://127.0.0.1:3000', 'x-forwarded-for': address });
    for (let i = 0; i < 4; i++) guardMutation(from('10.0.0.1'), { limits });
    expect(() => guardMutation(from('10.0.0.1'), { limits })).toThrow(
      expect.objectContaining({
        status: 429,
        code: 'RateLimited',
        message: expect.stringMatching(/from 10\.0\.0\.1: at most 1 per second per client \(REFWATCH_MUTATION_RATE/),
        headers: { 'retry-after': '1' },
      }),
    );
    expect(() => guardMutation(from('10.0.0.2'), { limits })).not.toThrow();
  });

  it('rejects oversized, non-JSON and invalid bodies naming the field', async () => {
    const schema = z.strictObject({ apps: z.number().int().min(1) });
    await expect(readJsonBody(post({}, JSON.stringify({ apps: 'x'.repeat(70_000) })), schema)).rejects.toMatchObject({
      status: 413,
    });
    await expect(readJsonBody(post({}, '{'), schema)).rejects.toMatchObject({ status: 400, code: 'InvalidJSON' });
    await expect(readJsonBody(post({}, '{"apps":"ten"}'), schema)).rejects.toMatchObject({
      status: 400,
      field: 'apps',
    });
    await expect(readJsonBody(post({ 'content-type': 'text/plain' }, '{}'), schema)).rejects.toMatchObject({
      status: 415,
    });
  });

  it('an unexpected error is a 500 with no detail', async () => {
    const res = toResponse(new TypeError('secret internal detail at /srv/x.ts:12'));
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret internal detail');
    expect(JSON.parse(text).error.code).toBe('Internal');
    expect(toResponse(new ApiError(409, 'Conflict', 'busy')).status).toBe(409);
  });
});
