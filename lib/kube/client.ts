import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { RefwatchError } from '../model';
import { sleep } from './backoff';
import {
  credentialsFor,
  type ClusterConnection,
  type Credentials,
  type ExecConfig,
  type UserCredentials,
} from './credentials';
import { KubeRequestError, Redactor, isAbortError, parseRetryAfter } from './errors';

/*
 * Requests go through node:http/https with the TLS material and identity that
 * Credentials derive from the kubeconfig (./credentials). We stream watches
 * ourselves rather than through @kubernetes/client-node's Watch: it drops the
 * response headers (Retry-After), swallows undecodable lines, and reports a
 * failed request as a bare status text.
 */

/** The longest wait a Retry-After can impose on one retry of a throttled request. */
const MAX_THROTTLE_WAIT_MS = 30_000;

export type Query = Record<string, string | number | boolean | undefined>;

/** ReadOptions qualify one read: the representation asked for (an Accept header; default application/json). */
export interface ReadOptions {
  accept?: string;
}

/** KubeTransport is what discovery and reflectors need from a client; KubeClient implements it. */
export interface KubeTransport {
  readonly server: string;
  /** getJSON GETs path and parses the body; non-2xx rejects with KubeRequestError. */
  getJSON<T = unknown>(path: string, query?: Query, signal?: AbortSignal, opts?: ReadOptions): Promise<T>;
  /** openStream opens a watch; resolves once the server answered 200, rejects with KubeRequestError otherwise. */
  openStream(path: string, query: Query, signal: AbortSignal, opts?: ReadOptions): Promise<WatchStream>;
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

/*
 * The kubeconfig is checked by hand rather than with a zod schema: it is the
 * only schema a controller process needs at run time, and zod costs some
 * 12 MB of resident memory once loaded. Unknown fields pass, as in kubectl.
 */
interface KubeconfigCluster {
  server: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}
interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  'token-file'?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  as?: string;
  exec?: ExecConfig;
  'auth-provider'?: { name: string; config?: Record<string, unknown> };
}
export interface KubeconfigDoc {
  apiVersion?: string;
  kind?: string;
  clusters: { name: string; cluster: KubeconfigCluster }[];
  users: { name: string; user?: KubeconfigUser | null }[];
  contexts: { name: string; context: { cluster: string; user?: string; namespace?: string } }[];
  'current-context'?: string;
}

