import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeClient, KubeRequestError, Redactor } from '@/lib/kube';
import { credentialsFor } from '@/lib/kube/credentials';

// A TLS API server stand-in: it answers every request with what it saw of the
// caller (bearer token, impersonation, basic auth, client certificate), and
// 401 when the bearer token is not the one it expects, quoting the token it
// got, as a careless proxy in front of a server may.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-credentials-'));
let server: https.Server;
let url = '';
let expectedToken: string | undefined;

interface Seen {
  authorization?: string;
  impersonate?: string;
  clientCN?: string;
}

beforeAll(async () => {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: 'test-apiserver' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
    clientCertificate: { cn: 'jane' },
  });
  fs.writeFileSync(path.join(dir, 'ca.crt'), pems.cert);
  fs.writeFileSync(path.join(dir, 'jane.crt'), pems.clientcert!);
  fs.writeFileSync(path.join(dir, 'jane.key'), pems.clientprivate!);
  server = https.createServer(
    { key: pems.private, cert: pems.cert, ca: pems.cert, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const seen: Seen = {
        authorization: req.headers.authorization,
        impersonate: req.headers['impersonate-user'] as string | undefined,
        clientCN: (req.socket as TLSSocket).authorized ? (peer.subject?.CN as string | undefined) : undefined,
      };
      const ok = expectedToken === undefined || req.headers.authorization === `Bearer ${expectedToken}`;
      res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
      const refusal = { kind: 'Status', reason: 'Unauthorized', message: `Unauthorized: ${seen.authorization}` };
      res.end(JSON.stringify(ok ? seen : refusal));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = { 'certificate-authority': 'ca.crt' },
): string {
  const file = path.join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: url, ...cluster } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return file;
}

