import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefwatchError } from '@/lib/model';
import { KubeClient, KubeRequestError, SharedInformerPool, type ReflectorStatus } from '@/lib/kube';
import { FakeApiServer } from './fake-apiserver';
import { Recorder, until } from './helpers';

const TOKEN = 'sekret-token-7f3a9c1e5b';
const PASSWORD = 'hunter2-pass-word';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-kubeconfig-'));

function kubeconfig(overrides: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'dev', cluster: { server: 'https://127.0.0.1:6443' } },
      { name: 'prod', cluster: { server: 'https://127.0.0.1:7443' } },
    ],
    users: [
      { name: 'alice', user: { token: TOKEN } },
      { name: 'bob', user: { username: 'bob', password: PASSWORD } },
    ],
    contexts: [
      { name: 'dev', context: { cluster: 'dev', user: 'alice', namespace: 'shop' } },
      { name: 'prod', context: { cluster: 'prod', user: 'bob' } },
    ],
    'current-context': 'dev',
    ...overrides,
  };
}

function writeFile(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}

function caught(fn: () => unknown): RefwatchError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RefwatchError);
    return e as RefwatchError;
  }
  throw new Error('expected a RefwatchError');
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('KubeClient from a kubeconfig', () => {
  it('uses the current context, or the one asked for', () => {
    const file = writeFile('ok.json', JSON.stringify(kubeconfig()));
    expect(KubeClient.fromFile(file).describe()).toMatchObject({
      server: 'https://127.0.0.1:6443',
      context: 'dev',
      user: 'alice',
      namespace: 'shop',
      auth: 'token',
      source: file,
    });
    expect(KubeClient.fromFile(file, { context: 'prod' }).describe()).toMatchObject({
      server: 'https://127.0.0.1:7443',
      context: 'prod',
      auth: 'basic',
    });
  });

  it('reads YAML and resolves relative certificate paths against the file', async () => {
    const file = writeFile(
      'rel.yaml',
      [
        'clusters:',
        '- name: c',
        '  cluster:',
        '    server: https://127.0.0.1:9',
        '    certificate-authority: no-such-ca.crt',
        'users:',
        '- name: u',
        '  user: {token: abcdefgh}',
        'contexts:',
        '- name: x',
        '  context: {cluster: c, user: u}',
        'current-context: x',
      ].join('\n'),
    );
    const e = await KubeClient.fromFile(file)
      .getJSON('/api')
      .catch((x: unknown) => x);
    expect((e as Error).message).toContain(
      `certificate-authority ${path.join(dir, 'no-such-ca.crt')} cannot be read (ENOENT)`,
    );
  });

  it('names the file and the field of a malformed entry', () => {
    const cfg = kubeconfig();
    (cfg.contexts[1]!.context as Record<string, unknown>).cluster = 42;
    const file = writeFile('bad-type.json', JSON.stringify(cfg));
    const e = caught(() => KubeClient.fromFile(file));
    expect(e.field).toBe('contexts[1].context.cluster');
    expect(e.message).toContain(file);
    expect(e.message).toContain('contexts[1].context.cluster');
  });

  it('names a missing field', () => {
    const cfg = kubeconfig();
    delete (cfg.clusters[0]!.cluster as Record<string, unknown>).server;
    const e = caught(() => KubeClient.fromKubeconfig(cfg, { source: 'inline' }));
    expect(e.message).toBe('kubeconfig inline: clusters[0].cluster.server is missing');
  });

  it('rejects a server that is not an http(s) URL', () => {
    const cfg = kubeconfig({
      clusters: [
        { name: 'dev', cluster: { server: 'ftp://x' } },
        { name: 'prod', cluster: { server: 'https://a' } },
      ],
    });
    const e = caught(() => KubeClient.fromKubeconfig(cfg));
    expect(e.field).toBe('clusters[0].cluster.server');
    expect(e.message).toMatch(/http:\/\/ or https:\/\//);
  });

  it('names the field and what is wrong with it, for every field a client reads', () => {
    const cases: [(cfg: ReturnType<typeof kubeconfig>) => void, string][] = [
      [
        (c) => ((c.clusters[1]!.cluster as Record<string, unknown>)['insecure-skip-tls-verify'] = 'yes'),
        'clusters[1].cluster.insecure-skip-tls-verify is invalid: expected boolean, received string',
      ],
      [(c) => ((c.clusters[0] as Record<string, unknown>).name = ''), 'clusters[0].name must not be empty'],
      [
        (c) => ((c as Record<string, unknown>).contexts = { dev: {} }),
        'contexts is invalid: expected array, received object',
      ],
      [
        (c) => ((c.users[1]!.user as Record<string, unknown>).exec = { command: '' }),
        'users[1].user.exec.command must not be empty',
      ],
      [
        (c) => ((c.users[1]!.user as Record<string, unknown>).exec = { command: 'aws', args: ['eks', 7] }),
        'users[1].user.exec.args[1] is invalid: expected string, received number',
      ],
      [
        (c) =>
          ((c.users[0]!.user as Record<string, unknown>).exec = { command: 'aws', env: [{ name: 'AWS_PROFILE' }] }),
        'users[0].user.exec.env[0].value is missing',
      ],
      [
        (c) => ((c.users[0]!.user as Record<string, unknown>)['auth-provider'] = { config: {} }),
        'users[0].user.auth-provider.name is missing',
      ],
      [
        (c) => ((c as Record<string, unknown>)['current-context'] = 3),
        'current-context is invalid: expected string, received number',
      ],
    ];
    for (const [spoil, message] of cases) {
      const cfg = kubeconfig();
      spoil(cfg);
      expect(caught(() => KubeClient.fromKubeconfig(cfg, { source: 'k.yaml' })).message).toBe(
        `kubeconfig k.yaml: ${message}`,
      );
    }
    expect(caught(() => KubeClient.fromKubeconfig([], { source: 'k.yaml' })).message).toBe(
      'kubeconfig k.yaml: (root) is invalid: expected object, received array',
    );
  });

  it('passes fields it does not read, and users without a user block, as kubectl does', () => {
    const cfg = { ...kubeconfig(), preferences: { colors: true }, extensions: [] } as Record<string, unknown>;
    (cfg.users as { name: string; user?: unknown }[]).push({ name: 'nobody', user: null });
    (cfg.contexts as unknown[]).push({
      name: 'anon',
      context: { cluster: 'dev', user: 'nobody', extensions: [{ name: 'x' }] },
    });
    expect(KubeClient.fromKubeconfig(cfg, { context: 'anon' }).describe()).toMatchObject({
      context: 'anon',
      user: 'nobody',
      auth: 'none',
    });
  });

  it('names a context that points at a cluster that does not exist', () => {
    const cfg = kubeconfig();
    (cfg.contexts[1]!.context as Record<string, unknown>).cluster = 'staging';
    const e = caught(() => KubeClient.fromKubeconfig(cfg, { source: 'cfg.yaml' }));
    expect(e.field).toBe('contexts[1].context.cluster');
    expect(e.message).toContain('"staging"');
    expect(e.message).toContain('have: dev, prod');
  });

  it('lists the contexts that exist when asked for an unknown one', () => {
    const file = writeFile('ctx.json', JSON.stringify(kubeconfig()));
    const e = caught(() => KubeClient.fromFile(file, { context: 'qa' }));
    expect(e.code).toBe('UnknownContext');
    expect(e.message).toContain('"qa"');
    expect(e.message).toContain('dev, prod');
  });

  it('explains a missing file and invalid YAML without quoting the file', () => {
    expect(caught(() => KubeClient.fromFile(path.join(dir, 'absent'))).message).toMatch(/cannot be read \(ENOENT\)/);
    const file = writeFile('broken.yaml', `users:\n- name: a\n  user: {token: ${TOKEN}: x: y}\n  - [\n`);
    const e = caught(() => KubeClient.fromFile(file));
    expect(e.message).toMatch(/is not valid YAML at line \d+/);
    expect(e.message).not.toContain(TOKEN);
  });

  it('refuses in-cluster config outside a cluster, saying what is missing', () => {
    const saved = process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      expect(caught(() => KubeClient.inCluster()).message).toMatch(/KUBERNETES_SERVICE_HOST/);
    } finally {
      if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
    }
  });

  it('builds an in-cluster client from the service account files', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-sa-'));
    const sa = path.join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    fs.mkdirSync(sa, { recursive: true });
    fs.writeFileSync(path.join(sa, 'token'), TOKEN);
    fs.writeFileSync(path.join(sa, 'ca.crt'), 'ca');
    fs.writeFileSync(path.join(sa, 'namespace'), 'shop');
    const saved = { ...process.env };
    process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    try {
      const d = KubeClient.inCluster({ pathPrefix: root }).describe();
      expect(d).toMatchObject({
        server: 'https://10.0.0.1:443',
        source: 'in-cluster',
        namespace: 'shop',
        auth: 'token-file',
      });
      expect(JSON.stringify(d)).not.toContain(TOKEN);
    } finally {
      process.env.KUBERNETES_SERVICE_HOST = saved.KUBERNETES_SERVICE_HOST;
      process.env.KUBERNETES_SERVICE_PORT = saved.KUBERNETES_SERVICE_PORT;
      if (saved.KUBERNETES_SERVICE_HOST === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      if (saved.KUBERNETES_SERVICE_PORT === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('no credential leaves the client', () => {
  let server: FakeApiServer;
  beforeAll(async () => {
    server = await FakeApiServer.start();
  });
  afterAll(() => server.stop());

  it('describe() shows identity and server, never a token or password', () => {
    const cfg = kubeconfig({
      clusters: [
        { name: 'dev', cluster: { server: `https://u:${PASSWORD}@127.0.0.1:6443` } },
        { name: 'prod', cluster: { server: 'https://x' } },
      ],
    });
    const d = KubeClient.fromKubeconfig(cfg).describe();
    const text = JSON.stringify(d);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(PASSWORD);
    expect(d.server).toBe('https://[redacted]@127.0.0.1:6443');
  });

  it('no validation error quotes a credential, even a misplaced one', () => {
    const cfg = kubeconfig();
    (cfg.users[0]!.user as Record<string, unknown>).token = { value: TOKEN };
    const e = caught(() => KubeClient.fromKubeconfig(cfg));
    expect(e.field).toBe('users[0].user.token');
    expect(`${e.message} ${String(e.cause ?? '')}`).not.toContain(TOKEN);
  });

  it('sends the token, and keeps it out of a 401 error', async () => {
    server.token = TOKEN;
    const good = KubeClient.fromKubeconfig(server.kubeconfig(TOKEN));
    await expect(good.getJSON('/api')).resolves.toMatchObject({ versions: ['v1'] });
    expect(server.requests.at(-1)?.authorization).toBe(`Bearer ${TOKEN}`);
    const bad = KubeClient.fromKubeconfig(server.kubeconfig('wrong-token-abcdef'));
    const e = await bad.getJSON('/api').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KubeRequestError);
    expect((e as KubeRequestError).status).toBe(401);
    expect((e as Error).message).not.toContain('wrong-token-abcdef');
    server.token = undefined;
  });

  it('reports an unreachable server with its URL while retrying, and never the token, in errors or logs', async () => {
    const client = KubeClient.fromKubeconfig({
      clusters: [{ name: 'gone', cluster: { server: 'http://127.0.0.1:9' } }],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'u' } }],
      'current-context': 'gone',
    });
    const logged: string[] = [];
    const spy = { error: console.error, warn: console.warn, log: console.log };
    console.error = console.warn = console.log = (...args: unknown[]) => void logged.push(args.map(String).join(' '));
    const pool = new SharedInformerPool({ client, reflector: { backoff: { initialMs: 20, maxMs: 50 } } });
    const rec = new Recorder();
    try {
      const sub = pool.acquire({ group: '', kind: 'ConfigMap' }, rec.handler);
      // Two attempts failed; subscribers hear of the ongoing failure once.
      await until(() => ((sub.status() as ReflectorStatus).failures ?? 0) >= 2, 'two failed attempts');
      expect(rec.count('error')).toBe(1);
      const errors = rec.events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
      expect(errors[0]).toMatchObject({ reason: 'Unreachable' });
      expect(errors[0]!.message).toContain('http://127.0.0.1:9');
      expect(errors[0]!.message).toMatch(/\(ECONNREFUSED\); retrying in \d+ ms/);
      expect(errors[0]!.retryAt).toBeGreaterThan(errors[0]!.at);
      expect(sub.status()).toMatchObject({ phase: 'Backoff', primed: false });
      expect(JSON.stringify([rec.events, sub.status(), logged])).not.toContain(TOKEN);
    } finally {
      await pool.stop();
      Object.assign(console, spy);
    }
  });
});

describe('request deadlines', () => {
  it("times a silent server out, and stops on the caller's abort", async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/fast') res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      // Headers and half a body, then silence.
      else if (req.url === '/stall') res.writeHead(200, { 'Content-Type': 'application/json' }).write('{"ok":');
      // Any other path never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cfg = {
      clusters: [{ name: 'c', cluster: { server: url } }],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    };
    const client = KubeClient.fromKubeconfig(cfg, { requestTimeoutMs: 200 });
    // Only the silent requests are judged by the 200 ms deadline: on a loaded machine a quick answer may take longer.
    const patient = KubeClient.fromKubeconfig(cfg);
    try {
      await expect(patient.getJSON('/fast')).resolves.toEqual({ ok: true });
      const e = await client.getJSON('/silent').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(KubeRequestError);
      expect(e).toMatchObject({ reason: 'Timeout' });
      expect((e as Error).message).toBe(`${url}/silent: no answer within 200 ms`);
      // The deadline covers the body too.
      const stalled = await client.getJSON('/stall').catch((x: unknown) => x);
      expect(stalled).toMatchObject({ reason: 'Timeout', message: `${url}/stall: no answer within 200 ms` });
      const reading = new AbortController();
      const partial = client.getJSON('/stall', {}, reading.signal).catch((x: unknown) => x);
      await new Promise((r) => setTimeout(r, 50));
      reading.abort();
      expect(((await partial) as Error).name).toBe('AbortError');
      const caller = new AbortController();
      const pending = client.getJSON('/silent', {}, caller.signal).catch((x: unknown) => x);
      caller.abort();
      expect(((await pending) as Error).name).toBe('AbortError');
      // A caller signal already aborted stops the request before it is sent.
      expect(((await client.getJSON('/fast', {}, caller.signal).catch((x: unknown) => x)) as Error).name).toBe(
        'AbortError',
      );
      // A long-lived caller signal (a controller's) gets one listener, however many requests share it.
      // Twenty connections at once can take longer than 200 ms on a loaded machine: a patient client.
      const controller = new AbortController();
      await Promise.all(
        Array.from({ length: 20 }, () =>
          expect(patient.getJSON('/fast', {}, controller.signal)).resolves.toEqual({ ok: true }),
        ),
      );
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      // And it still aborts every request in flight under it.
      const inFlight = Array.from({ length: 3 }, () =>
        patient.getJSON('/silent', {}, controller.signal).catch((x: unknown) => x),
      );
      controller.abort();
      for (const e of await Promise.all(inFlight)) expect((e as Error).name).toBe('AbortError');
    } finally {
      client.close();
      patient.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** withServer runs a test against a loopback server that answers with serve, through a client of it. */
async function withServer(
  serve: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  run: (client: KubeClient, url: string) => Promise<void>,
): Promise<void> {
  const server = http.createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = KubeClient.fromKubeconfig({
    clusters: [{ name: 'c', cluster: { server: url } }],
    users: [{ name: 'u', user: { token: TOKEN } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
  try {
    await run(client, url);
  } finally {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('response bodies', () => {
  it('decodes a character split across chunks, and reports a body cut short as a broken connection', async () => {
    const euro = Buffer.from('{"name":"€ sign"}');
    await withServer(
      (req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(euro.length) });
        if (req.url === '/split') {
          // The euro sign's three bytes in two writes, a tick apart, so they arrive as two chunks.
          res.write(euro.subarray(0, 10));
          setTimeout(() => res.end(euro.subarray(10)), 20);
        } else {
          res.write(euro.subarray(0, 10));
          setTimeout(() => res.socket?.destroy(), 20);
        }
      },
      async (client, url) => {
        await expect(client.getJSON('/split')).resolves.toEqual({ name: '€ sign' });
        const e = await client.getJSON('/cut').catch((x: unknown) => x);
        expect(e).toBeInstanceOf(KubeRequestError);
        expect((e as Error).message).toMatch(
          new RegExp(`^cannot reach ${url} \\((ECONNRESET|aborted|ERR_STREAM_PREMATURE_CLOSE)\\)$`),
        );
      },
    );
  });
});

describe('watch streams', () => {
  // Lines split across chunks, a character split across chunks, blank lines and a last line without a newline.
  const CHUNKS = [
    '{"n":1}\n{"n"',
    ':2,"s":"',
    Buffer.from('€').subarray(0, 2),
    Buffer.from('€').subarray(2),
    '"}\n\n  \n',
    '{"n":3}',
  ];

  /** writeSlowly writes each chunk a tick apart, so that each arrives on its own, then ends or resets. */
  function writeSlowly(res: http.ServerResponse, chunks: (string | Buffer)[], then: 'end' | 'reset'): void {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    let i = 0;
    const next = () => {
      if (i < chunks.length) {
        res.write(chunks[i++]);
        setTimeout(next, 10);
      } else if (then === 'end') res.end();
      else res.socket?.destroy();
    };
    next();
  }

  it('hands each() the lines that lines() yields, one call each, as their chunks arrive', async () => {
    await withServer(
      (_req, res) => writeSlowly(res, CHUNKS, 'end'),
      async (client) => {
        const iterated: string[] = [];
        for await (const line of (await client.openStream('/w', {}, new AbortController().signal)).lines())
          iterated.push(line);
        const handed: string[] = [];
        const stream = await client.openStream('/w', {}, new AbortController().signal);
        await expect(stream.each!((line) => handed.push(line))).resolves.toBeUndefined();
        expect(iterated).toEqual(['{"n":1}', '{"n":2,"s":"€"}', '{"n":3}']);
        expect(handed).toEqual(iterated);
      },
    );
  });

  it('stops at the line whose handler throws, rejects with that error, and closes the response', async () => {
    let closed: Promise<void> | undefined;
    await withServer(
      (_req, res) => {
        closed = new Promise((resolve) => res.on('close', () => resolve()));
        // Every line in one chunk: the lines after the throw are already read, and must not be handed over.
        writeSlowly(res, ['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n'], 'end');
      },
      async (client) => {
        const handed: string[] = [];
        const boom = new Error('a faulty handler');
        const stream = await client.openStream('/w', {}, new AbortController().signal);
        const outcome = stream.each!((line) => {
          handed.push(line);
          if (handed.length === 2) throw boom;
        });
        await expect(outcome).rejects.toBe(boom);
        expect(handed).toEqual(['{"n":1}', '{"n":2}']);
        await closed;
      },
    );
  });

  it('rejects a reset as a broken connection, and an abort as an abort, after the lines that came', async () => {
    await withServer(
      (req, res) => writeSlowly(res, ['{"n":1}\n', '{"n":2}'], req.url === '/reset' ? 'reset' : 'end'),
      async (client, url) => {
        const handed: string[] = [];
        const reset = await client.openStream('/reset', {}, new AbortController().signal);
        const e = await reset.each!((line) => handed.push(line)).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(KubeRequestError);
        expect((e as Error).message).toMatch(
          new RegExp(`^cannot reach ${url} \\((ECONNRESET|aborted|ERR_STREAM_PREMATURE_CLOSE)\\)$`),
        );
        expect(handed).toEqual(['{"n":1}']);

        const stop = new AbortController();
        const aborted = await client.openStream('/slow', {}, stop.signal);
        const outcome = aborted.each!(() => stop.abort()).catch((x: unknown) => x);
        expect(await outcome).toMatchObject({ name: 'AbortError' });
      },
    );
  });
});

describe('throttling', () => {
  /** A server that answers 429 with the given Retry-After to the first `throttled` requests, then 200; it records when each came. */
  async function throttlingServer(throttled: number, retryAfter: string | undefined) {
    const arrivals: number[] = [];
    const srv = http.createServer((req, res) => {
      arrivals.push(Date.now());
      req.resume();
      res.setHeader('content-type', 'application/json');
      if (arrivals.length <= throttled) {
        if (retryAfter !== undefined) res.setHeader('retry-after', retryAfter);
        res
          .writeHead(429)
          .end(
            '{"kind":"Status","code":429,"reason":"TooManyRequests","message":"too many requests, please try again later"}',
          );
      } else {
        res.end('{"ok":true}');
      }
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const client = (opts: { throttleRetries?: number } = {}) =>
      KubeClient.fromKubeconfig(
        {
          clusters: [{ name: 'c', cluster: { server: url } }],
          users: [{ name: 'u', user: { token: TOKEN } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
          'current-context': 'x',
        },
        opts,
      );
    const stop = async () => {
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    };
    return { arrivals, client, stop };
  }

  it('sends a write again after the Retry-After of a 429, and returns its answer', async () => {
    const s = await throttlingServer(2, '1');
    const client = s.client();
    try {
      await expect(
        client.request('PATCH', '/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/apps/web/status', {
          body: { status: {} },
          contentType: 'application/merge-patch+json',
        }),
      ).resolves.toEqual({ ok: true });
      expect(s.arrivals).toHaveLength(3);
      expect(s.arrivals[1]! - s.arrivals[0]!).toBeGreaterThanOrEqual(990);
      expect(s.arrivals[2]! - s.arrivals[1]!).toBeGreaterThanOrEqual(990);
    } finally {
      client.close();
      await s.stop();
    }
  });

  it('throws the last 429 once its retries are spent, and a 429 without Retry-After at once', async () => {
    const spent = await throttlingServer(10, '0');
    const bare = await throttlingServer(10, undefined);
    const clients = [spent.client({ throttleRetries: 2 }), bare.client()];
    try {
      const e = await clients[0]!.getJSON('/api').catch((x: unknown) => x);
      expect(e).toMatchObject({ status: 429, retryAfterMs: 0 });
      expect(spent.arrivals).toHaveLength(3);
      await expect(clients[1]!.getJSON('/api')).rejects.toMatchObject({ status: 429, retryAfterMs: undefined });
      expect(bare.arrivals).toHaveLength(1);
    } finally {
      for (const c of clients) c.close();
      await spent.stop();
      await bare.stop();
    }
  });

  it('stops waiting out a Retry-After when the caller aborts', async () => {
    const s = await throttlingServer(1, '30');
    const client = s.client();
    const caller = new AbortController();
    try {
      const pending = client.getJSON('/api', {}, caller.signal).catch((x: unknown) => x);
      await until(() => s.arrivals.length === 1, 'the first request');
      caller.abort();
      expect(((await pending) as Error).name).toBe('AbortError');
      expect(s.arrivals).toHaveLength(1);
    } finally {
      client.close();
      await s.stop();
    }
  });

  it('names the option when throttleRetries is not a whole number', () => {
    expect(() => KubeClient.fromKubeconfig(kubeconfig(), { throttleRetries: -1 })).toThrow(/throttleRetries/);
  });
});

describe('connections', () => {
  it('reuses one keep-alive connection for successive requests, with the CA given as data', async () => {
    let connections = 0;
    const srv = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"versions":["v1"]}');
    });
    srv.on('connection', () => connections++);
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const server = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const client = KubeClient.fromKubeconfig({
      clusters: [
        {
          name: 'c',
          cluster: {
            server,
            'certificate-authority-data': Buffer.from('-----BEGIN CERTIFICATE-----\nnot checked over http\n').toString(
              'base64',
            ),
          },
        },
      ],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    });
    try {
      for (let i = 0; i < 3; i++) await expect(client.getJSON('/api')).resolves.toMatchObject({ versions: ['v1'] });
      expect(connections).toBe(1);
    } finally {
      client.close();
      srv.closeAllConnections();
      await new Promise((resolve) => srv.close(resolve));
    }
  });
});
