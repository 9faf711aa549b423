import fs from 'node:fs';
import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/*
 * Credentials turn one kubeconfig cluster and user into TLS options and
 * headers for node:https. Tokens, token files, client certificates, basic
 * auth, impersonation and exec plugins are handled here; the rarer
 * auth-provider plugins (oidc, azure, gcp) and proxies are delegated to
 * @kubernetes/client-node, which is loaded only by a kubeconfig that uses
 * them: its index loads every generated API model, some 70 MB a process
 * would otherwise carry for nothing.
 */

/** ClusterConnection is one kubeconfig cluster entry, with relative paths resolved. */
export interface ClusterConnection {
  name: string;
  server: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

/** ExecConfig is a user's `exec` credential plugin (client.authentication.k8s.io). */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  apiVersion?: string;
}

/** UserCredentials is one kubeconfig user entry, with relative paths resolved. */
export interface UserCredentials {
  name: string;
  token?: string;
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  impersonate?: string;
  exec?: ExecConfig;
  authProvider?: { name: string; config?: Record<string, unknown> };
}

/**
 * Connection is one cluster and one identity, as a kubeconfig context or a
 * pod's service account gives them, with every credential string known at
 * the start (for redaction) and where they came from.
 */
export interface Connection {
  cluster: ClusterConnection;
  user: UserCredentials;
  context: string;
  namespace?: string;
  source: string;
  secrets: string[];
}

/** Credentials applies a cluster's TLS settings and a user's identity to one request. */
export interface Credentials {
  /** apply sets TLS material, headers and basic auth on opts; it rejects with a message that quotes no credential. */
  apply(opts: https.RequestOptions): Promise<void>;
  /** rejected says the server answered 401: credentials that can be renewed (exec) are fetched again next time. */
  rejected(): void;
}

/**
 * SecretSink is told each credential value as it is read or received, so that
 * errors and logs can be redacted of it: the kubeconfig's own values are known
 * from the start, a rotated token or an exec plugin's only from then on.
 */
export type SecretSink = (secret: string) => void;

/** needsClientNode says whether a connection uses what only @kubernetes/client-node implements here. */
export function needsClientNode(cluster: ClusterConnection, user: UserCredentials): boolean {
  return Boolean(cluster.proxyUrl || user.authProvider);
}

/** credentialsFor picks the credentials of a connection; onSecret is told every credential value they use. */
export function credentialsFor(cluster: ClusterConnection, user: UserCredentials, onSecret: SecretSink): Credentials {
  return needsClientNode(cluster, user)
    ? new ClientNodeCredentials(cluster, user, onSecret)
    : new LeanCredentials(cluster, user, onSecret);
}

/** A token file is read again after this long: bound service-account tokens rotate (client-go re-reads each minute). */
const TOKEN_FILE_TTL_MS = 60_000;

class LeanCredentials implements Credentials {
  private tokenFromFile: { token: string; readAt: number } | undefined;
  private readonly exec: ExecPlugin | undefined;
  /**
   * The kubeconfig's inline `-data` fields, decoded once: they cannot change,
   * and handing out the same Buffer each time lets the client see at once
   * that its keep-alive agent still fits (decoding and comparing them per
   * request was a measurable part of a request's CPU).
   */
  private readonly inline = new Map<string, Buffer | undefined>();

  constructor(
    private readonly cluster: ClusterConnection,
    private readonly user: UserCredentials,
    private readonly onSecret: SecretSink,
  ) {
    if (user.exec) this.exec = new ExecPlugin(user.name, user.exec, { onSecret });
  }