/** KubeconfigField is a field that failed its check, with what is wrong, in kubectl users' words. */
class KubeconfigField extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}`);
  }
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
type Check = (v: unknown, at: string) => void;
const fail = (at: string, problem: string): never => {
  throw new KubeconfigField(at || '(root)', problem);
};
const typed =
  (type: 'string' | 'boolean' | 'object' | 'array'): Check =>
  (v, at) => {
    if (v === undefined) fail(at, 'is missing');
    if (kindOf(v) !== type) fail(at, `is invalid: expected ${type}, received ${kindOf(v)}`);
  };
const nonEmpty: Check = (v, at) => {
  typed('string')(v, at);
  if (v === '') fail(at, 'must not be empty');
};
const optional =
  (check: Check): Check =>
  (v, at) => {
    if (v !== undefined) check(v, at);
  };
const serverUrl: Check = (v, at) => {
  typed('string')(v, at);
  if (!/^https?:\/\/[^/\s]/.test(v as string) || !URL.canParse(v as string))
    fail(at, 'must be an http:// or https:// URL such as https://127.0.0.1:6443');
};
/** fields checks the listed fields of an object; others pass unchecked. */
const fields =
  (spec: Record<string, Check>): Check =>
  (v, at) => {
    typed('object')(v, at);
    for (const [k, check] of Object.entries(spec)) check((v as Record<string, unknown>)[k], at ? `${at}.${k}` : k);
  };
const list =
  (item: Check): Check =>
  (v, at) => {
    typed('array')(v, at);
    (v as unknown[]).forEach((x, i) => item(x, `${at}[${i}]`));
  };
const str = optional(typed('string'));
const checkKubeconfig = fields({
  apiVersion: str,
  kind: str,
  clusters: list(
    fields({
      name: nonEmpty,
      cluster: fields({
        server: serverUrl,
        'certificate-authority': str,
        'certificate-authority-data': str,
        'insecure-skip-tls-verify': optional(typed('boolean')),
        'tls-server-name': str,
        'proxy-url': str,
      }),
    }),
  ),
  users: optional(
    list(
      fields({
        name: nonEmpty,
        user: (v, at) => {
          if (v === undefined || v === null) return;
          fields({
            token: str,
            tokenFile: str,
            'token-file': str,
            'client-certificate': str,
            'client-certificate-data': str,
            'client-key': str,
            'client-key-data': str,
            username: str,
            password: str,
            as: str,
            exec: optional(
              fields({
                command: nonEmpty,
                args: optional(list(typed('string'))),
                env: optional(
                  (e, eat) => e !== null && list(fields({ name: nonEmpty, value: typed('string') }))(e, eat),
                ),
                apiVersion: str,
              }),
            ),
            'auth-provider': optional(fields({ name: nonEmpty, config: optional(typed('object')) })),
          })(v, at);
        },
      }),
    ),
  ),
  contexts: list(fields({ name: nonEmpty, context: fields({ cluster: nonEmpty, user: str, namespace: str }) })),
  'current-context': str,
});

function invalid(source: string, field: string, problem: string): RefwatchError {
  return new RefwatchError('InvalidKubeconfig', `kubeconfig ${source}: ${field} ${problem}`, { field });
}

/** parseKubeconfig validates a kubeconfig document; the error names the source and the field, never a value. */
export function parseKubeconfig(doc: unknown, source: string): KubeconfigDoc {
  try {
    checkKubeconfig(doc, '');
  } catch (e) {
    if (e instanceof KubeconfigField) throw invalid(source, e.path, e.problem);
    throw e;
  }
  const cfg = { ...(doc as KubeconfigDoc) };
  cfg.users ??= [];
  const clusters = cfg.clusters.map((c) => c.name);
  const users = cfg.users.map((u) => u.name);
  cfg.contexts.forEach((c, i) => {
    if (!clusters.includes(c.context.cluster)) {
      throw invalid(
        source,
        `contexts[${i}].context.cluster`,
        `names cluster "${c.context.cluster}", which is not in clusters (have: ${clusters.join(', ') || 'none'})`,
      );
    }
    if (c.context.user && !users.includes(c.context.user)) {
      throw invalid(
        source,
        `contexts[${i}].context.user`,
        `names user "${c.context.user}", which is not in users (have: ${users.join(', ') || 'none'})`,
      );
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
  // An exec plugin's command is no secret, and errors name it so that one can fix it.
  const commands = new Set(cfg.users.map((u) => u.user?.exec?.command));
  return out.filter((s) => !commands.has(s));
}

function authKind(u: UserCredentials): AuthKind {
  if (u.exec) return 'exec';
  if (u.authProvider) return 'auth-provider';
  if (u.token) return 'token';
  if (u.tokenFile) return 'token-file';
  if (u.certData || u.certFile) return 'client-certificate';
  if (u.username) return 'basic';
  return 'none';
}

export interface ClientOptions {
  /** The context to use; default: the kubeconfig's current-context. */
  context?: string;
  /** Timeout of non-watch requests (default 60 s). */
  requestTimeoutMs?: number;
  /**
   * How long a watch may wait for its response headers (default 30 s), as
   * client-go's request timeout bounds a watch's open. A watch held in API
   * Priority and Fairness queueing or sent on a half-open connection then
   * fails with a KubeRequestError (reason `Timeout`), which its reflector
   * retries with backoff. Once the headers arrived, the reflector's
   * inactivity watchdog guards the stream instead.
   */
  watchOpenTimeoutMs?: number;
  /**
   * How many times a non-watch request answered 429 with Retry-After is sent
   * again, each after the wait the server asked for (capped at 30 s), as
   * client-go does (default 10; 0 never). The last 429 is thrown. Watches are
   * not retried here: their reflector backs off, with Retry-After as a floor.
   */
  throttleRetries?: number;
}

/**
 * KubeClient talks to one API server as one identity. Build it with fromFile,
 * fromKubeconfig or inCluster; every constructor validates its input and
 * throws a RefwatchError that names the file and field at fault.
 */
export class KubeClient implements KubeTransport {
  readonly server: string;
  private readonly cluster: ClusterConnection;
  private readonly credentials: Credentials;
  private readonly redactor: Redactor;
  private readonly description: ClusterDescription;
  private readonly requestTimeoutMs: number;
  private readonly watchOpenTimeoutMs: number;
  private readonly throttleRetries: number;
  private agent: { protocol: string; tls: AgentTls; agent: http.Agent } | undefined;

  private constructor(
    conn: { cluster: ClusterConnection; user: UserCredentials; context: string; namespace?: string },
    source: string,
    secrets: string[],
    opts: ClientOptions,
  ) {
    const { cluster, user } = conn;
    this.cluster = cluster;
    this.redactor = new Redactor(secrets);
    this.credentials = credentialsFor(cluster, user, (secret) => this.redactor.add(secret));
    this.server = this.redactor.redact(cluster.server);
    this.requestTimeoutMs = timeoutOption('requestTimeoutMs', opts.requestTimeoutMs, 60_000);
    this.watchOpenTimeoutMs = timeoutOption('watchOpenTimeoutMs', opts.watchOpenTimeoutMs, 30_000);
    this.throttleRetries = opts.throttleRetries ?? 10;
    if (!Number.isInteger(this.throttleRetries) || this.throttleRetries < 0) {
      throw new RefwatchError(
        'InvalidOption',
        `throttleRetries must be a whole number from 0 up, got ${opts.throttleRetries}`,
        { field: 'throttleRetries', example: 'throttleRetries: 10' },
      );
    }
    this.description = {
      server: this.server,
      source,
      context: conn.context,
      cluster: cluster.name,
      user: user.name,
      auth: authKind(user),
      insecureSkipTLSVerify: cluster.skipTLSVerify && cluster.server.startsWith('https:'),
      ...(conn.namespace ? { namespace: conn.namespace } : {}),
    };
  }

  /** fromFile loads a kubeconfig file (YAML or JSON); relative paths in it resolve against its folder. */
  static fromFile(file: string, opts: ClientOptions = {}): KubeClient {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new RefwatchError(
        'InvalidKubeconfig',
        `kubeconfig ${file} cannot be read (${code}): pass the path of a kubeconfig file`,
        { field: 'kubeconfig' },
      );
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (e) {
      // The parser's own message quotes the offending line, which may hold a token: report the position only.
      const pos =
        e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
      throw new RefwatchError('InvalidKubeconfig', `kubeconfig ${file} is not valid YAML${pos}`, {
        field: 'kubeconfig',
      });
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
      throw new RefwatchError(
        'UnknownContext',
        `kubeconfig ${source} has no current-context: choose a context (have: ${names.join(', ') || 'none'})`,
        { field: 'context' },
      );
    }
    if (!names.includes(name)) {
      throw new RefwatchError(
        'UnknownContext',
        `context "${name}" is not in kubeconfig ${source}: choose one of ${names.join(', ') || '(none defined)'}`,
        {
          field: opts.context ? 'context' : 'current-context',
        },
      );
    }
    // turbopackIgnore: a kubeconfig's own paths are runtime data; without it the build traces the whole project into the standalone output.
    const abs = (p: string | undefined) =>
      p && opts.baseDir && !path.isAbsolute(p) ? path.join(/*turbopackIgnore: true*/ opts.baseDir, p) : p;
    const ctx = cfg.contexts.find((c) => c.name === name)!.context;
    const c = cfg.clusters.find((x) => x.name === ctx.cluster)!;
    const cluster: ClusterConnection = {
      name: c.name,
      server: c.cluster.server.replace(/\/$/, ''),
      caData: c.cluster['certificate-authority-data'],
      caFile: abs(c.cluster['certificate-authority']),
      skipTLSVerify: c.cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: c.cluster['tls-server-name'],
      proxyUrl: c.cluster['proxy-url'],
    };
    const secrets = secretsOf(cfg);
    const i = cfg.users.findIndex((u) => u.name === ctx.user);
    const x = cfg.users[i]?.user ?? {};
    const tokenFile = x.token ? undefined : abs(x['token-file'] ?? x.tokenFile);
    if (tokenFile) {
      // Read now so that a wrong path fails here, naming the field; requests read it again as it rotates.
      try {
        secrets.push(fs.readFileSync(tokenFile, 'utf8').trim());
      } catch {
        throw invalid(source, `users[${i}].user.token-file`, `cannot be read: ${tokenFile}`);
      }
    }
    const user: UserCredentials = {
      name: ctx.user ?? '',
      token: x.token,
      tokenFile,
      certData: x['client-certificate-data'],
      certFile: abs(x['client-certificate']),
      keyData: x['client-key-data'],
      keyFile: abs(x['client-key']),
      username: x.username,
      password: x.password,
      impersonate: x.as,
      exec: x.exec,
      authProvider: x['auth-provider'],
    };
    return new KubeClient({ cluster, user, context: name, namespace: ctx.namespace }, source, secrets, opts);
  }

  /** inCluster uses the pod's service account, as every controller running in a cluster does. */
  static inCluster(opts: Omit<ClientOptions, 'context'> & { pathPrefix?: string } = {}): KubeClient {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT;
    if (!host || !port) {
      throw new RefwatchError(
        'NotInCluster',
        'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset; pass a kubeconfig instead',
        {
          field: 'KUBERNETES_SERVICE_HOST',
        },
      );
    }
    const dir = `${opts.pathPrefix ?? ''}/var/run/secrets/kubernetes.io/serviceaccount`;
    const tokenFile = `${dir}/token`;
    let token: string;
    try {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } catch {
      throw new RefwatchError(
        'NotInCluster',
        `service account token ${tokenFile} cannot be read: mount the service account token or pass a kubeconfig`,
        { field: 'serviceAccountToken' },
      );
    }
    let namespace: string | undefined;
    try {
      namespace = fs.readFileSync(`${dir}/namespace`, 'utf8').trim() || undefined;
    } catch {
      // No namespace file: the client has no default namespace, as with a kubeconfig context without one.
    }
    const cluster: ClusterConnection = {
      name: 'inCluster',
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      caFile: `${dir}/ca.crt`,
      skipTLSVerify: false,
    };
    const user: UserCredentials = { name: 'inClusterUser', tokenFile };
    return new KubeClient({ cluster, user, context: 'inClusterContext', namespace }, 'in-cluster', [token], opts);
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
    const u = new URL(this.cluster.server + p);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u;
  }

  async getJSON<T = unknown>(p: string, query: Query = {}, signal?: AbortSignal, opts: ReadOptions = {}): Promise<T> {
    return (await this.request('GET', p, { query, signal, accept: opts.accept })) as T;
  }

  /** request sends one request with a JSON body and returns the parsed JSON answer; a 429 with Retry-After is sent again after the wait asked for (see throttleRetries). */
  async request(
    method: string,
    p: string,
    opts: { query?: Query; body?: unknown; signal?: AbortSignal; contentType?: string; accept?: string } = {},
  ): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce(method, p, opts);
      } catch (e) {
        // APF and other throttles answer 429 before doing anything: sending the same request again is safe.
        if (
          !(e instanceof KubeRequestError && e.status === 429 && e.retryAfterMs !== undefined) ||
          attempt >= this.throttleRetries
        )
          throw e;
        await sleep(Math.min(e.retryAfterMs, MAX_THROTTLE_WAIT_MS), opts.signal);
      }
    }
  }

  private async requestOnce(
    method: string,
    p: string,
    opts: { query?: Query; body?: unknown; signal?: AbortSignal; contentType?: string; accept?: string },
  ): Promise<unknown> {
    // The deadline's timer ends with the answer: AbortSignal.timeout would hold one, and what it
    // references, for the whole timeout after every request. The caller's signal aborts it through
    // follow: AbortSignal.any would tie each request to a caller's long-lived signal (a
    // controller's) by weak references, which keep it through every minor GC.
    const deadline = new AbortController();
    const signal = deadline.signal;
    const timer = setTimeout(
      () => deadline.abort(new DOMException(`no answer within ${this.requestTimeoutMs} ms`, 'TimeoutError')),
      this.requestTimeoutMs,
    );
    const unfollow = opts.signal ? follow(opts.signal, deadline) : undefined;
    let text: string;
    let res: http.IncomingMessage;
    try {
      res = await this.send(method, this.url(p, opts.query), signal, {
        body: opts.body,
        contentType: opts.contentType,
        accept: opts.accept,
      });
      text = await readBody(res).catch((e: unknown) => {
        throw this.networkError(e, this.url(p, opts.query), signal);
      });
    } finally {
      clearTimeout(timer);
      unfollow?.();
    }
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new KubeRequestError(
        res.statusCode ?? 0,
        `${method} ${this.safeUrl(p)}: the server answered with a body that is not JSON`,
        { url: this.safeUrl(p) },
      );
    }
  }

  async openStream(p: string, query: Query, signal: AbortSignal, opts: ReadOptions = {}): Promise<WatchStream> {
    const url = this.url(p, query);
    const res = await this.send('GET', url, signal, { accept: opts.accept, headersTimeoutMs: this.watchOpenTimeoutMs });
    return { lines: () => ndjsonLines(res, (e) => this.networkError(e, url, signal)) };
  }

  /** close drops the client's idle keep-alive connections; requests in flight are not affected. */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }

  /**
   * agentFor reuses one keep-alive agent per set of TLS settings, so list
   * pages and writes share connections (and TLS handshakes). A proxy's agent
   * comes from client-node.
   */
  private agentFor(url: URL, opts: https.RequestOptions): http.Agent | undefined {
    if (this.cluster.proxyUrl) return opts.agent as http.Agent | undefined;
    const tls: AgentTls = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    };
    // Compared field by field on every request: serializing the PEM material for a key cost more than the request's own work.
    if (this.agent?.protocol !== url.protocol || !sameTls(this.agent.tls, tls)) {
      this.agent?.agent.destroy();
      const agent =
        url.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true, ...tls });
      this.agent = { protocol: url.protocol, tls, agent };
    }
    return this.agent.agent;
  }

  private safeUrl(p: string): string {
    return this.redact(this.server + p);
  }

  /**
   * send resolves with a 2xx response whose body is still unread; anything
   * else rejects with KubeRequestError. With headersTimeoutMs, a 2xx must
   * arrive within it, and an error answer be read whole within it.
   */
  private async send(
    method: string,
    url: URL,
    signal: AbortSignal,
    msg: { body?: unknown; contentType?: string; accept?: string; headersTimeoutMs?: number } = {},
  ): Promise<http.IncomingMessage> {
    const { body, contentType = 'application/json', accept = 'application/json' } = msg;
    const opts: https.RequestOptions = { method, headers: { Accept: accept } };
    try {
      await this.credentials.apply(opts);
    } catch (e) {
      throw new KubeRequestError(
        401,
        `cannot build credentials for ${this.server}: ${this.redact(e instanceof Error ? e.message : String(e))}`,
        {
          url: this.server,
          reason: 'Unauthorized',
        },
      );
    }
    opts.agent = this.agentFor(url, opts);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== undefined)
      opts.headers = { ...opts.headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) };
    const mod = url.protocol === 'http:' ? http : https;
    let deadline: NodeJS.Timeout | undefined;
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = mod.request(url, { ...opts, signal }, resolve);
      req.on('error', (e) => reject(this.networkError(e, url, signal)));
      if (msg.headersTimeoutMs !== undefined) {
        // Destroying the request closes its socket too: a half-open connection is not reused.
        const ms = msg.headersTimeoutMs;
        deadline = setTimeout(() => req.destroy(new HeadersTimeout(ms)), ms);
      }
      req.end(payload);
    }).catch((e: unknown) => {
      clearTimeout(deadline);
      throw e;
    });
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      clearTimeout(deadline);
      return res;
    }
    if (status === 401) this.credentials.rejected();
    const text = await readBody(res)
      .catch(() => '')
      .finally(() => clearTimeout(deadline));
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
    if (e instanceof HeadersTimeout && !signal.aborted) {
      return new KubeRequestError(
        0,
        `${this.redact(url.origin + url.pathname)}: no response headers within ${e.ms} ms (the request may be queued by the API server's priority and fairness, or its connection half-open)`,
        { url: this.server, reason: 'Timeout' },
      );
    }
    if (signal.aborted || isAbortError(e)) {
      const reason: unknown = signal.reason;
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        return new KubeRequestError(
          0,
          `${this.redact(url.origin + url.pathname)}: no answer within ${this.requestTimeoutMs} ms`,
          { url: this.server, reason: 'Timeout' },
        );
      }
      return reason instanceof Error && reason.name === 'AbortError'
        ? reason
        : new DOMException('The operation was aborted', 'AbortError');
    }
    const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
    return new KubeRequestError(0, `cannot reach ${this.server} (${this.redact(code)})`, {
      url: this.server,
      reason: code,
    });
  }
}