describe('TLS and identity from a kubeconfig', () => {
  it('verifies the server with the CA file and presents the client certificate, both relative to the kubeconfig', async () => {
    const client = KubeClient.fromFile(kubeconfig({ 'client-certificate': 'jane.crt', 'client-key': 'jane.key' }));
    expect(client.describe().auth).toBe('client-certificate');
    await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ clientCN: 'jane' });
    client.close();
  });

  it('takes certificates inline as base64 data too', async () => {
    const b64 = (f: string) => fs.readFileSync(path.join(dir, f)).toString('base64');
    const client = KubeClient.fromFile(
      kubeconfig(
        { 'client-certificate-data': b64('jane.crt'), 'client-key-data': b64('jane.key') },
        { 'certificate-authority-data': b64('ca.crt') },
      ),
    );
    await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ clientCN: 'jane' });
    client.close();
  });

  it('decodes inline certificates once, and reads certificate files on every request', async () => {
    const b64 = (f: string) => fs.readFileSync(path.join(dir, f)).toString('base64');
    const inline = credentialsFor(
      { name: 'c', server: url, caData: b64('ca.crt'), skipTLSVerify: false },
      { name: 'u', certData: b64('jane.crt'), keyData: b64('jane.key') },
      () => undefined,
    );
    const first: https.RequestOptions = {};
    const second: https.RequestOptions = {};
    await inline.apply(first);
    await inline.apply(second);
    expect(first.ca).toEqual(fs.readFileSync(path.join(dir, 'ca.crt')));
    // The same Buffers: the client's keep-alive agent is matched by identity, not by comparing PEM bytes.
    expect([second.ca, second.cert, second.key]).toEqual([first.ca, first.cert, first.key]);
    expect(second.ca).toBe(first.ca);
    expect(second.cert).toBe(first.cert);
    expect(second.key).toBe(first.key);
    const files = credentialsFor(
      { name: 'c', server: url, caFile: path.join(dir, 'ca.crt'), skipTLSVerify: false },
      { name: 'u' },
      () => undefined,
    );
    const a: https.RequestOptions = {};
    const b: https.RequestOptions = {};
    await files.apply(a);
    await files.apply(b);
    expect(b.ca).toEqual(a.ca);
    expect(b.ca).not.toBe(a.ca);
  });

  it('keys its keep-alive pool by server, not by certificate bytes, and reuses the connection', async () => {
    const b64 = (f: string) => fs.readFileSync(path.join(dir, f)).toString('base64');
    const client = KubeClient.fromFile(
      kubeconfig(
        { 'client-certificate-data': b64('jane.crt'), 'client-key-data': b64('jane.key') },
        { 'certificate-authority-data': b64('ca.crt') },
      ),
    );
    try {
      for (let i = 0; i < 3; i++)
        await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ clientCN: 'jane' });
      const agent = (client as unknown as { agent: { agent: https.Agent } }).agent.agent;
      const pools = Object.keys(agent.freeSockets);
      expect(pools).toHaveLength(1);
      expect(agent.freeSockets[pools[0]!]).toHaveLength(1);
      // A key with the PEM text in it is a key built by decoding the certificates on every request.
      expect(pools[0]).not.toContain('BEGIN');
      expect(pools[0]!.length).toBeLessThan(100);
    } finally {
      client.close();
    }
  });

  it('refuses a server its CA does not vouch for, unless told to skip verification', async () => {
    const strict = KubeClient.fromFile(kubeconfig({ token: 'abcdefgh' }, {}));
    const e = await strict.getJSON('/api').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KubeRequestError);
    expect((e as Error).message).toMatch(
      /cannot reach https:\/\/127\.0\.0\.1:\d+ \((SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/,
    );
    const lax = KubeClient.fromFile(kubeconfig({ token: 'abcdefgh' }, { 'insecure-skip-tls-verify': true }));
    expect(lax.describe().insecureSkipTLSVerify).toBe(true);
    await expect(lax.getJSON<Seen>('/api')).resolves.toMatchObject({ authorization: 'Bearer abcdefgh' });
    strict.close();
    lax.close();
  });

  it('sends basic auth and the impersonated user', async () => {
    const client = KubeClient.fromFile(
      kubeconfig({ username: 'bob', password: 'pw-123456', as: 'system:serviceaccount:shop:app' }),
    );
    const seen = await client.getJSON<Seen>('/api');
    expect(seen.authorization).toBe(`Basic ${Buffer.from('bob:pw-123456').toString('base64')}`);
    expect(seen.impersonate).toBe('system:serviceaccount:shop:app');
    client.close();
  });

  it('hands an auth-provider plugin to @kubernetes/client-node, loaded on first use', async () => {
    const client = KubeClient.fromFile(
      kubeconfig({
        'auth-provider': {
          name: 'azure',
          config: { 'access-token': 'azure-token-12345', expiry: '2999-01-01T00:00:00Z' },
        },
      }),
    );
    expect(client.describe().auth).toBe('auth-provider');
    await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ authorization: 'Bearer azure-token-12345' });
    client.close();
  });

  it('reads a token file again once a minute, as service-account tokens rotate', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const tokenFile = path.join(dir, 'token');
      fs.writeFileSync(tokenFile, 'first-token-1234\n');
      const client = KubeClient.fromFile(kubeconfig({ tokenFile: 'token' }));
      expect(client.describe().auth).toBe('token-file');
      await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ authorization: 'Bearer first-token-1234' });
      fs.writeFileSync(tokenFile, 'second-token-5678\n');
      await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ authorization: 'Bearer first-token-1234' });
      vi.advanceTimersByTime(61_000);
      await expect(client.getJSON<Seen>('/api')).resolves.toMatchObject({ authorization: 'Bearer second-token-5678' });
      client.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('rotated credentials are redacted as the first ones are', () => {
  it('replaces a secret learnt later whole, even when it contains a shorter one known before', () => {
    const r = new Redactor(['tok-1234']);
    r.add('tok-1234-renewed');
    r.add('abc');
    expect(r.redact('old tok-1234, new tok-1234-renewed, abc')).toBe('old [redacted], new [redacted], abc');
  });

  it('keeps a token read from a rotated token file out of errors', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    expectedToken = 'accepted-by-nobody';
    try {
      const tokenFile = path.join(dir, 'rotating-token');
      fs.writeFileSync(tokenFile, 'first-file-token-1234\n');
      const client = KubeClient.fromFile(kubeconfig({ tokenFile: 'rotating-token' }));
      const first = (await client.getJSON('/api').catch((x: unknown) => x)) as KubeRequestError;
      expect(first.message).toMatch(/: 401 Unauthorized: Bearer \[redacted\]$/);
      fs.writeFileSync(tokenFile, 'second-file-token-5678\n');
      vi.advanceTimersByTime(61_000);
      const second = (await client.getJSON('/api').catch((x: unknown) => x)) as KubeRequestError;
      expect(second).toBeInstanceOf(KubeRequestError);
      expect(second.message).toMatch(/: 401 Unauthorized: Bearer \[redacted\]$/);
      expect(second.message).not.toContain('second-file-token-5678');
      expect(client.redact('a log line quoting second-file-token-5678')).toBe('a log line quoting [redacted]');
      expect(client.redact('and first-file-token-1234 still')).toBe('and [redacted] still');
      client.close();
    } finally {
      expectedToken = undefined;
      vi.useRealTimers();
    }
  });

  it("keeps an exec plugin's tokens out of errors, the first and each renewed one", async () => {
    // The plugin prints the token written in a file, so that it can change between runs.
    const tokenFile = path.join(dir, 'exec-token');
    fs.writeFileSync(tokenFile, 'exec-first-token-1111');
    const plugin = path.join(dir, 'rotating-plugin.mjs');
    fs.writeFileSync(
      plugin,
      `import fs from 'node:fs';
const token = fs.readFileSync(${JSON.stringify(tokenFile)}, 'utf8');
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } }));
`,
    );
    expectedToken = 'accepted-by-nobody';
    try {
      const client = KubeClient.fromFile(kubeconfig({ exec: { command: process.execPath, args: [plugin] } }));
      const first = (await client.getJSON('/api').catch((x: unknown) => x)) as KubeRequestError;
      expect(first.message).toMatch(/: 401 Unauthorized: Bearer \[redacted\]$/);
      fs.writeFileSync(tokenFile, 'exec-second-token-2222');
      // The 401 made the plugin run again, for the renewed token.
      const second = (await client.getJSON('/api').catch((x: unknown) => x)) as KubeRequestError;
      expect(second).toBeInstanceOf(KubeRequestError);
      expect(second.message).toMatch(/: 401 Unauthorized: Bearer \[redacted\]$/);
      expect(`${first.message} ${second.message}`).not.toMatch(/exec-(first|second)-token/);
      expect(client.redact('exec-first-token-1111 exec-second-token-2222')).toBe('[redacted] [redacted]');
      client.close();
    } finally {
      expectedToken = undefined;
    }
  });
});

