import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * StallingProxy is a loopback TCP proxy to an upstream HTTP server that
 * stalls the requests `stall` picks: it accepts them and never answers, as
 * a request queued by API Priority and Fairness or sent on a half-open
 * connection looks to a client. Other requests pass through. Bytes that do
 * not start with a plain HTTP request line (TLS) are judged as the line ''.
 */
export class StallingProxy {
  url = '';
  /** Request lines ("GET /api/v1/configmaps?watch=true HTTP/1.1") of the stalled requests, in order. */
  readonly stalled: string[] = [];
  /** How many stalled connections the client has closed. */
  closedByClient = 0;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly upstream: URL,
    private readonly stall: (requestLine: string) => boolean,
  ) {
    this.server = net.createServer((client) => this.connect(client));
  }

  static async start(upstream: string, stall: (requestLine: string) => boolean): Promise<StallingProxy> {
    const p = new StallingProxy(new URL(upstream), stall);
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    p.url = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
    return p;
  }

  /** stop closes every connection, stalled or not, and the listener. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(Number(this.upstream.port), this.upstream.hostname);
    this.sockets.add(client).add(upstream);
    let stalled = false;
    client.on('data', (chunk: Buffer) => {
      if (stalled) return;
      // Requests here are small GETs: each arrives in one chunk that starts with its request line.
      const line = /^[A-Z]+ \S+ HTTP\/1\.1/.exec(chunk.toString('latin1'))?.[0] ?? '';
      if (this.stall(line)) {
        stalled = true;
        this.stalled.push(line);
        upstream.destroy();
        client.once('close', () => this.closedByClient++);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => void (stalled || client.write(chunk)));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', () => void (stalled || end()));
    client.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', () => this.sockets.delete(client));
    upstream.on('close', () => this.sockets.delete(upstream));
  }
}
