import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { RefwatchError } from '../model';
import { KubeRequestError, Redactor, isAbortError, parseRetryAfter } from './errors';

/*
 * Requests go through node:http/https with the options @kubernetes/client-node
 * derives from the kubeconfig (`applyToHTTPSOptions`: TLS material, bearer
 * token, exec and auth-provider plugins, basic auth). We stream watches
 * ourselves rather than through client-node's Watch: it drops the response
 * headers (Retry-After), swallows undecodable lines, and reports a failed
 * request as a bare status text.
 */

export type Query = Record<string, string | number | boolean | undefined>;

/** KubeTransport is what discovery and reflectors need from a client; KubeClient implements it. */
export interface KubeTransport {
  readonly server: string;
  /** getJSON GETs path and parses the body; non-2xx rejects with KubeRequestError. */
  getJSON<T = unknown>(path: string, query?: Query, signal?: AbortSignal): Promise<T>;
  /** openStream opens a watch; resolves once the server answered 200, rejects with KubeRequestError otherwise. */
  openStream(path: string, query: Query, signal: AbortSignal): Promise<WatchStream>;
}

/** WatchStream yields the newline-delimited JSON lines of one watch response. */
export interface WatchStream {
  /** Ends when the server closes the response cleanly; throws on a reset or abort. */
  lines(): AsyncIterable<string>;
}

export type AuthKind = 'token' | 'token-file' | 'client-certificate' | 'basic' | 'exec' | 'auth-provider' | 'none';

/** ClusterDescription says which cluster and identity a client uses, without any credential. */
export interface ClusterDescription {
  server: string;
  source: string;
  context: string;
  cluster: string;
  user: string;
  namespace?: string;
  auth: AuthKind;
  insecureSkipTLSVerify: boolean;
}

const nonEmpty = z.string().min(1, 'must not be empty');
const kubeconfigSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  clusters: z.array(
    z.looseObject({
      name: nonEmpty,
      cluster: z.looseObject({
        server: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL such as https://127.0.0.1:6443' }),
        'certificate-authority': z.string().optional(),
        'certificate-authority-data': z.string().optional(),
        'insecure-skip-tls-verify': z.boolean().optional(),
        'tls-server-name': z.string().optional(),
        'proxy-url': z.string().optional(),
      }),
    }),
  ),
  users: z
    .array(
      z.looseObject({
        name: nonEmpty,
        user: z
          .looseObject({
            token: z.string().optional(),
            tokenFile: z.string().optional(),
            'token-file': z.string().optional(),
            'client-certificate': z.string().optional(),
            'client-certificate-data': z.string().optional(),
            'client-key': z.string().optional(),
            'client-key-data': z.string().optional(),
            username: z.string().optional(),
            password: z.string().optional(),
            as: z.string().optional(),
            exec: z.looseObject({ command: nonEmpty }).optional(),
            'auth-provider': z.looseObject({ name: nonEmpty }).optional(),
          })
          .nullish(),
      }),
    )
    .default([]),
  contexts: z.array(
    z.looseObject({
      name: nonEmpty,
      context: z.looseObject({ cluster: nonEmpty, user: z.string().optional(), namespace: z.string().optional() }),
    }),
  ),
  'current-context': z.string().optional(),
});
type KubeconfigDoc = z.infer<typeof kubeconfigSchema>;

/** fieldPath formats a zod issue path the way kubectl users read it: `contexts[1].context.cluster`. */
function fieldPath(p: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of p) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? String(seg) : `.${String(seg)}`;
  return out || '(root)';
}

function invalid(source: string, field: string, problem: string): RefwatchError {
  return new RefwatchError('InvalidKubeconfig', `kubeconfig ${source}: ${field} ${problem}`, { field });
}

/** parseKubeconfig validates a kubeconfig document; the error names the source and the field, never a value. */
export function parseKubeconfig(doc: unknown, source: string): KubeconfigDoc {
  const r = kubeconfigSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const problem = issue.code === 'invalid_type' && issue.input === undefined ? 'is missing' : issue.message.replace(/^Invalid input: /, '');
    throw invalid(source, fieldPath(issue.path), problem.startsWith('must') || problem === 'is missing' ? problem : `is invalid: ${problem}`);
  }
  const cfg = r.data;
  const clusters = cfg.clusters.map((c) => c.name);
  const users = cfg.users.map((u) => u.name);
  cfg.contexts.forEach((c, i) => {
    if (!clusters.includes(c.context.cluster)) {
      throw invalid(source, `contexts[${i}].context.cluster`, `names cluster "${c.context.cluster}", which is not in clusters (have: ${clusters.join(', ') || 'none'})`);
    }
    if (c.context.user && !users.includes(c.context.user)) {
      throw invalid(source, `contexts[${i}].context.user`, `names user "${c.context.user}", which is not in users (have: ${users.join(', ') || 'none'})`);
    }
  });
  return cfg;
}