describe('exec credential plugins', () => {
  // The plugin prints a token taken from its environment and counts its runs in a file.
  const plugin = path.join(dir, 'plugin.mjs');
  const runs = path.join(dir, 'runs');
  beforeAll(() => {
    fs.writeFileSync(
      plugin,
      `import fs from 'node:fs';
fs.appendFileSync(${JSON.stringify(runs)}, JSON.parse(process.env.KUBERNETES_EXEC_INFO).kind + '\\n');
const mode = process.env.PLUGIN_MODE;
if (mode === 'fail') { console.error('login required: run sso-login first'); process.exit(1); }
if (mode === 'garbage') { console.log('token=' + process.env.PLUGIN_TOKEN); process.exit(0); }
if (mode === 'nostatus') { console.log(JSON.stringify({ kind: 'ExecCredential', status: { token: 42 } })); process.exit(0); }
if (mode === 'empty') { console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: {} })); process.exit(0); }
const status = { token: process.env.PLUGIN_TOKEN };
if (mode === 'expired') status.expirationTimestamp = '2000-01-01T00:00:00Z';
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
    );
  });
  const runCount = () => (fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0);
  const execUser = (env: Record<string, string>) => ({
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: [plugin],
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
    },
  });

  it('runs the plugin once, with KUBERNETES_EXEC_INFO, and keeps its token until the server answers 401', async () => {
    fs.rmSync(runs, { force: true });
    expectedToken = 'exec-token-abcdef';
    try {
      const client = KubeClient.fromFile(kubeconfig(execUser({ PLUGIN_TOKEN: 'exec-token-abcdef' })));
      expect(client.describe().auth).toBe('exec');
      const answers = await Promise.all([client.getJSON<Seen>('/api'), client.getJSON<Seen>('/apis')]);
      expect(answers.map((a) => a.authorization)).toEqual(['Bearer exec-token-abcdef', 'Bearer exec-token-abcdef']);
      await client.getJSON('/api');
      expect(fs.readFileSync(runs, 'utf8')).toBe('ExecCredential\n');
      expectedToken = 'rotated-token-999';
      const e = await client.getJSON('/api').catch((x: unknown) => x);
      expect((e as KubeRequestError).status).toBe(401);
      expect(runCount()).toBe(1);
      await client.getJSON('/api').catch(() => undefined);
      expect(runCount()).toBe(2);
      client.close();
    } finally {
      expectedToken = undefined;
    }
  });

  it('runs the plugin again once its credential expired', async () => {
    fs.rmSync(runs, { force: true });
    const client = KubeClient.fromFile(
      kubeconfig(execUser({ PLUGIN_TOKEN: 'short-lived-token', PLUGIN_MODE: 'expired' })),
    );
    await client.getJSON('/api');
    await client.getJSON('/api');
    expect(runCount()).toBe(2);
    client.close();
  });

  it('says why a plugin gave no credential, without quoting what it printed', async () => {
    const failing = KubeClient.fromFile(kubeconfig(execUser({ PLUGIN_MODE: 'fail' })));
    const e1 = (await failing.getJSON('/api').catch((x: unknown) => x)) as KubeRequestError;
    expect(e1).toBeInstanceOf(KubeRequestError);
    expect(e1.status).toBe(401);
    expect(e1.message).toMatch(/exec plugin ".*" of user u exited with 1: login required: run sso-login first/);

    const garbage = KubeClient.fromFile(
      kubeconfig(execUser({ PLUGIN_MODE: 'garbage', PLUGIN_TOKEN: 'leaky-token-1234' })),
    );
    const e2 = (await garbage.getJSON('/api').catch((x: unknown) => x)) as Error;
    expect(e2.message).toContain('printed no JSON: it must print an ExecCredential');
    expect(e2.message).not.toContain('leaky-token-1234');

    const empty = KubeClient.fromFile(kubeconfig(execUser({ PLUGIN_MODE: 'empty' })));
    expect(((await empty.getJSON('/api').catch((x: unknown) => x)) as Error).message).toContain(
      'neither status.token nor status.clientCertificateData',
    );

    const wrong = KubeClient.fromFile(kubeconfig(execUser({ PLUGIN_MODE: 'nostatus' })));
    expect(((await wrong.getJSON('/api').catch((x: unknown) => x)) as Error).message).toContain(
      'printed an ExecCredential that has a status.token that is not a string',
    );

    const missing = KubeClient.fromFile(kubeconfig({ exec: { command: 'no-such-credential-plugin' } }));
    expect(((await missing.getJSON('/api').catch((x: unknown) => x)) as Error).message).toContain(
      'exec plugin "no-such-credential-plugin" of user u cannot run (ENOENT): install it or fix users[].user.exec.command',
    );
  });
});
