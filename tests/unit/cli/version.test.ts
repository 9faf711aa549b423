import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { autoPackLines, formatVersion, refwatchVersion } from '@/lib/cli/commands/version';
import { main } from '@/lib/cli/program';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** A stand-in refwatch server answering GET /api/v1/snapshot with this body and status. */
async function serve(body: unknown, status = 200): Promise<{ url: string; auth: (string | undefined)[] }> {
  const auth: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    auth.push(req.headers.authorization);
    if (req.url === '/api/v1/snapshot')
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, auth };
}

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  const code = await main(['node', 'refwatch', ...args]);
  return { code, out, err };
}

describe('refwatch version', () => {
  it("prints the refwatch package's version", async () => {
    expect(refwatchVersion()).toMatch(/^\d+\.\d+\.\d+/);
    const { code, out } = await run('version');
    expect(code).toBe(0);
    expect(out).toBe(`refwatch ${refwatchVersion()}\n`);
  });

  it('--packs --server prints the packs the server runs and why, as its snapshot says', async () => {
    const packs = ['core: on, always', 'cert-manager: on, cert-manager.io/v1 served', 'keda: off, keda.sh not served'];
    const server = await serve({ revision: 1, cluster: { packs } });
    const { code, out } = await run('version', '--packs', '--server', server.url, '--token', 's3cret');
    expect(code).toBe(0);
    expect(out).toBe(
      [
        `refwatch ${refwatchVersion()}`,
        `packs (--server ${server.url}):`,
        '  core: on, always',
        '  cert-manager: on, cert-manager.io/v1 served',
        '  keda: off, keda.sh not served',
        '',
      ].join('\n'),
    );
    expect(server.auth).toEqual(['Bearer s3cret']);
  });

  it('--packs --server says so when the server names no packs, or refuses, and exits 2', async () => {
    const server = await serve({ revision: 1, cluster: {} });
    const { code, err } = await run('version', '--packs', '--server', server.url);
    expect(code).toBe(2);
    expect(err).toBe(
      `error: --server ${server.url} says nothing of its packs (cluster.packs): is it a refwatch server?\n`,
    );
    await close?.();
    const refusing = await serve({}, 401);
    const refused = await run('version', '--packs', '--server', refusing.url);
    expect(refused).toMatchObject({ code: 2, err: expect.stringContaining('pass its token with --token') });
  });

  it('without a server, --packs says what --packs auto turns on from the groups the cluster serves', () => {
    const groups = {
      kind: 'APIGroupList',
      groups: [
        { name: 'apps', preferredVersion: { groupVersion: 'apps/v1' } },
        { name: 'cert-manager.io', preferredVersion: { groupVersion: 'cert-manager.io/v1' } },
        { name: 'monitoring.coreos.com', preferredVersion: { groupVersion: 'monitoring.coreos.com/v1' } },
      ],
    };
    expect(autoPackLines(groups)).toEqual([
      'core: on, always',
      'gateway: off, gateway.networking.k8s.io not served',
      'crossplane: off, apiextensions.crossplane.io not served',
      'cert-manager: on, cert-manager.io/v1 served',
      'external-secrets: off, external-secrets.io not served',
      'flux: off, source.toolkit.fluxcd.io, kustomize.toolkit.fluxcd.io, helm.toolkit.fluxcd.io, notification.toolkit.fluxcd.io not served',
      'argocd: off, argoproj.io not served',
      'keda: off, keda.sh not served',
      'prometheus: on, monitoring.coreos.com/v1 served',
    ]);
  });

  it('prints JSON with -o json', () => {
    const report = { version: '1.2.3', packs: { source: '--server http://x', lines: ['core: on, always'] } };
    expect(JSON.parse(formatVersion(report, 'json'))).toEqual(report);
  });
});
