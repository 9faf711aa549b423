import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureStandalone } from '../../scripts/build-standalone';

/**
 * A copy of the standalone server (scripts/build-standalone.ts), outside the
 * repository so no node_modules of the repository can be reached, and
 * read-only to the server as a container's root file system is.
 */
export interface StandaloneCopy {
  dir: string;
  remove(): void;
}

/** copyStandalone builds the standalone server if it is stale, and copies it to a read-only temp folder. */
export function copyStandalone(): StandaloneCopy {
  const built = ensureStandalone(undefined, process.env, (line) => console.log(line));
  const parent = mkdtempSync(path.join(os.tmpdir(), 'refwatch-standalone-'));
  chmodSync(parent, 0o755);
  const dir = path.join(parent, 'app');
  cpSync(built, dir, { recursive: true });
  chmodTree(dir, false);
  return {
    dir,
    remove() {
      chmodTree(dir, true);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

function chmodTree(dir: string, writable: boolean): void {
  const r = spawnSync('chmod', ['-R', writable ? 'u+w' : 'a-w', dir], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`chmod -R on ${dir} failed (${r.status ?? r.signal})`);
}

export interface StandaloneServer {
  url: string;
  /** Everything the server printed so far. */
  output(): string;
  /** SIGTERM, SIGKILL after 5 s; awaited. */
  stop(): Promise<void>;
  /** SIGKILL at once, for an exit handler that cannot wait. */
  kill(): void;
}

/**
 * startStandalone runs `node server.js` in dir on a free loopback port, with
 * only the given environment (plus PATH). As root it runs as nobody (65534),
 * so the read-only copy is read-only for it too. Its HOME is a new temp folder,
 * removed when it stops, so what it keeps under ~/.local/state (the embedded
 * cluster's kubeconfig, the history) never comes from another run. It resolves
 * once /healthz answers.
 */
export async function startStandalone(dir: string, env: Record<string, string> = {}): Promise<StandaloneServer> {
  const port = await freePort();
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const home = mkdtempSync(path.join(os.tmpdir(), 'refwatch-standalone-home-'));
  chmodSync(home, 0o777);
  const child: ChildProcess = spawn(process.execPath, [path.join(dir, 'server.js')], {
    // A cwd outside the server's folder: server.js must find its files on its own.
    cwd: os.tmpdir(),
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      ...env,
      HOSTNAME: '127.0.0.1',
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...asNobody,
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  let exited = false;
  let how = '';
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      how = signal ? `killed by ${signal}` : `exit code ${code}`;
      // Removed once the process is gone, however it ended: never under a server still writing to it.
      rmSync(home, { recursive: true, force: true });
      resolve();
    }),
  );
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the standalone server exited (${how}) before answering /healthz:\n${out}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the standalone server did not answer /healthz within 60 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, output: () => out, stop, kill: () => void child.kill('SIGKILL') };
}

/** waitReady polls /readyz until 200 and returns its last answer either way. */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${url}/readyz`);
    const body = await r.text();
    if (r.status === 200 || Date.now() > deadline) return { status: r.status, body };
    await new Promise((res) => setTimeout(res, 250));
  }
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => s.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
