import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/server/config';
import { accessPolicy, accessRefusal, guardAccess, type AccessPolicy } from '@/server/http/guard';
import { toResponse } from '@/server/http/errors';

const TOKEN = 'k8s-refwatch-token-0123456789';
const POD = { eth0: [{ address: '10.244.1.7' }] };

/** policyFor builds the access policy a server started with this environment applies. */
const policyFor = (env: Record<string, string>) => accessPolicy(parseConfig(env), POD);

/** answer runs a request through the proxy's check; undefined when it would reach the route. */
async function answer(policy: AccessPolicy, path: string, headers: Record<string, string>, method = 'GET') {
  const res = accessRefusal(new Request(`http://127.0.0.1:3000${path}`, { method, headers }), () => policy);
  if (!res) return { status: 'passed' as const };
  const text = await res.text();
  return {
    status: res.status,
    text,
    type: res.headers.get('content-type') ?? '',
    auth: res.headers.get('www-authenticate'),
  };
}

const rebinding = { host: 'evil.example:3000', origin: 'http://evil.example:3000' };

describe('the Host allow-list on every route', () => {
  const loopback = policyFor({});

  it.each([
    ['GET', '/api/v1/snapshot'],
    ['GET', '/api/v1/stream'],
    ['POST', '/api/v1/demo/runs'],
    ['GET', '/metrics'],
    ['GET', '/healthz'],
    ['GET', '/readyz'],
    ['GET', '/'],
    ['GET', '/_next/static/chunks/main.js'],
  ])('refuses a DNS-rebinding request %s %s with 421 naming the flag', async (method, path) => {
    const r = await answer(loopback, path, rebinding, method);
    expect(r.status).toBe(421);
    const message = 'Host "evil.example:3000" is not allowed; add it with --allowed-hosts / REFWATCH_ALLOWED_HOSTS';
    if (path.startsWith('/api/')) {
      expect(JSON.parse(r.text!)).toEqual({ error: { code: 'HostNotAllowed', message, field: 'host' } });
    } else {
      expect(r.type).toMatch(/^text\/plain/);
      expect(r.text).toBe(`${message}\n`);
    }
  });

  it('passes loopback names on any port', async () => {
    for (const host of ['127.0.0.1:3000', 'localhost:3000', '[::1]:3000', '127.0.0.1']) {
      expect((await answer(loopback, '/api/v1/snapshot', { host })).status, host).toBe('passed');
    }
  });

  it('passes a name added with --allowed-hosts, and nothing next to it', async () => {
    const policy = policyFor({ REFWATCH_ALLOWED_HOSTS: 'refwatch.example.com' });
    expect((await answer(policy, '/api/v1/snapshot', { host: 'refwatch.example.com' })).status).toBe('passed');
    expect((await answer(policy, '/api/v1/snapshot', { host: 'refwatch.example.com.evil.example' })).status).toBe(421);
  });

  it('refuses a request without a Host header', async () => {
    const r = await answer(loopback, '/api/v1/snapshot', {});
    expect(r.status).toBe(421);
    expect(r.text).toContain('no Host header');
  });

  it('refuses everything, without details, when the configuration cannot be read', async () => {
    const res = accessRefusal(
      new Request('http://127.0.0.1:3000/api/v1/snapshot', { headers: { host: '127.0.0.1:3000' } }),
      () => policyFor({ REFWATCH_HOST: '0.0.0.0' }),
    );
    expect(res?.status).toBe(500);
    expect(await res?.text()).toContain('configuration is invalid');
  });
});

describe('reads need the token when bound beyond loopback', () => {
  // Bound to 0.0.0.0 (injected: the test reaches it as 127.0.0.1), as in a Pod.
  const exposed = policyFor({ REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: TOKEN });
  const host = '127.0.0.1:3000';

  it.each(['/api/v1/snapshot', '/api/v1/stream', '/api/v1/demo/runs', '/metrics'])(
    'GET %s: 401 without the token, through with it',
    async (path) => {
      const refused = await answer(exposed, path, { host });
      expect(refused.status).toBe(401);
      expect(refused.auth).toBe('Bearer');
      expect(refused.text).toContain('REFWATCH_TOKEN / --token');
      expect((await answer(exposed, path, { host, authorization: `Bearer ${TOKEN}` })).status).toBe('passed');
      expect((await answer(exposed, path, { host, authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    },
  );

  it('keeps probes and the dashboard page open, Host still checked', async () => {
    for (const path of ['/healthz', '/readyz', '/', '/_next/static/chunks/main.js']) {
      expect((await answer(exposed, path, { host })).status, path).toBe('passed');
      expect((await answer(exposed, path, { host: 'evil.example' })).status, path).toBe(421);
    }
  });

  it('lets a kubelet probe the Pod IP when bound to a wildcard', async () => {
    expect((await answer(exposed, '/readyz', { host: '10.244.1.7:3000' })).status).toBe('passed');
  });

  it('refuses the long-lived token in a URL, on every data path and with the bearer too, and never repeats it', async () => {
    for (const policy of [exposed, policyFor({ REFWATCH_TOKEN: TOKEN }), policyFor({})]) {
      for (const path of ['/api/v1/stream', '/api/v1/snapshot', '/metrics']) {
        for (const headers of [{ host }, { host, authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
          const r = await answer(policy, `${path}?access_token=${TOKEN}`, headers);
          expect(r.status, path).toBe(401);
          expect(r.text).not.toContain(TOKEN);
          expect(r.text).toContain('not accepted in a URL');
          expect(r.text).toContain('POST /api/v1/stream/tickets');
        }
      }
    }
  });

  it('leaves reads open on loopback with a token, and with --insecure-allow-anonymous', async () => {
    for (const policy of [
      policyFor({ REFWATCH_TOKEN: TOKEN }),
      policyFor({ REFWATCH_HOST: '0.0.0.0', REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'true' }),
    ]) {
      expect((await answer(policy, '/api/v1/snapshot', { host })).status).toBe('passed');
    }
  });

  it('guardAccess throws what the route layer answers', () => {
    const req = new Request('http://127.0.0.1:3000/api/v1/snapshot', { headers: { host } });
    let status = 0;
    try {
      guardAccess(req, exposed);
    } catch (e) {
      status = toResponse(e).status;
    }
    expect(status).toBe(401);
  });
});
