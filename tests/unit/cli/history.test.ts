import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pc from 'picocolors';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HistoryTransition } from '@/lib/cli/backend';
import { printHistory } from '@/lib/cli/commands/history';
import type { OutputFormat, Printer } from '@/lib/cli/output';
import { main } from '@/lib/cli/program';
import { ServerBackend } from '@/lib/cli/server-backend';

const KEY = 'Pod/shop/web';
const SECRET = 'Secret/shop/db-password';
const AT = Date.UTC(2026, 4, 1, 14, 2, 11);

const transitions: HistoryTransition[] = [
  {
    id: 1,
    at: AT,
    type: 'reference',
    object: KEY,
    namespace: 'shop',
    state: 'Added',
    related: SECRET,
    message: 'spec.volumes[0].secret.secretName',
    controller: 'rules/Pod',
  },
  {
    id: 2,
    at: AT + 1000,
    type: 'referent',
    object: SECRET,
    namespace: 'shop',
    state: 'NotFound',
    message: `${SECRET} was deleted while refwatch was down (last seen 14:02:11)`,
    manager: 'kubectl-client-side-apply',
    resourceVersion: '812',
  },
  {
    id: 3,
    at: AT + 2000,
    type: 'referrer',
    object: KEY,
    namespace: 'shop',
    state: 'NotFound',
    reason: 'NotFound',
    related: SECRET,
    controller: 'rules/Pod',
  },
] as HistoryTransition[];

function printer(format: OutputFormat, noHeaders = false): Printer & { out: string[] } {
  const out: string[] = [];
  return { format, noHeaders, colors: pc.createColors(false), write: (t: string) => void out.push(t), out };
}

describe('refwatch history output', () => {
  it('prints a table oldest first, the object itself as ".", with the manager of each referent change', () => {
    const p = printer('table');
    printHistory(p, KEY, transitions);
    const lines = p.out.join('\n').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+OBJECT\s+STATE\s+WHAT\s+BY$/);
    expect(lines[1]).toMatch(
      /^2026-05-01 14:02:11\s+\.\s+Added\s+started naming Secret\/shop\/db-password \(spec\.volumes\[0\]\.secret\.secretName\)$/,
    );
    expect(lines[2]).toMatch(
      /^2026-05-01 14:02:12\s+Secret\/shop\/db-password\s+NotFound\s+.*was deleted while refwatch was down .*kubectl-client-side-apply$/,
    );
    expect(lines[3]).toMatch(/^2026-05-01 14:02:13\s+\.\s+NotFound\s+NotFound: Secret\/shop\/db-password$/);
    expect(lines).toHaveLength(4);
  });

  it('adds the resourceVersion and controller with -o wide, and drops the header with --no-headers', () => {
    const p = printer('wide', true);
    printHistory(p, KEY, transitions);
    const lines = p.out.join('\n').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/kubectl-client-side-apply\s+812$/);
    expect(lines[2]).toMatch(/rules\/Pod$/);
  });

  it('prints the object and its transitions as JSON with -o json', () => {
    const p = printer('json');
    printHistory(p, KEY, transitions);
    expect(JSON.parse(p.out.join(''))).toEqual({ object: KEY, transitions });
  });

  it('says when nothing was recorded', () => {
    const p = printer('table');
    printHistory(p, KEY, []);
    expect(p.out.join('')).toBe(`no recorded transitions for ${KEY}`);
  });
});

describe('refwatch history against a server', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('follows the cursor page by page until the limit', async () => {
    const seen: URLSearchParams[] = [];
    const server = http.createServer((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams;
      seen.push(q);
      const page =
        q.get('cursor') === null
          ? { transitions: transitions.slice(0, 2), next: '2' }
          : { transitions: transitions.slice(2) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const backend = new ServerBackend({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      timeoutMs: 5000,
    });
    const got = await backend.history({ key: KEY, limit: 10, since: AT });
    expect(got.map((t) => t.id)).toEqual([1, 2, 3]);
    expect(seen.map((q) => [q.get('object'), q.get('since'), q.get('limit'), q.get('cursor')])).toEqual([
      [KEY, String(AT), '10', null],
      [KEY, String(AT), '8', '2'],
    ]);
  });

  it('exits 2 saying what to type: without --server, and with a bad --limit', async () => {
    vi.stubEnv('REFWATCH_SERVER', '');
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(await main(['node', 'refwatch', 'history', 'pod/web', '-n', 'shop'])).toBe(2);
    expect(stderr.join('')).toContain('add --server http://127.0.0.1:3000 (or set REFWATCH_SERVER)');
    stderr.length = 0;
    expect(
      await main(['node', 'refwatch', 'history', 'pod/web', '--limit', '0', '--server', 'http://127.0.0.1:1']),
    ).toBe(2);
    expect(stderr.join('')).toContain('--limit 0: give a whole number from 1 to 100000');
  });
});