/** secretsOf lists every credential string in a kubeconfig, for redaction. */
function secretsOf(cfg: KubeconfigDoc): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const u of cfg.users) walk(u.user);
  return out;
}

function authKind(u: User | null): AuthKind {
  if (!u) return 'none';
  if (u.exec) return 'exec';
  if (u.authProvider) return u.authProvider.name === 'tokenFile' ? 'token-file' : 'auth-provider';
  if (u.token) return 'token';
  if (u.certData || u.certFile) return 'client-certificate';
  if (u.username) return 'basic';
  return 'none';
}

export interface ClientOptions {
  /** The context to use; default: the kubeconfig's current-context. */
  context?: string;
  /** Timeout of non-watch requests (default 60 s). */
  requestTimeoutMs?: number;
}

/**
 * KubeClient talks to one API server as one identity. Build it with fromFile,
 * fromKubeconfig or inCluster; every constructor validates its input and
 * throws a RefwatchError that names the file and field at fault.
 */
export class KubeClient implements KubeTransport {
  readonly server: string;
  readonly kubeConfig: KubeConfig;
  private readonly redactor: Redactor;
  private readonly description: ClusterDescription;
  private readonly requestTimeoutMs: number;
  private agent: { protocol: string; tls: AgentTls; agent: http.Agent } | undefined;

  private constructor(kc: KubeConfig, source: string, secrets: string[], opts: ClientOptions) {
    this.kubeConfig = kc;
    this.redactor = new Redactor(secrets);
    const ctx = kc.getContextObject(kc.getCurrentContext())!;
    const cluster = kc.getCurrentCluster()!;
    this.server = this.redactor.redact(cluster.server);
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.description = {
      server: this.server,
      source,
      context: ctx.name,
      cluster: cluster.name,
      user: ctx.user,
      auth: authKind(kc.getCurrentUser()),
      insecureSkipTLSVerify: cluster.skipTLSVerify && cluster.server.startsWith('https:'),
      ...(ctx.namespace ? { namespace: ctx.namespace } : {}),
    };
  }

  /** fromFile loads a kubeconfig file (YAML or JSON); relative paths in it resolve against its folder. */
  static fromFile(file: string, opts: ClientOptions = {}): KubeClient {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new RefwatchError('InvalidKubeconfig', `kubeconfig ${file} cannot be read (${code}): pass the path of a kubeconfig file`, { field: 'kubeconfig' });
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (e) {
      // The parser's own message quotes the offending line, which may hold a token: report the position only.
      const pos = e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
      throw new RefwatchError('InvalidKubeconfig', `kubeconfig ${file} is not valid YAML${pos}`, { field: 'kubeconfig' });
    }
    return KubeClient.fromKubeconfig(doc, { ...opts, source: file, baseDir: path.dirname(path.resolve(file)) });
  }