  async apply(opts: https.RequestOptions): Promise<void> {
    const { cluster, user } = this;
    const headers = (opts.headers ??= {}) as Record<string, string>;
    if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = this.pem('certificate-authority', cluster.caFile, cluster.caData);
    if (ca) opts.ca = ca;
    const cert = this.pem('client-certificate', user.certFile, user.certData);
    if (cert) opts.cert = cert;
    const key = this.pem('client-key', user.keyFile, user.keyData);
    if (key) opts.key = key;
    if (user.impersonate) headers['Impersonate-User'] = user.impersonate;
    if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
    const token = user.token ?? (user.tokenFile ? this.readTokenFile(user.tokenFile) : undefined);
    if (token) headers.Authorization = `Bearer ${token}`;
    if (this.exec) {
      const c = await this.exec.credential();
      if (c.clientCertificateData) opts.cert = c.clientCertificateData;
      if (c.clientKeyData) opts.key = c.clientKeyData;
      if (c.token) headers.Authorization = `Bearer ${c.token}`;
    }
  }

  rejected(): void {
    this.exec?.invalidate();
  }

  /** pem reads a file each time (it may be rotated), and decodes inline data once. */
  private pem(field: string, file: string | undefined, data: string | undefined): Buffer | undefined {
    if (file) return fileOrData(field, file, undefined);
    if (!this.inline.has(field)) this.inline.set(field, fileOrData(field, undefined, data));
    return this.inline.get(field);
  }

  private readTokenFile(file: string): string {
    const cached = this.tokenFromFile;
    if (cached && Date.now() - cached.readAt < TOKEN_FILE_TTL_MS) return cached.token;
    try {
      const token = fs.readFileSync(file, 'utf8').trim();
      if (token !== cached?.token) this.onSecret(token);
      this.tokenFromFile = { token, readAt: Date.now() };
      return token;
    } catch (e) {
      // A token file mid-rotation may vanish for a moment: the last token read is still the best guess.
      if (cached) return cached.token;
      throw new Error(`token file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`, {
        cause: e,
      });
    }
  }
}

/** fileOrData reads a PEM file, or decodes the kubeconfig's base64 `-data` field; files are read per request so rotated ones are picked up. */
function fileOrData(field: string, file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) {
    try {
      return fs.readFileSync(file);
    } catch (e) {
      throw new Error(`${field} ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`, {
        cause: e,
      });
    }
  }
  return data ? Buffer.from(data, 'base64') : undefined;
}

/** ExecCredentialStatus is what an exec plugin's ExecCredential carries. */
export interface ExecCredentialStatus {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  expirationTimestamp?: string;
}

/** execCredentialStatus reads an ExecCredential's status, or says what is wrong with it. */
function execCredentialStatus(doc: unknown): ExecCredentialStatus | string {
  const status = (doc as { status?: unknown } | null)?.status;
  if (typeof status !== 'object' || status === null) return 'has no status object';
  for (const f of ['token', 'clientCertificateData', 'clientKeyData', 'expirationTimestamp'] as const) {
    const v = (status as Record<string, unknown>)[f];
    if (v !== undefined && typeof v !== 'string') return `has a status.${f} that is not a string`;
  }
  return status as ExecCredentialStatus;
}

/** How long an exec plugin may run before it is killed. */
const EXEC_TIMEOUT_MS = 60_000;

/**
 * ExecPlugin runs a kubeconfig's exec credential plugin, as kubectl does: its
 * ExecCredential is kept until its expirationTimestamp, or without one until
 * the server answers 401. Concurrent requests share one run.
 */
export class ExecPlugin {
  private cached: { status: ExecCredentialStatus; expiresAt: number } | undefined;
  private running: Promise<ExecCredentialStatus> | undefined;

  private readonly now: () => number;
  private readonly onSecret: SecretSink;

  constructor(
    private readonly user: string,
    private readonly cfg: ExecConfig,
    opts: { now?: () => number; onSecret?: SecretSink } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.onSecret = opts.onSecret ?? (() => undefined);
  }

