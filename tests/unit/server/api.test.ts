import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { getExplain, getHealthz, getMetrics, getReadyz, getSnapshot, getStream, getStuck } from '@/server/api';
import { parseConfig } from '@/server/config';
import { ApiError, toResponse } from '@/server/http/errors';
import { guardMutation } from '@/server/http/guard';
import { MutationLimits } from '@/server/http/limits';
import { readJsonBody } from '@/server/http/validate';
import { startRuntime, type Runtime } from '@/server/runtime';
import { BASE, callHandler } from './call';
import { z } from 'zod';
import { LEAN_MEDIA_TYPE, WIRE_FORMAT, decodeSnapshot, type Snapshot } from '@/lib/changelog';

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
    const s = r.body as Snapshot;
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
    expect(r.body.referrers).toEqual([]);
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

/** The plain snapshot as docs/api.md shows it: entity arrays, no wire tables. */
const plainShape = z.object({
  revision: z.number().int(),
  cluster: z.object({ mode: z.string(), server: z.string(), reachable: z.boolean() }),
  controllers: z.array(z.object({ id: z.string(), kind: z.string(), state: z.string() })),
  watches: z.array(z.object({ id: z.string(), kind: z.string(), phase: z.string() })),
  referrers: z.array(z.object({ id: z.string(), key: z.string(), controller: z.string(), state: z.string() })),
  referents: z.array(z.object({ id: z.string(), key: z.string(), state: z.string() })),
  references: z.array(z.object({ id: z.string(), referrer: z.string(), referent: z.string(), fieldPath: z.string() })),
  queues: z.array(z.object({ id: z.string(), depth: z.number() })),
  events: z.array(z.object({ id: z.string(), at: z.number() })),
  stuck: z.array(z.object({ key: z.string() })),
  stuckThresholdMs: z.number(),
});