  /** fromKubeconfig builds a client from a parsed kubeconfig object. */
  static fromKubeconfig(doc: unknown, opts: ClientOptions & { source?: string; baseDir?: string } = {}): KubeClient {
    const source = opts.source ?? '(object)';
    const cfg = parseKubeconfig(doc, source);
    const names = cfg.contexts.map((c) => c.name);
    const name = opts.context ?? cfg['current-context'];
    if (!name) {
      throw new RefwatchError('UnknownContext', `kubeconfig ${source} has no current-context: choose a context (have: ${names.join(', ') || 'none'})`, { field: 'context' });
    }
    if (!names.includes(name)) {
      throw new RefwatchError('UnknownContext', `context "${name}" is not in kubeconfig ${source}: choose one of ${names.join(', ') || '(none defined)'}`, {
        field: opts.context ? 'context' : 'current-context',
      });
    }
    const abs = (p: string | undefined) => (p && opts.baseDir && !path.isAbsolute(p) ? path.join(opts.baseDir, p) : p);
    const clusters: Cluster[] = cfg.clusters.map((c) => ({
      name: c.name,
      server: c.cluster.server.replace(/\/$/, ''),
      caData: c.cluster['certificate-authority-data'],
      caFile: abs(c.cluster['certificate-authority']),
      // client-node refuses plain-HTTP servers unless TLS verification is off; over HTTP there is no TLS to verify.
      skipTLSVerify: c.cluster['insecure-skip-tls-verify'] === true || c.cluster.server.startsWith('http:'),
      tlsServerName: c.cluster['tls-server-name'],
      proxyUrl: c.cluster['proxy-url'],
    }));
    const secrets = secretsOf(cfg);
    const users: User[] = cfg.users.map((u, i) => {
      const x = u.user ?? {};
      const tokenFile = abs(x['token-file'] ?? x.tokenFile);
      let token = x.token;
      if (!token && tokenFile) {
        try {
          token = fs.readFileSync(tokenFile, 'utf8').trim();
          secrets.push(token);
        } catch {
          throw invalid(source, `users[${i}].user.token-file`, `cannot be read: ${tokenFile}`);
        }
      }
      return {
        name: u.name,
        token,
        certData: x['client-certificate-data'],
        certFile: abs(x['client-certificate']),
        keyData: x['client-key-data'],
        keyFile: abs(x['client-key']),
        username: x.username,
        password: x.password,
        impersonateUser: x.as,
        exec: x.exec,
        authProvider: x['auth-provider'],
      };
    });
    const contexts: Context[] = cfg.contexts.map((c) => ({
      name: c.name,
      cluster: c.context.cluster,
      user: c.context.user ?? '',
      ...(c.context.namespace ? { namespace: c.context.namespace } : {}),
    }));
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters, users, contexts, currentContext: name });
    return new KubeClient(kc, source, secrets, opts);
  }

  /** inCluster uses the pod's service account, as every controller running in a cluster does. */
  static inCluster(opts: Omit<ClientOptions, 'context'> & { pathPrefix?: string } = {}): KubeClient {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT;
    if (!host || !port) {
      throw new RefwatchError('NotInCluster', 'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset; pass a kubeconfig instead', {
        field: 'KUBERNETES_SERVICE_HOST',
      });
    }
    const tokenFile = `${opts.pathPrefix ?? ''}/var/run/secrets/kubernetes.io/serviceaccount/token`;
    let token: string;
    try {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } catch {
      throw new RefwatchError('NotInCluster', `service account token ${tokenFile} cannot be read: mount the service account token or pass a kubeconfig`, { field: 'serviceAccountToken' });
    }
    const kc = new KubeConfig();
    kc.loadFromCluster(opts.pathPrefix);
    return new KubeClient(kc, 'in-cluster', [token], opts);
  }

  /** describe says which cluster and identity this client uses; it holds no credential. */
  describe(): ClusterDescription {
    return { ...this.description };
  }

  /** redact removes this client's credentials from a text; every error it raises went through it. */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  url(p: string, query: Query = {}): URL {
    const u = new URL(this.kubeConfig.getCurrentCluster()!.server.replace(/\/$/, '') + p);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u;
  }

  async getJSON<T = unknown>(p: string, query: Query = {}, signal?: AbortSignal): Promise<T> {
    return (await this.request('GET', p, { query, signal })) as T;
  }

  /** request sends one request with a JSON body and returns the parsed JSON answer. */
  async request(method: string, p: string, opts: { query?: Query; body?: unknown; signal?: AbortSignal; contentType?: string } = {}): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const res = await this.send(method, this.url(p, opts.query), signal, opts.body, opts.contentType);
    const text = await readBody(res).catch((e: unknown) => {
      throw this.networkError(e, this.url(p, opts.query), signal);
    });
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new KubeRequestError(res.statusCode ?? 0, `${method} ${this.safeUrl(p)}: the server answered with a body that is not JSON`, { url: this.safeUrl(p) });
    }
  }

  async openStream(p: string, query: Query, signal: AbortSignal): Promise<WatchStream> {
    const url = this.url(p, query);
    const res = await this.send('GET', url, signal);
    return { lines: () => ndjsonLines(res, (e) => this.networkError(e, url, signal)) };
  }

  /** close drops the client's idle keep-alive connections; requests in flight are not affected. */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }

  /**
   * agentFor reuses one keep-alive agent per set of TLS settings: client-node
   * builds a fresh agent per request, which costs a connection (and a TLS
   * handshake) for every list page and write.
   */
  private agentFor(url: URL, opts: https.RequestOptions): http.Agent | undefined {
    if (this.kubeConfig.getCurrentCluster()?.proxyUrl) return opts.agent as http.Agent | undefined;
    const tls: AgentTls = { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername };
    // Compared field by field on every request: serializing the PEM material for a key cost more than the request's own work.
    if (this.agent?.protocol !== url.protocol || !sameTls(this.agent.tls, tls)) {
      this.agent?.agent.destroy();
      const agent = url.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true, ...tls });
      this.agent = { protocol: url.protocol, tls, agent };
    }
    return this.agent.agent;
  }

  private safeUrl(p: string): string {
    return this.redact(this.server + p);
  }

  /** send resolves with a 2xx response whose body is still unread; anything else rejects with KubeRequestError. */
  private async send(method: string, url: URL, signal: AbortSignal, body?: unknown, contentType = 'application/json'): Promise<http.IncomingMessage> {
    const opts: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
    try {
      await this.kubeConfig.applyToHTTPSOptions(opts);
    } catch (e) {
      throw new KubeRequestError(401, `cannot build credentials for ${this.server}: ${this.redact(e instanceof Error ? e.message : String(e))}`, {
        url: this.server,
        reason: 'Unauthorized',
      });
    }
    opts.agent = this.agentFor(url, opts);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== undefined) opts.headers = { ...opts.headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) };
    const mod = url.protocol === 'http:' ? http : https;
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = mod.request(url, { ...opts, signal }, resolve);
      req.on('error', (e) => reject(this.networkError(e, url, signal)));
      req.end(payload);
    });
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return res;
    const text = await readBody(res).catch(() => '');
    let message = res.statusMessage || http.STATUS_CODES[status] || 'error';
    let reason: string | undefined;
    try {
      const st = JSON.parse(text) as { message?: string; reason?: string };
      if (st.message) message = st.message;
      reason = st.reason;
    } catch {
      // Not a Status object: keep the HTTP status text.
    }
    const where = `${method} ${this.redact(url.origin + url.pathname)}`;
    throw new KubeRequestError(status, `${where}: ${status} ${this.redact(message)}`, {
      url: this.redact(url.toString()),
      reason,
      retryAfterMs: parseRetryAfter(res.headers['retry-after']),
    });
  }

  private networkError(e: unknown, url: URL, signal: AbortSignal): Error {
    if (signal.aborted || isAbortError(e)) {
      const reason: unknown = signal.reason;
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        return new KubeRequestError(0, `${this.redact(url.origin + url.pathname)}: no answer within ${this.requestTimeoutMs} ms`, { url: this.server, reason: 'Timeout' });
      }
      return reason instanceof Error && reason.name === 'AbortError' ? reason : new DOMException('The operation was aborted', 'AbortError');
    }
    const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
    return new KubeRequestError(0, `cannot reach ${this.server} (${this.redact(code)})`, { url: this.server, reason: code });
  }
}

/** AgentTls is the TLS material a keep-alive agent is bound to. */
type AgentTls = Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

function sameTls(a: AgentTls, b: AgentTls): boolean {
  return a.rejectUnauthorized === b.rejectUnauthorized && a.servername === b.servername && samePem(a.ca, b.ca) && samePem(a.cert, b.cert) && samePem(a.key, b.key);
}

/** samePem compares PEM material given as strings, Buffers or lists of them (credential plugins hand out new Buffers). */
function samePem(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => samePem(x, b[i]));
  return false;
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let out = '';
  for await (const chunk of res) out += chunk as string;
  return out;
}

/** ndjsonLines splits a response into its non-empty lines. */
async function* ndjsonLines(res: http.IncomingMessage, wrap: (e: unknown) => Error): AsyncGenerator<string> {
  res.setEncoding('utf8');
  let rest = '';
  try {
    for await (const chunk of res) {
      const text = rest + (chunk as string);
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== '') yield line;
      }
      rest = text.slice(start);
    }
  } catch (e) {
    throw wrap(e);
  } finally {
    if (!res.complete) res.destroy();
  }
  if (rest.trim() !== '') yield rest;
}
