import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startEmbeddedServer } from '@/lib/embedded';
import { api, namespace, start, watch } from './harness';

const CM = '/api/v1/namespaces/shop/configmaps';

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('embedded API server: faults', () => {
  it('dropWatches ends every open watch cleanly', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const a = await watch(s, `${CM}?watch=1`);
    const b = await watch(s, '/api/v1/secrets?watch=1');
    await expect.poll(() => s.openWatches()).toEqual({ configmaps: 1, secrets: 1 });
    s.faults.dropWatches();
    await expect.poll(() => a.ended && b.ended).toBe(true);
    expect(s.openWatches()).toEqual({});
    expect([...a.events, ...b.events].filter((e) => e.type === 'ERROR')).toEqual([]);
  });

  it('failNext fails the next n resource requests with 429 and Retry-After, or 500', async () => {
    const s = await start({ objects: [namespace('shop')] });
    s.faults.failNext(2, 429, 3);
    // Discovery does not consume injected failures.
    expect((await api(s, 'GET', '/api/v1')).status).toBe(200);
    const first = await api(s, 'GET', CM);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect(first.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
    expect((await api(s, 'GET', CM)).status).toBe(429);
    expect((await api(s, 'GET', CM)).status).toBe(200);

    s.faults.failNext(1, 500);
    const failed = await api(s, 'POST', CM, { metadata: { name: 'x' } });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ reason: 'InternalError', code: 500 });
    expect((await api(s, 'GET', `${CM}/x`)).status).toBe(404);
  });

  it('forbid answers 403 worded like RBAC until unforbid', async () => {
    const s = await start({ objects: [namespace('shop')] });
    s.faults.forbid('', 'configmaps');
    const listed = await api(s, 'GET', CM);
    expect(listed.status).toBe(403);
    expect(listed.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "shop"',
      reason: 'Forbidden',
      details: { kind: 'configmaps' },
      code: 403,
    });
    const watched = await api(s, 'GET', '/api/v1/configmaps?watch=1');
    expect(watched.body.message).toBe(
      'configmaps is forbidden: User "system:anonymous" cannot watch resource "configmaps" in API group "" at the cluster scope',
    );
    expect((await api(s, 'GET', '/api/v1/secrets')).status).toBe(200);
    s.faults.unforbid('', 'configmaps');
    expect((await api(s, 'GET', CM)).status).toBe(200);
  });

  it('forbid with a scope refuses the cluster scope or one namespace only, as Roles without a ClusterRole do', async () => {
    const s = await start({ objects: [namespace('shop'), namespace('vault')] });
    s.faults.forbid('', 'configmaps', '');
    s.faults.forbid('', 'configmaps', 'vault');
    expect((await api(s, 'GET', '/api/v1/configmaps')).status).toBe(403);
    expect((await api(s, 'GET', '/api/v1/namespaces/vault/configmaps')).status).toBe(403);
    expect((await api(s, 'GET', CM)).status).toBe(200);
    s.faults.unforbid('', 'configmaps', 'vault');
    expect((await api(s, 'GET', '/api/v1/namespaces/vault/configmaps')).status).toBe(200);
    expect((await api(s, 'GET', '/api/v1/configmaps')).status).toBe(403);
  });

  it('slowDown delays responses and reset lifts every fault', async () => {
    const s = await start({ objects: [namespace('shop')] });
    const order: string[] = [];
    s.faults.slowDown(300);
    s.faults.forbid('', 'secrets');
    const slowed = api(s, 'GET', CM).then(() => order.push('slowed'));
    await expect.poll(() => s.requestCount()['list configmaps']).toBe(1);
    s.faults.reset();
    await api(s, 'GET', '/api/v1/secrets').then((r) => order.push(`after reset ${r.status}`));
    await slowed;
    expect(order).toEqual(['after reset 200', 'slowed']);
  });

  it('requires the bearer token when one is set, except for probes and /version', async () => {
    const s = await start({ token: 'sekret' });
    const denied = await api(s, 'GET', '/api/v1/namespaces');
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    expect((await api(s, 'GET', '/api/v1/namespaces', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await api(s, 'GET', '/api/v1/namespaces', undefined, { authorization: 'Bearer sekret' })).status).toBe(200);
    expect((await api(s, 'GET', '/healthz')).status).toBe(200);
    expect((s.kubeconfig() as { users: { user: { token?: string } }[] }).users[0]!.user.token).toBe('sekret');
  });

  it('counts requests per verb and resource', async () => {
    const s = await start({ objects: [namespace('shop')] });
    await api(s, 'GET', CM);
    await api(s, 'GET', CM);
    await api(s, 'POST', CM, { metadata: { name: 'a' } });
    await api(s, 'GET', `${CM}/a`);
    expect(s.requestCount()).toMatchObject({ 'list configmaps': 2, 'create configmaps': 1, 'get configmaps': 1 });
  });

  it('refuses a non-loopback host', async () => {
    await expect(startEmbeddedServer({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  it('stop ends open watches, closes the port and leaves no timers', async () => {
    const s = await startEmbeddedServer({ objects: [namespace('shop')], bookmarkIntervalMs: 20 });
    const w = await watch(s, `${CM}?watch=1&allowWatchBookmarks=true`);
    s.faults.slowDown(10_000);
    const pending = fetch(`${s.url}${CM}`).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await s.stop();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => w.ended).toBe(true);
    expect(s.openWatches()).toEqual({});
    expect(await refused(s.port)).toBe(true);
    const timers = (process as unknown as { getActiveResourcesInfo(): string[] })
      .getActiveResourcesInfo()
      .filter((r) => r === 'Timeout');
    // vitest's own test timeout is the only timer that may remain.
    expect(timers.length).toBeLessThanOrEqual(1);
    await s.stop(); // idempotent
  });
});
