import { expect, test } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { SCREENS, deleteAllRuns, graphNodeCount } from './dashboard';

/*
 * Safe serving against the real built server: the DNS-rebinding request is
 * refused on every kind of route, allowed names get through, and a server
 * that believes it is bound beyond loopback (REFWATCH_HOST=0.0.0.0, though it
 * listens on 127.0.0.1 only) answers reads only with its token.
 */

interface Answer {
  status: number;
  type: string;
  body: string;
}

/** raw sends a request with exactly these headers (fetch would not let a test set Host). */
function raw(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; firstBytes?: boolean } = {},
): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: opts.method ?? 'GET',
        headers: opts.headers,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          // A stream never ends: its first event is enough.
          if (opts.firstBytes && body.includes('\n\n')) req.destroy();
        });
        const done = () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body });
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** startServer runs the built dashboard (the e2e web server built it) with this environment, on 127.0.0.1 only. */
async function startServer(
  env: Record<string, string>,
): Promise<{ url: string; stop: () => Promise<void>; log: () => string }> {
  const port = await freePort();
  const root = path.resolve(import.meta.dirname, '../..');
  let log = '';
  const child: ChildProcess = spawn(
    process.execPath,
    [path.join(root, 'node_modules/next/dist/bin/next'), 'start', '--hostname', '127.0.0.1', '--port', String(port)],
    {
      cwd: root,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', REFWATCH_PORT: String(port), REFWATCH_GRACE: '2s', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // SIGTERM, and SIGKILL if it has not exited within 10 s; awaited either way.
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  await expect
    .poll(async () => (await raw(`${url}/readyz`).catch(() => ({ status: 0 }))).status, {
      timeout: 60_000,
      message: `server on ${url} never got ready:\n${log}`,
    })
    .toBe(200);
  return { url, stop, log: () => log };
}

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