/** HeadersTimeout ends a request whose response headers did not come in time. */
class HeadersTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no response headers within ${ms} ms`);
    this.name = 'HeadersTimeout';
  }
}

/** timeoutOption checks a client option given in milliseconds. */
function timeoutOption(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RefwatchError(
      'InvalidOption',
      `${field} must be a number of milliseconds above 0, got ${String(value)}`,
      { field, example: `${field}: ${fallback}` },
    );
  }
  return value;
}

/** The requests in flight under each caller signal, all aborted by the one listener it gets. */
const inFlightUnder = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * follow makes the caller's signal abort a request's own controller until the
 * returned function is called. However many requests share the signal (a
 * controller's workers), it gets a single listener.
 */
function follow(caller: AbortSignal, request: AbortController): () => void {
  if (caller.aborted) {
    request.abort(caller.reason);
    return () => undefined;
  }
  let requests = inFlightUnder.get(caller);
  if (!requests) {
    const set = new Set<AbortController>();
    requests = set;
    inFlightUnder.set(caller, set);
    caller.addEventListener(
      'abort',
      () => {
        for (const r of set) r.abort(caller.reason);
        set.clear();
      },
      { once: true },
    );
  }
  const set = requests;
  set.add(request);
  return () => void set.delete(request);
}

/** AgentTls is the TLS material a keep-alive agent is bound to. */
type AgentTls = Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

function sameTls(a: AgentTls, b: AgentTls): boolean {
  return (
    a.rejectUnauthorized === b.rejectUnauthorized &&
    a.servername === b.servername &&
    samePem(a.ca, b.ca) &&
    samePem(a.cert, b.cert) &&
    samePem(a.key, b.key)
  );
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
