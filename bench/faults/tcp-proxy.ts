import net from 'node:net';

/**
 * FaultProxy is a loopback TCP proxy in front of kube-apiserver that can
 * stall and reset connections. TLS passes through untouched, so a client
 * pointed at it sees the same server, certificate and tokens. While stalled,
 * no byte moves either way and new connections wait for upstream; reset
 * ends every open connection with a TCP RST, as a broken network path does.
 */
export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private readonly held: (() => void)[] = [];
  private stalled = false;
  private port = 0;
  private stopping: Promise<void> | undefined;
  /** Connections accepted, and connections ended by reset(). */
  accepted = 0;
  resets = 0;

  private constructor(
    private readonly server: net.Server,
    private readonly upstream: { host: string; port: number },
  ) {}

  /** start listens on a free loopback port and forwards to upstream (host:port). */
  static async start(upstream: { host: string; port: number }): Promise<FaultProxy> {
    const server = net.createServer();
    const proxy = new FaultProxy(server, upstream);
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy.port = (server.address() as net.AddressInfo).port;
    return proxy;
  }

  /** The proxy's address, e.g. 127.0.0.1:40123; it stays the same after stop. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Connections open now. */
  get open(): number {
    return this.pairs.size;
  }

  /** stall stops every byte in both directions until resume(): what arrives meanwhile is held, not forwarded. */
  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const p of this.pairs) p.flush();
    for (const connect of this.held.splice(0)) connect();
  }

  /** reset ends every open connection with a RST; the proxy keeps accepting new ones. */
  reset(): void {
    for (const p of [...this.pairs]) {
      this.resets++;
      this.end(p);
    }
  }

  /** stop closes the listener and every connection, and resolves once the listener is closed. */
  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.held.splice(0);
      for (const p of [...this.pairs]) this.end(p);
    });
    return this.stopping;
  }

  private accept(client: net.Socket): void {
    if (this.stopping) {
      client.destroy();
      return;
    }
    this.accepted++;
    const toUpstream: Buffer[] = [];
    const toClient: Buffer[] = [];
    const pair: Pair = {
      client,
      upstream: undefined,
      flush: () => {
        if (pair.upstream) for (const b of toUpstream.splice(0)) pair.upstream.write(b);
        for (const b of toClient.splice(0)) client.write(b);
      },
    };
    this.pairs.add(pair);
    client.on('error', () => this.end(pair));
    client.on('close', () => this.end(pair));
    client.on('data', (b: Buffer) => {
      toUpstream.push(b);
      if (!this.stalled) pair.flush();
    });
    const connect = () => {
      if (!this.pairs.has(pair)) return;
      const upstream = net.connect(this.upstream.port, this.upstream.host);
      pair.upstream = upstream;
      upstream.on('error', () => this.end(pair));
      upstream.on('close', () => this.end(pair));
      upstream.on('data', (b: Buffer) => {
        toClient.push(b);
        if (!this.stalled) pair.flush();
      });
      upstream.on('connect', () => {
        if (!this.stalled) pair.flush();
      });
    };
    if (this.stalled) this.held.push(connect);
    else connect();
  }

  private end(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    if (!pair.client.destroyed) pair.client.resetAndDestroy();
    if (pair.upstream && !pair.upstream.destroyed) pair.upstream.resetAndDestroy();
  }
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  /** Forwards what was held while stalled. */
  flush(): void;
}