  credential(): Promise<ExecCredentialStatus> {
    if (this.cached && this.cached.expiresAt > this.now()) return Promise.resolve(this.cached.status);
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async run(): Promise<ExecCredentialStatus> {
    const stdout = await this.spawnPlugin();
    const what = `exec plugin "${this.cfg.command}" of user ${this.user}`;
    let doc: unknown;
    try {
      doc = JSON.parse(stdout);
    } catch {
      throw new Error(
        `${what} printed no JSON: it must print an ExecCredential (client.authentication.k8s.io) on stdout`,
      );
    }
    const status = execCredentialStatus(doc);
    if (typeof status === 'string') throw new Error(`${what} printed an ExecCredential that ${status}`);
    if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
      throw new Error(
        `${what} printed an ExecCredential with neither status.token nor status.clientCertificateData and status.clientKeyData`,
      );
    }
    if (status.token) this.onSecret(status.token);
    if (status.clientKeyData) this.onSecret(status.clientKeyData);
    const expiresAt = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Infinity;
    this.cached = { status, expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt };
    return status;
  }

  private async spawnPlugin(): Promise<string> {
    // Loaded on the first run: most controllers never run a plugin, and child_process costs every process about 0.6 MB.
    const { spawn } = await import('node:child_process');
    const { command, args = [], env, apiVersion = 'client.authentication.k8s.io/v1' } = this.cfg;
    const info = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
    const childEnv: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: info };
    for (const e of env ?? []) childEnv[e.name] = e.value;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: EXEC_TIMEOUT_MS,
      });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      child.on('error', (e: NodeJS.ErrnoException) => {
        const hint = e.code === 'ENOENT' ? ': install it or fix users[].user.exec.command' : '';
        reject(new Error(`exec plugin "${command}" of user ${this.user} cannot run (${e.code ?? e.message})${hint}`));
      });
      child.on('close', (code, signal) => {
        if (code === 0) return resolve(out);
        const why = signal
          ? `was killed by ${signal}${signal === 'SIGTERM' ? ` after ${EXEC_TIMEOUT_MS / 1000} s` : ''}`
          : `exited with ${code}`;
        const last = err.trim().split('\n').pop()?.slice(0, 300);
        reject(new Error(`exec plugin "${command}" of user ${this.user} ${why}${last ? `: ${last}` : ''}`));
      });
    });
  }
}

/** ClientNodeCredentials delegates to @kubernetes/client-node, imported on first use. */
class ClientNodeCredentials implements Credentials {
  private kc: Promise<KubeConfig> | undefined;

  constructor(
    private readonly cluster: ClusterConnection,
    private readonly user: UserCredentials,
    private readonly onSecret: SecretSink,
  ) {}

  async apply(opts: https.RequestOptions): Promise<void> {
    this.kc ??= this.load();
    await (await this.kc).applyToHTTPSOptions(opts);
    // An auth-provider refreshes its token inside client-node: the header is the one place it shows.
    const auth = (opts.headers as Record<string, unknown> | undefined)?.Authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) this.onSecret(auth.slice('Bearer '.length));
  }

  rejected(): void {}

  private async load(): Promise<KubeConfig> {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { cluster: c, user: u } = this;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: c.name,
          server: c.server,
          caData: c.caData,
          caFile: c.caFile,
          // client-node refuses plain-HTTP servers unless TLS verification is off; over HTTP there is no TLS to verify.
          skipTLSVerify: c.skipTLSVerify || c.server.startsWith('http:'),
          tlsServerName: c.tlsServerName,
          proxyUrl: c.proxyUrl,
        },
      ],
      users: [
        {
          name: u.name,
          token: u.token ?? (u.tokenFile ? this.readTokenFile(u.tokenFile) : undefined),
          certData: u.certData,
          certFile: u.certFile,
          keyData: u.keyData,
          keyFile: u.keyFile,
          username: u.username,
          password: u.password,
          impersonateUser: u.impersonate,
          exec: u.exec,
          authProvider: u.authProvider,
        },
      ],
      contexts: [{ name: 'refwatch', cluster: c.name, user: u.name }],
      currentContext: 'refwatch',
    });
    return kc;
  }

  private readTokenFile(file: string): string {
    const token = fs.readFileSync(file, 'utf8').trim();
    this.onSecret(token);
    return token;
  }
}
