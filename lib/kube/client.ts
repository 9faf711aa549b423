import http from 'node:http';
import https from 'node:https';
import { createSecureContext } from 'node:tls';
import path from 'node:path';
import { RefwatchError } from '../model';
import { sleep } from './backoff';
import {
  credentialsFor,
  type ClusterConnection,
  type Connection,
  type Credentials,
  type UserCredentials,
} from './credentials';
import { KubeRequestError, Redactor, isAbortError, parseRetryAfter } from './errors';
import { eachNdjsonLine, ndjsonLines } from './framing';
import { inClusterConnection } from './in-cluster';
import { kubeconfigConnection, readKubeconfigFile } from './kubeconfig';
import {
  Deadlines,
  HeadersTimeout,
  RequestCancel,
  follow,
  readBody,
  sameTls,
  type AgentTls,
  type Cancellation,
  type KubeTransport,
  type Query,
  type ReadOptions,
  type WatchStream,
} from './transport';

// KubeClient is the transport most callers hold: its types are importable from here too.
export type { KubeTransport, Query, ReadOptions, WatchStream } from './transport';

/*
 * Requests go through node:http/https with the TLS material and identity that
 * Credentials derive from the kubeconfig (./credentials). We stream watches
 * ourselves rather than through @kubernetes/client-node's Watch: it drops the
 * response headers (Retry-After), swallows undecodable lines, and reports a
 * failed request as a bare status text.
 */

/** The longest wait a Retry-After can impose on one retry of a throttled request. */
const MAX_THROTTLE_WAIT_MS = 30_000;

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
  /** The deadlines of the requests in flight (not of watches, which have the silence watchdog). */
  private readonly deadlines: Deadlines;
  private agent: { protocol: string; tls: AgentTls; agent: http.Agent } | undefined;

  private constructor(conn: Connection, opts: ClientOptions) {
    const { cluster, user, source, secrets } = conn;
    this.cluster = cluster;
    this.redactor = new Redactor(secrets);
    this.credentials = credentialsFor(cluster, user, (secret) => this.redactor.add(secret));
    this.server = this.redactor.redact(cluster.server);
    this.requestTimeoutMs = timeoutOption('requestTimeoutMs', opts.requestTimeoutMs, 60_000);
    this.watchOpenTimeoutMs = timeoutOption('watchOpenTimeoutMs', opts.watchOpenTimeoutMs, 30_000);
    this.deadlines = new Deadlines(
      this.requestTimeoutMs,
      () => new DOMException(`no answer within ${this.requestTimeoutMs} ms`, 'TimeoutError'),
    );
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
    const doc = readKubeconfigFile(file);
    return KubeClient.fromKubeconfig(doc, { ...opts, source: file, baseDir: path.dirname(path.resolve(file)) });
  }

  /** fromKubeconfig builds a client from a parsed kubeconfig object. */
  static fromKubeconfig(doc: unknown, opts: ClientOptions & { source?: string; baseDir?: string } = {}): KubeClient {
    return new KubeClient(kubeconfigConnection(doc, opts), opts);
  }

  /** inCluster uses the pod's service account, as every controller running in a cluster does. */
  static inCluster(opts: Omit<ClientOptions, 'context'> & { pathPrefix?: string } = {}): KubeClient {
    return new KubeClient(inClusterConnection(opts.pathPrefix), opts);
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
    // The deadline ends with the answer (see Deadlines): AbortSignal.timeout would hold a timer, and what
    // it references, for the whole timeout after every request. The caller's signal aborts it through
    // follow: AbortSignal.any would tie each request to a caller's long-lived signal (a
    // controller's) by weak references, which keep it through every minor GC. A RequestCancel
    // rather than an AbortController: an AbortSignal per request, and the listener node:http
    // puts on it, cost more CPU than the rest of the client's own work on a request.
    const cancel = new RequestCancel();
    const endDeadline = this.deadlines.add(cancel);
    const unfollow = opts.signal ? follow(opts.signal, cancel) : undefined;
    let text: string;
    let res: http.IncomingMessage;
    try {
      res = await this.send(method, this.url(p, opts.query), cancel, {
        body: opts.body,
        contentType: opts.contentType,
        accept: opts.accept,
      });
      text = await readBody(res).catch((e: unknown) => {
        throw this.networkError(e, this.url(p, opts.query), cancel);
      });
    } finally {
      endDeadline();
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
    const wrap = (e: unknown) => this.networkError(e, url, signal);
    return { lines: () => ndjsonLines(res, wrap), each: (onLine) => eachNdjsonLine(res, onLine, wrap) };
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
      // One TLS context for every connection of the agent: given only the PEM material, each new connection
      // would parse the CA, certificate and key into a context of its own.
      const agent =
        url.protocol === 'http:'
          ? new http.Agent({ keepAlive: true })
          : new https.Agent({
              keepAlive: true,
              ...tls,
              secureContext: createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key }),
            });
      // This agent serves one set of TLS material, so its pool key needs none of it: https.Agent's own
      // key would decode the CA, certificate and key Buffers into a string on every request.
      if (agent instanceof https.Agent)
        agent.getName = (o) => `${http.Agent.prototype.getName.call(agent, o)}:${o?.servername ?? ''}`;
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
    signal: AbortSignal | RequestCancel,
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
      const req = mod.request(url, signal instanceof RequestCancel ? opts : { ...opts, signal }, resolve);
      if (signal instanceof RequestCancel) signal.attach(req);
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

  private networkError(e: unknown, url: URL, signal: Cancellation): Error {
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
