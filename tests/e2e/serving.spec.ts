import { expect, test } from '@playwright/test';
import { SCREENS, deleteAllRuns, graphNodeCount } from './dashboard';
import { raw, startServer } from './server';

/*
 * Safe serving against the real built server: the DNS-rebinding request is
 * refused on every kind of route, allowed names get through, and a server
 * that believes it is bound beyond loopback (REFWATCH_HOST=0.0.0.0, though it
 * listens on 127.0.0.1 only) answers reads only with its token.
 */

test.describe('safe serving', () => {
  test('refuses the DNS-rebinding request for GET, SSE and POST; loopback names get through', async ({
    baseURL,
    request,
  }) => {
    const base = baseURL!;
    const port = new URL(base).port;
    const evil = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    await deleteAllRuns(request);

    for (const [method, route] of [
      ['GET', '/api/v1/snapshot'],
      ['GET', '/api/v1/stream'],
      ['POST', '/api/v1/demo/runs'],
      ['GET', '/'],
    ] as const) {
      const r = await raw(base + route, {
        method,
        headers: { ...evil, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
        ...(method === 'POST' ? { body: '{}' } : {}),
        firstBytes: true,
      });
      expect(r.status, `${method} ${route}`).toBe(421);
      const message = `Host "evil.example:${port}" is not allowed; add it with --allowed-hosts / REFWATCH_ALLOWED_HOSTS`;
      if (route.startsWith('/api/'))
        expect(JSON.parse(r.body)).toEqual({ error: { code: 'HostNotAllowed', message, field: 'host' } });
      else expect(r.body.trim()).toBe(message);
    }
    // The refused POST created nothing.
    expect(((await (await request.get('/api/v1/demo/runs')).json()) as { items: unknown[] }).items).toEqual([]);

    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await raw(`${base}/api/v1/snapshot`, { headers: { host } })).status, host).toBe(200);
      const stream = await raw(`${base}/api/v1/stream`, { headers: { host }, firstBytes: true });
      expect(stream.status).toBe(200);
      expect(stream.body).toContain('event: snapshot');
    }
  });

  test('a server bound beyond loopback answers reads only with its token, and on the names it was given', async ({
    page,
  }) => {
    const token = 'e2e-refwatch-token-0123456789';
    const server = await startServer({
      REFWATCH_HOST: '0.0.0.0',
      REFWATCH_TOKEN: token,
      REFWATCH_ALLOWED_HOSTS: 'refwatch.test',
      REFWATCH_DEMO: 'on',
    });
    try {
      const bearer = { authorization: `Bearer ${token}` };
      expect((await raw(`${server.url}/api/v1/snapshot`)).status).toBe(401);
      expect((await raw(`${server.url}/metrics`)).status).toBe(401);
      expect((await raw(`${server.url}/api/v1/stream`, { firstBytes: true })).status).toBe(401);
      expect((await raw(`${server.url}/api/v1/snapshot`, { headers: bearer })).status).toBe(200);
      // The token is refused in a URL; a one-use ticket, asked for with it, opens the stream.
      expect((await raw(`${server.url}/api/v1/stream?access_token=${token}`, { firstBytes: true })).status).toBe(401);
      const issued = await raw(`${server.url}/api/v1/stream/tickets`, { method: 'POST', headers: bearer });
      expect(issued.status, issued.body).toBe(201);
      const ticket = encodeURIComponent((JSON.parse(issued.body) as { ticket: string }).ticket);
      expect((await raw(`${server.url}/api/v1/stream?ticket=${ticket}`, { firstBytes: true })).body).toContain(
        'event: snapshot',
      );
      expect((await raw(`${server.url}/api/v1/stream?ticket=${ticket}`, { firstBytes: true })).status).toBe(401);
      expect(
        (await raw(`${server.url}/api/v1/snapshot`, { headers: { ...bearer, host: 'refwatch.test' } })).status,
      ).toBe(200);
      expect(
        (await raw(`${server.url}/api/v1/snapshot`, { headers: { ...bearer, host: 'evil.example' } })).status,
      ).toBe(421);
      expect((await raw(`${server.url}/healthz`)).status).toBe(200);
      expect(server.log()).not.toContain(token);
      const run = await raw(`${server.url}/api/v1/demo/runs`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json', origin: server.url },
        body: JSON.stringify({
          apps: 3,
          databases: 1,
          caches: 1,
          secrets: 1,
          readyAfter: { distribution: 'fixed', ms: 60_000 },
          timeoutMs: 90_000,
        }),
      });
      expect(run.status, run.body).toBe(201);

      // The dashboard asks for the token once, then shows the cluster.
      await page.goto(server.url + '/');
      const dialog = page.getByRole('dialog', { name: 'Access token' });
      await expect(dialog).toBeVisible();
      await page.screenshot({ path: `${SCREENS}/token-dialog.png` });
      await dialog.getByLabel('Token').fill(token);
      await dialog.getByRole('button', { name: 'Continue' }).click();
      await expect(dialog).toBeHidden();
      await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');
      await expect.poll(() => graphNodeCount(page)).toBeGreaterThanOrEqual(6);
      // A reload in the same tab keeps the token: no second question.
      await page.reload();
      await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');
      await expect(dialog).toBeHidden();
      await page.screenshot({ path: `${SCREENS}/token-accepted.png` });
      expect(server.log()).not.toContain(token);
      await page.goto('about:blank'); // closes the stream, so the server can stop at once
    } finally {
      await server.stop();
    }
  });
});
