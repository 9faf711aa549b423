import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LEAN_MEDIA_TYPE, encodeDelta, encodeSnapshot, type Delta, type Snapshot } from '@/lib/changelog';
import { CliError } from '@/lib/cli/errors';
import { ServerBackend } from '@/lib/cli/server-backend';
import { demoSnapshot } from '@/tests/fixtures/snapshot';

/** A stand-in refwatch server on 127.0.0.1: the snapshot body, and the stream's messages, as given. */
async function serve(
  snapshotBody: string,
  streamBody: string,
  seen: { url: string; accept?: string }[] = [],
  endStreams = false,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url!, accept: req.headers.accept });
    if (req.url!.startsWith('/api/v1/snapshot'))
      res.writeHead(200, { 'content-type': 'application/json' }).end(snapshotBody);
    else if (req.url!.startsWith('/api/v1/stream')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(streamBody);
      if (endStreams) res.end();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const snapshot: Snapshot = demoSnapshot(0, 20);
const delta: Delta = {
  from: snapshot.revision,
  revision: snapshot.revision + 1,
  changes: [{ entity: 'referrer', id: snapshot.referrers[0]!.id, revision: snapshot.revision + 1, removed: true }],
};
const sse = (event: string, id: number, data: string) => `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`;

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe('ServerBackend', () => {
  it('asks for the lean snapshot and stream, and decodes them into the graph and changes', async () => {
    const seen: { url: string; accept?: string }[] = [];
    const server = await serve(
      encodeSnapshot(snapshot),
      sse('snapshot', snapshot.revision, encodeSnapshot(snapshot)) + sse('delta', delta.revision, encodeDelta(delta)),
      seen,
    );
    stop = server.close;
    const backend = new ServerBackend({ url: server.url, timeoutMs: 5000 });
    expect(await backend.graph()).toEqual(snapshot);
    const abort = new AbortController();
    const messages = [];
    for await (const m of backend.watch({}, abort.signal)) {
      messages.push(m);
      if (messages.length === 2) abort.abort();
    }
    expect(messages).toEqual([
      { type: 'snapshot', graph: snapshot },
      { type: 'delta', changes: delta.changes },
    ]);
    expect(seen).toEqual([
      { url: '/api/v1/snapshot', accept: LEAN_MEDIA_TYPE },
      { url: '/api/v1/stream?format=lean', accept: 'text/event-stream' },
    ]);
    await backend.close();
  });

  it('says what to do when the server speaks another format', async () => {
    const server = await serve(JSON.stringify(snapshot), sse('snapshot', snapshot.revision, JSON.stringify(snapshot)));
    stop = server.close;
    const backend = new ServerBackend({ url: server.url, timeoutMs: 5000 });
    await expect(backend.graph()).rejects.toThrow(CliError);
    await expect(backend.graph()).rejects.toThrow(
      /has format null, this client reads refwatch\.lean\/1: use a client and server of the same refwatch version/,
    );
    const abort = new AbortController();
    const watching = (async () => {
      for await (const m of backend.watch({}, abort.signal)) void m;
    })();
    await expect(watching).rejects.toThrow(/refwatch\.lean\/1/);
    await backend.close();
  });

  it('leaves no listener behind on its signals across reconnects, and close() ends a watch', async () => {
    const seen: { url: string; accept?: string }[] = [];
    // Each stream ends after its snapshot, so the watch reconnects again and again.
    const server = await serve('', sse('snapshot', snapshot.revision, encodeSnapshot(snapshot)), seen, true);
    stop = server.close;
    const backend = new ServerBackend({ url: server.url, timeoutMs: 5000 });
    const closeSignal = (backend as unknown as { abort: AbortController }).abort.signal;
    const caller = new AbortController();
    let snapshots = 0;
    const listeners: number[] = [];
    for await (const m of backend.watch({}, caller.signal)) {
      expect(m.type).toBe('snapshot');
      snapshots += 1;
      listeners.push(getEventListeners(closeSignal, 'abort').length + getEventListeners(caller.signal, 'abort').length);
      if (snapshots === 3) break;
    }
    // While a connection is open, it alone follows each signal; after the loop, nothing does.
    expect(listeners).toEqual([2, 2, 2]);
    expect(getEventListeners(closeSignal, 'abort')).toHaveLength(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(seen.filter((r) => r.url.startsWith('/api/v1/stream'))).toHaveLength(3);

    const watching = (async () => {
      const got = [];
      for await (const m of backend.watch({}, caller.signal)) got.push(m);
      return got.length;
    })();
    await backend.close();
    // A closed backend ends its watch quietly, whatever it had received.
    await expect(watching).resolves.toBeTypeOf('number');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });
});
