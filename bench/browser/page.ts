// Helpers for the benchmarks that drive the dashboard in headless Chromium (bench/ui.ts, bench/ui-scope.ts).
// This folder has no bench.ts, so bench/run.ts does not take it for a benchmark.
import { chromium, type Browser, type Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..', '..');

export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** sse is one server-sent event as the stream writes it. */
export const sse = (id: number, event: string, data: string) => `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`;

/**
 * LiveStream stands in for refwatch's /api/v1/stream where page.route cannot: page.route answers a request whole,
 * so a stream answered that way ends, and the page reacts as to a dropped connection. This loopback server keeps
 * each connection open, as refwatch's server does, starts each with `opening`, and writes what `send` is given
 * when it is given. A route sends the page's stream request here with `route.continue({ url: stream.url })`.
 */
export interface LiveStream {
  readonly url: string;
  /** connections is how many stream connections the page has opened. */
  readonly connections: number;
  send(text: string): void;
  close(): Promise<void>;
}

export async function liveStream(opening: string): Promise<LiveStream> {
  const open = new Set<ServerResponse>();
  let connections = 0;
  const server = createServer((_req, res) => {
    connections++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write(opening);
    open.add(res);
    res.on('close', () => open.delete(res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1/stream`,
    get connections() {
      return connections;
    },
    send(text) {
      for (const res of open) res.write(text);
    },
    close() {
      for (const res of open) res.end();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** measures lists the durations of the page's User Timing measures of that name. */
export const measures = (page: Page, name: string) =>
  page.evaluate((n) => performance.getEntriesByName(n, 'measure').map((e) => e.duration), name);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.REFWATCH_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * startServer runs the production server (`scripts/start.ts`, which builds first when sources changed) on
 * REFWATCH_UI_PORT or `port`, without the demo; REFWATCH_UI_URL uses a server already up instead.
 */
export async function startServer(port: number): Promise<{ url: string; stop(): Promise<void> }> {
  const external = process.env.REFWATCH_UI_URL;
  if (external) return { url: external.replace(/\/$/, ''), stop: async () => {} };
  port = Number(process.env.REFWATCH_UI_PORT ?? port);
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'scripts', 'start.ts'), '--port', String(port)],
    {
      cwd: root,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', REFWATCH_DEMO: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let log = '';
  child.stdout!.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-20_000)));
  child.stderr!.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await exited;
  };
  try {
    await waitFor(`${url}/healthz (npm start builds first when sources changed)`, 300_000, async () => {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${log}`);
      try {
        return (await fetch(`${url}/healthz`)).ok ? true : undefined;
      } catch {
        return undefined;
      }
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, stop };
}
