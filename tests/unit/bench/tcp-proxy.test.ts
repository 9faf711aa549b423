import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '@/bench/faults/tcp-proxy';
import { recoveryEnd } from '@/bench/faults/workload';

/** An echo server, so that what goes through the proxy comes back. */
async function echoServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function connect(address: string): Promise<{ socket: net.Socket; received: () => string; closed: Promise<string> }> {
  const [host, port] = address.split(':');
  const socket = net.connect(Number(port), host);
  let data = '';
  socket.on('data', (b: Buffer) => (data += b.toString()));
  const closed = new Promise<string>((resolve) => {
    socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    socket.on('close', () => resolve('closed'));
  });
  return new Promise((resolve) => socket.once('connect', () => resolve({ socket, received: () => data, closed })));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('FaultProxy', () => {
  it('forwards both ways, holds every byte while stalled, and delivers it on resume', async () => {
    const echo = await echoServer();
    cleanups.push(() => echo.stop());
    const proxy = await FaultProxy.start({ host: '127.0.0.1', port: echo.port });
    cleanups.push(() => proxy.stop());
    const c = await connect(proxy.address);
    cleanups.push(async () => void c.socket.destroy());
    c.socket.write('one');
    await expect.poll(() => c.received()).toBe('one');
    proxy.stall();
    c.socket.write('two');
    const late = await connect(proxy.address);
    cleanups.push(async () => void late.socket.destroy());
    late.socket.write('three');
    await pause(200);
    expect(c.received()).toBe('one');
    expect(late.received()).toBe('');
    proxy.resume();
    await expect.poll(() => c.received()).toBe('onetwo');
    await expect.poll(() => late.received()).toBe('three');
  });

  it('resets every open connection, keeps accepting, and stops with nothing left open', async () => {
    const echo = await echoServer();
    cleanups.push(() => echo.stop());
    const proxy = await FaultProxy.start({ host: '127.0.0.1', port: echo.port });
    const c = await connect(proxy.address);
    c.socket.write('x');
    await expect.poll(() => c.received()).toBe('x');
    proxy.reset();
    expect(await c.closed).toBe('ECONNRESET');
    expect(proxy.resets).toBe(1);
    const again = await connect(proxy.address);
    again.socket.write('y');
    await expect.poll(() => again.received()).toBe('y');
    expect(proxy.open).toBe(1);
    await proxy.stop();
    expect(await again.closed).toBe('ECONNRESET');
    expect(proxy.open).toBe(0);
    const refused = net.connect(Number(proxy.address.split(':')[1]), '127.0.0.1');
    expect(await new Promise((resolve) => refused.on('error', (e: NodeJS.ErrnoException) => resolve(e.code)))).toBe(
      'ECONNREFUSED',
    );
  });
});

describe('recoveryEnd', () => {
  // Each App: [when its last referent turned Ready, when it was resolved].
  const apps = {
    early: [0, 500],
    waiting: [1_000, 9_000],
    stale: [12_000, 20_000],
    prompt: [12_000, 12_400],
    never: [3_000, undefined],
  } as const;
  type Name = keyof typeof apps;
  const at = (n: Name) => apps[n][1];
  const ready = (n: Name) => apps[n][0];

  it('ends with the last App held up by the fault: waiting when it cleared, or resolved late after it', () => {
    expect(recoveryEnd<Name>(['early', 'waiting', 'stale', 'prompt'], ['waiting'], 8_000, at, ready)).toBe(20_000);
    expect(recoveryEnd<Name>(['early', 'waiting', 'prompt'], ['waiting'], 8_000, at, ready)).toBe(9_000);
  });

  it('is the clearing itself when nothing was held up, and never when a held-up App is unresolved', () => {
    expect(recoveryEnd<Name>(['early', 'prompt'], [], 8_000, at, ready)).toBe(8_000);
    expect(recoveryEnd<Name>(['early', 'never'], ['never'], 8_000, at, ready)).toBe(Infinity);
  });
});
