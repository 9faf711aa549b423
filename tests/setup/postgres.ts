import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL server for the history tests: Debian's `postgresql`
 * package (installed by .ci/run), started with initdb and pg_ctl in a temp
 * dir on a loopback port, as an unprivileged user (`nobody` when run as root,
 * since postgres refuses to run as root). stop() stops it and removes the dir.
 */
export interface TestPostgres {
  url: string;
  /** Stops the server at once, as a crash would (pg_ctl -m immediate). */
  kill(): void;
  /** Starts it again on the same port and data. */
  restart(): void;
  stop(): void;
}

/** pgBin finds Debian's PostgreSQL binaries (/usr/lib/postgresql/<version>/bin), newest first. */
function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'pg_ctl'))) return join(root, v, 'bin');
  return undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * startPostgres starts a server, or returns why it cannot: no PostgreSQL
 * installed. Under CI=true that is an error (a skipped tier fails the run).
 */
export async function startPostgres(): Promise<TestPostgres | { skipped: string }> {
  const bin = pgBin();
  if (!bin) {
    const why = "no PostgreSQL under /usr/lib/postgresql; install Debian's package: apt-get install -y postgresql";
    if (process.env.CI === 'true') throw new Error(`PostgreSQL history tests: ${why}`);
    return { skipped: why };
  }
  const dir = mkdtempSync(join(tmpdir(), 'refwatch-pg-'));
  const data = join(dir, 'data');
  const root = process.getuid?.() === 0;
  if (root) execFileSync('chown', ['nobody:nogroup', dir]);
  const run = (cmd: string, args: string[]) => {
    const argv = root ? ['-u', 'nobody', '--', join(bin, cmd), ...args] : args;
    const r = spawnSync(root ? 'runuser' : join(bin, cmd), argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'refwatch', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  start();
  run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'refwatch', 'refwatch']);
  let stopped = false;
  return {
    url: `postgres://refwatch@127.0.0.1:${port}/refwatch`,
    kill: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    restart: start,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // Already stopped by a kill.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
