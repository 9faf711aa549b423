import http from 'node:http';
import https from 'node:https';

/** Where and as whom the harness talks to a cluster; `ca` is PEM, absent for plain HTTP. */
export interface KubeEndpoint {
  url: string;
  token: string;
  ca?: string;
}

export interface KubeResponse {
  status: number;
  body: string;
}

/**
 * kubeRequest sends one request with the bearer token and resolves with the
 * status and body whatever the status; it rejects only when no response came.
 * `insecure` skips TLS verification, for polling a server whose CA is not yet known.
 */
export function kubeRequest(
  endpoint: KubeEndpoint,
  method: string,
  path: string,
  opts: { body?: unknown; insecure?: boolean; timeoutMs?: number; contentType?: string } = {},
): Promise<KubeResponse> {
  const target = new URL(path, endpoint.url);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: 'application/json, text/plain' };
  if (endpoint.token) headers.authorization = `Bearer ${endpoint.token}`;
  if (payload !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const transport = target.protocol === 'https:' ? https : http;
  const tls = target.protocol === 'https:' ? { ca: endpoint.ca, rejectUnauthorized: !opts.insecure } : {};
  return new Promise((resolve, reject) => {
    const req = transport.request(target, { method, headers, agent: false, ...tls }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 10_000, () => req.destroy(new Error(`${method} ${target.href} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The standard kubeconfig file shape, as `kubectl config view --raw` prints it. */
export interface KubeconfigFile {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: {
    name: string;
    cluster: { server: string; 'certificate-authority-data'?: string; 'insecure-skip-tls-verify'?: boolean };
  }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

export function kubeconfigFor(endpoint: KubeEndpoint, name: string, user = 'admin'): KubeconfigFile {
  const cluster: KubeconfigFile['clusters'][number]['cluster'] = { server: endpoint.url };
  if (endpoint.ca) cluster['certificate-authority-data'] = Buffer.from(endpoint.ca).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: user, user: { token: endpoint.token } }],
    contexts: [{ name, context: { cluster: name, user } }],
    'current-context': name,
  };
}