describe('GET /api/v1/snapshot formats', () => {
  /** Both formats at one revision: the plain body and the decoded lean body must then be the same snapshot. */
  async function both(plainInit: RequestInit) {
    for (;;) {
      const plain = await call(getSnapshot, '/api/v1/snapshot', plainInit);
      const lean = await call(getSnapshot, '/api/v1/snapshot', { headers: { accept: LEAN_MEDIA_TYPE } });
      if (plain.body.revision === lean.body.revision) return { plain, lean };
    }
  }

  it.each([
    ['no Accept', {}],
    ["curl's */*", { accept: '*/*' }],
    ['application/json', { accept: 'application/json' }],
    ['a browser', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }],
    ['lean named but preferred less', { accept: `${LEAN_MEDIA_TYPE};q=0.5, application/json` }],
  ])('serves plain entity JSON to %s, the same snapshot the lean format decodes to', async (_, headers) => {
    const { plain, lean } = await both({ headers });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(plain.headers.get('vary')).toBe('Accept');
    expect(plain.body.format).toBeUndefined();
    expect(plainShape.safeParse(plain.body).error).toBeUndefined();
    // Each request judges its stuck list at its own now: ages may differ by the milliseconds between the two.
    const ageless = (snap: { stuck: { ageMs: number }[] }) => ({
      ...snap,
      stuck: snap.stuck.map((e) => ({ ...e, ageMs: 0 })),
    });
    expect(ageless(plain.body)).toEqual(ageless(decodeSnapshot(lean.body)));
    expect(plain.body.referrers.map((r: { key: string }) => r.key)).toContain('App.demo.refwatch.dev/shop/typo');
  });

  it.each([
    ['its media type', { headers: { accept: LEAN_MEDIA_TYPE } }, ''],
    ['it beside JSON', { headers: { accept: `application/json, ${LEAN_MEDIA_TYPE}` } }, ''],
    ['?format=lean', { headers: { accept: '*/*' } }, '?format=lean'],
  ])('serves the lean format to a client that asks with %s', async (_, init, query) => {
    const r = await call(getSnapshot, `/api/v1/snapshot${query}`, init);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(`${LEAN_MEDIA_TYPE}; charset=utf-8`);
    expect(r.body.format).toBe(WIRE_FORMAT);
    expect(decodeSnapshot(r.body).revision).toBe(r.body.revision);
  });

  it('answers 406 naming both types to a client that accepts neither, and 400 to an unknown format', async () => {
    const r = await call(getSnapshot, '/api/v1/snapshot', { headers: { accept: 'text/html' } });
    expect(r.status).toBe(406);
    expect(r.body.error).toMatchObject({ code: 'NotAcceptable', field: 'accept' });
    expect(r.body.error.message).toContain('application/json');
    expect(r.body.error.message).toContain(LEAN_MEDIA_TYPE);
    const bad = await call(getSnapshot, '/api/v1/snapshot?format=xml');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: 'format', message: expect.stringMatching(/plain .* or lean/) });
  });

  it("runs the README's curl | jq line: it prints the unresolved referrers", async () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');
    const line = /<!-- plain-json -->\n```sh\n(curl [^\n]*)\n```/.exec(readme)?.[1];
    expect(line).toMatch(/^curl -s http:\/\/127\.0\.0\.1:3000\/api\/v1\/snapshot \| jq /);
    // The handler behind a real HTTP server, so curl sends what it always sends.
    const server = http.createServer((req, res) => {
      const headers = req.headers as Record<string, string>;
      void getSnapshot(rt, new Request(`${BASE}${req.url}`, { headers })).then(async (r) => {
        res.writeHead(r.status, Object.fromEntries(r.headers));
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const curlOnly = line!.split(' | jq ')[0]!.replace(':3000', `:${port}`);
      // Not execFileSync: the server answering curl runs on this event loop.
      const { stdout: body } = await promisify(execFile)('bash', ['-c', curlOnly], { encoding: 'utf8' });
      expect(plainShape.safeParse(JSON.parse(body)).error).toBeUndefined();
      // jq, where it is installed, runs the whole line as written.
      if (spawnSync('jq', ['--version']).status === 0) {
        const { stdout: out } = await promisify(execFile)(
          'bash',
          ['-o', 'pipefail', '-c', line!.replace(':3000', `:${port}`)],
          { encoding: 'utf8' },
        );
        expect(out).toContain('App.demo.refwatch.dev/shop/typo NotFound');
        expect(out).not.toContain('shop/good');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('GET /api/v1/stream formats', () => {
  /** firstSnapshot reads the stream's first snapshot message's data. */
  async function firstSnapshot(query: string, headers: Record<string, string> = {}) {
    const abort = new AbortController();
    const res = getStream(rt, new Request(`${BASE}/api/v1/stream${query}`, { headers, signal: abort.signal }));
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/event: snapshot\ndata: [^\n]*\n\n/.test(text)) text += (await reader.read()).value;
    abort.abort();
    await reader.cancel();
    return { res, data: JSON.parse(/event: snapshot\ndata: ([^\n]*)\n\n/.exec(text)![1]!) };
  }

  it('sends plain entity JSON by default, as curl -N would read it', async () => {
    const { res, data } = await firstSnapshot('', { accept: 'text/event-stream' });
    expect(res.headers.get('vary')).toBe('Accept');
    expect(data.format).toBeUndefined();
    expect(plainShape.safeParse(data).error).toBeUndefined();
  });

  it('sends the lean format for ?format=lean (EventSource) or an Accept that names it', async () => {
    for (const [query, headers] of [
      ['?format=lean', {}],
      ['', { accept: `text/event-stream, ${LEAN_MEDIA_TYPE}` }],
    ] as const) {
      const { data } = await firstSnapshot(query, headers);
      expect(data.format).toBe(WIRE_FORMAT);
      expect(decodeSnapshot(data).referrers.length).toBeGreaterThan(0);
    }
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

  it('filters by namespace and by kind, each compared whole', async () => {
    const keys = async (q: string) =>
      (await call(getStuck, `/api/v1/stuck?olderThan=0s${q}`)).body.items.map((s: any) => s.key);
    expect(await keys('&namespace=shop&kind=App.demo.refwatch.dev')).toContain('App.demo.refwatch.dev/shop/typo');
    expect(await keys('&namespace=sho')).toEqual([]);
    expect(await keys('&kind=App.demo')).toEqual([]);
    expect(await keys('&kind=App')).toEqual([]);
  });

  it('groupBy=rootCause adds the groups, each stuck referrer in one; a bad groupBy is a 400 naming it', async () => {
    const r = await call(getStuck, '/api/v1/stuck?olderThan=0s&groupBy=rootCause');
    expect(r.status).toBe(200);
    const ids = r.body.items.map((s: any) => s.id);
    expect(ids.length).toBeGreaterThan(0);
    const grouped = r.body.groups.flatMap((g: any) => g.items.map((i: any) => i.id));
    expect([...grouped].sort()).toEqual([...ids].sort());
    const typo = r.body.groups.find((g: any) => g.items.some((i: any) => i.key === 'App.demo.refwatch.dev/shop/typo'));
    expect(typo.title).toMatch(/^\d+ referrers? blocked by /);
    expect(typo.fix.length).toBeGreaterThan(0);
    expect((await call(getStuck, '/api/v1/stuck?olderThan=0s')).body.groups).toBeUndefined();
    const bad = await call(getStuck, '/api/v1/stuck?groupBy=cause');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('groupBy');
    expect(bad.body.error.message).toMatch(/rootCause/);
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
