import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { AdmissionReviewOut } from './review';

export const ADMISSION_PATH = '/admission/v1/validate';
/** kube-apiserver's own request limit; a bigger AdmissionReview is not a real one. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface AdmissionServerOptions {
  host: string;
  port: number;
  /** PEM serving certificate (chain) and key. */
  cert: string;
  key: string;
  review: (body: unknown) => AdmissionReviewOut;
}

export interface AdmissionServer {
  url: string;
  port: number;
  /** stop closes the listener and its connections; awaited. */
  stop(): Promise<void>;
}

/**
 * startAdmissionServer serves POST /admission/v1/validate on its own HTTPS
 * listener. A body that is not JSON still gets allowed: true, so that
 * refwatch never stands between a user and the API server.
 */
export async function startAdmissionServer(opts: AdmissionServerOptions): Promise<AdmissionServer> {
  const server: Server = createServer({ cert: opts.cert, key: opts.key }, (req, res) => {
    const raw = req.url ?? '';
    const q = raw.indexOf('?');
    const url = q < 0 ? raw : raw.slice(0, q);
    if (url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return;
    }
    if (url !== ADMISSION_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found; POST AdmissionReviews to ${ADMISSION_PATH}`);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'text/plain' }).end('POST an AdmissionReview v1');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) overflow = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      let body: unknown;
      try {
        // A review's body is mostly one TLS record, so one chunk: decoded in place, not concatenated first.
        const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        body = overflow ? undefined : JSON.parse(buf.toString('utf8'));
      } catch {
        body = undefined;
      }
      const text = JSON.stringify(opts.review(body));
      res.writeHead(200, ['Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(text))]);
      res.end(text);
    });
    req.on('error', () => res.destroy());
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let stopping: Promise<void> | undefined;
  return {
    url: `https://${host}:${port}${ADMISSION_PATH}`,
    port,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
