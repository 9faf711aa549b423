import { expect } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';

/* A second dashboard server, started by a spec with its own settings beside the suite's web server. */

interface Answer {
  status: number;
  type: string;
  body: string;
}

/** raw sends a request with exactly these headers (fetch would not let a test set Host). */
export function raw(
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
export async function startServer(
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
      // Three minutes: next start takes seconds, and far longer on a machine busy with builds.
      timeout: 180_000,
      message: `server on ${url} never got ready:\n${log}`,
    })
    .toBe(200);
  return { url, stop, log: () => log };
}
