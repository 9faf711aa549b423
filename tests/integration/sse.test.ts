import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ChangeLog,
  SNAPSHOT_FIELD,
  decodeDelta,
  decodeSnapshot,
  type ClusterInfo,
  type Delta,
  type EntityKind,
  type Snapshot,
} from '@/lib/changelog';
import { Manager } from '@/lib/engine';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { SSE_HEADERS, sseStream } from '@/server/http/sse';
import { captureSnapshot } from '@/server/snapshot';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * GET /api/v1/stream over real HTTP: a Manager over the test cluster writes
 * the change log, sseStream serves it through node:http the way the route
 * handler's Response body is served, and clients read it with fetch.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let client: KubeClient;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
});
afterEach(async () => {
  for (const stop of cleanups.splice(0).reverse()) await stop();
});

// ------------------------------------------------------------------ the server

/**
 * ServedStream writes one sseStream to its socket, reading the stream only
 * when the socket takes more: a client that stops reading leaves the bytes
 * in the stream's own queue, where sseStream bounds them.
 */
class ServedStream {
  /** Waiting for the socket to drain: the client is not keeping up. */
  blocked = false;
  /** The largest chunk handed to the socket. */
  largestWritten = 0;
  /** Chunks taken out of the stream by takeQueued, written before anything else. */
  private readonly held: Uint8Array[] = [];
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  /** Chunks read from the stream after the held ones, as text. */
  readonly after: string[] = [];
  private counting = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    readonly res: http.ServerResponse,
  ) {
    this.reader = body.getReader();
  }

  async run(): Promise<void> {
    try {
      for (;;) {
        const fromQueue = this.held.shift();
        let chunk = fromQueue;
        if (!chunk) {
          const r = await (this.pending ?? this.reader.read());
          this.pending = undefined;
          if (r.done) break;
          chunk = r.value;
          if (this.counting) this.after.push(new TextDecoder().decode(chunk));
        }
        if (this.res.destroyed) break;
        this.largestWritten = Math.max(this.largestWritten, chunk.byteLength);
        if (!this.res.write(chunk)) {
          this.blocked = true;
          await new Promise<void>((resolve) => {
            const go = () => {
              this.res.off('drain', go);
              this.res.off('close', go);
              resolve();
            };
            this.res.on('drain', go);
            this.res.on('close', go);
          });
          this.blocked = false;
        }
      }
    } catch {
      // The client went away mid-write; its close already aborted the stream.
    } finally {
      await this.reader.cancel().catch(() => undefined);
      this.res.end();
    }
  }

  /**
   * takeQueued empties the stream's queue, what sseStream has enqueued for
   * this client and not yet handed to the socket, and returns those chunks.
   * Queued chunks are read at once; a read that waits past the current turn
   * of the event loop means the queue is empty. They are written later, first.
   */
  async takeQueued(): Promise<Uint8Array[]> {
    const taken: Uint8Array[] = [];
    for (;;) {
      const read = (this.pending ??= this.reader.read());
      const r = await Promise.race([read, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
      if (r === null) break;
      this.pending = undefined;
      if (r.done) break;
      taken.push(r.value);
    }
    this.held.push(...taken);
    this.counting = true;
    return taken;
  }
}

interface SseServer {
  url: string;
  /** Streams by the `client` query parameter of their request. */
  streams: Map<string, ServedStream>;
  opened(): number;
  closed(): number;
  stop(): Promise<void>;
}

const HIGH_WATER_BYTES = 64 * 1024;

async function serveSse(manager: Manager): Promise<SseServer> {
  const info: ClusterInfo = {
    mode: clusterKind === 'embedded' ? 'embedded' : 'kubeconfig',
    server: cluster.url,
    reachable: true,
  };
  const streams = new Map<string, ServedStream>();
  let opened = 0;
  let closed = 0;
  const server = http.createServer({ noDelay: true }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/api/v1/stream') {
      res.writeHead(404).end();
      return;
    }
    // The socket's close aborts the stream, as req.signal does in a route handler.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const body = sseStream({
      changelog: manager.changelog,
      snapshot: () => captureSnapshot(manager, { cluster: () => info, stuckThresholdMs: 30_000 }),
      lastEventId: req.headers['last-event-id'] as string | undefined,
      highWaterBytes: HIGH_WATER_BYTES,
      signal: abort.signal,
      onOpen: () => opened++,
      onClose: () => closed++,
    });
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const served = new ServedStream(body, res);
    streams.set(url.searchParams.get('client') ?? String(opened), served);
    void served.run();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(stop);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/stream`,
    streams,
    opened: () => opened,
    closed: () => closed,
    stop,
  };
}

// ------------------------------------------------------------------ the client

interface Message {
  event: string;
  id?: number;
  data?: unknown;
}

/** The entity kinds a client compares; events expire silently, so they are left out. */
const COMPARED: EntityKind[] = ['referrer', 'referent', 'reference', 'controller'];

/** SseClient reads GET /api/v1/stream with fetch and keeps the state it describes. */
class SseClient {
  readonly messages: Message[] = [];
  readonly state = new Map<string, unknown>();
  lastId: number | undefined;
  bytes = 0;
  private buf = '';
  private readonly decoder = new TextDecoder();

  private constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly abort: AbortController,
  ) {}

  /**
   * connect opens the stream. Given `resume`, a client that went away, it
   * reconnects as EventSource does: with that client's state, and its last id
   * as Last-Event-ID.
   */
  static async connect(
    url: string,
    name: string,
    resume?: { state: Map<string, unknown>; lastId: number | undefined },
  ): Promise<SseClient> {
    const abort = new AbortController();
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (resume?.lastId !== undefined) headers['last-event-id'] = String(resume.lastId);
    const res = await fetch(`${url}?client=${name}`, { headers, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const c = new SseClient(res.body!.getReader(), abort);
    if (resume) {
      for (const [k, v] of resume.state) c.state.set(k, v);
      c.lastId = resume.lastId;
    }
    cleanups.push(() => c.close());
    return c;
  }

  /** next reads and applies one message; comments (heartbeats, resume notes) are skipped. */
  async next(): Promise<Message> {
    for (;;) {
      const end = this.buf.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buf.slice(0, end);
        this.buf = this.buf.slice(end + 2);
        if (block.startsWith(':')) continue;
        const m: Message = { event: 'message' };
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) m.id = Number(line.slice(4));
          else if (line.startsWith('event: ')) m.event = line.slice(7);
          else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6));
        }
        // Snapshots and deltas travel in the lean wire format.
        if (m.event === 'snapshot') m.data = decodeSnapshot(m.data);
        if (m.event === 'delta') m.data = decodeDelta(m.data);
        this.apply(m);
        this.messages.push(m);
        return m;
      }
      const { value, done } = await this.reader.read();
      if (done) throw new Error('the stream ended');
      this.bytes += value.byteLength;
      this.buf += this.decoder.decode(value, { stream: true });
    }
  }

  /** readUntil reads until the client holds revision `rev`. */
  async readUntil(rev: number): Promise<void> {
    while (this.lastId === undefined || this.lastId < rev) await this.next();
  }

  /** readAlong reads in the background until closed. */
  readAlong(): void {
    void (async () => {
      for (;;) await this.next();
    })().catch(() => undefined);
  }

  /** view is the compared part of the state, by `entity|id`. */
  view(): Record<string, unknown> {
    return Object.fromEntries(
      [...this.state]
        .filter(([k]) => COMPARED.includes(k.slice(0, k.indexOf('|')) as EntityKind))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.reader.cancel().catch(() => undefined);
  }

  private apply(m: Message): void {
    if (m.id !== undefined) this.lastId = m.id;
    if (m.event === 'snapshot') {
      this.state.clear();
      const snap = m.data as Snapshot;
      for (const [entity, field] of Object.entries(SNAPSHOT_FIELD)) {
        for (const v of snap[field] as { id: string }[]) this.state.set(`${entity}|${v.id}`, v);
      }
    } else if (m.event === 'delta') {
      for (const ch of (m.data as Delta).changes) {
        if (ch.removed) this.state.delete(`${ch.entity}|${ch.id}`);
        else this.state.set(`${ch.entity}|${ch.id}`, ch.value);
      }
    }
  }
}

/** viewOf is what a client holding the manager's current state has, for comparison. */
function viewOf(manager: Manager): Record<string, unknown> {
  const snap = JSON.parse(JSON.stringify(manager.changelog.snapshot())) as {
    entities: Record<string, { id: string }[]>;
  };
  const out: [string, unknown][] = [];
  for (const entity of COMPARED) for (const v of snap.entities[entity] ?? []) out.push([`${entity}|${v.id}`, v]);
  return Object.fromEntries(out.sort(([a], [b]) => (a < b ? -1 : 1)));
}

// ------------------------------------------------------------------ the engine

const CONTROLLER = 'configmaps';

/** startManager reconciles the namespace's ConfigMaps, each data entry naming a referent by key. */
function startManager(ns: string, changelog = new ChangeLog()): Manager {
  const manager = new Manager({
    source: new SharedInformerPool({ client }),
    changelog,
    grace: 1_000,
    statsIntervalMs: 0,
  });
  manager.addController({
    name: CONTROLLER,
    for: { group: '', kind: 'ConfigMap', namespace: ns },
    reconcile(ctx) {
      for (const [field, referent] of Object.entries((ctx.object?.data ?? {}) as Record<string, string>))
        ctx.resolve(referent, `data.${field}`);
    },
  });
  manager.start();
  cleanups.push(() => manager.stop());
  return manager;
}

async function configMap(ns: string, name: string, data: Record<string, string>): Promise<void> {
  await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data } });
}
async function secret(ns: string, name: string): Promise<void> {
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name }, stringData: { v: '1' } },
  });
}
const referrerState = (manager: Manager, ns: string, name: string) =>
  manager.changelog.get('referrer', `${CONTROLLER}|ConfigMap/${ns}/${name}`)?.state;

// ------------------------------------------------------------------ the tests

describe(`SSE stream over HTTP on the ${clusterKind} cluster`, () => {
  it('resumes a reconnecting client with exactly the changes it missed, coalesced', async () => {
    const ns = await cluster.newNamespace('sse-resume');
    const manager = startManager(ns);
    const server = await serveSse(manager);
    await configMap(ns, 'app', { db: `Secret/${ns}/db` });
    await expect.poll(() => referrerState(manager, ns, 'app'), { timeout: 20_000 }).toBe('NotFound');

    const first = await SseClient.connect(server.url, 'first');
    const snapshot = await first.next();
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.id).toBe(manager.changelog.revision);
    expect(first.view()).toEqual(viewOf(manager));
    const seen = snapshot.id!;

    await first.close();
    await expect.poll(() => server.closed()).toBe(1);

    // While away: the Secret appears (the referrer resolves), then a second reference comes and resolves.
    await secret(ns, 'db');
    await expect.poll(() => referrerState(manager, ns, 'app'), { timeout: 20_000 }).toBe('Resolved');
    await client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/app`, {
      contentType: 'application/merge-patch+json',
      body: { data: { cache: `Secret/${ns}/cache` } },
    });
    await expect.poll(() => referrerState(manager, ns, 'app'), { timeout: 20_000 }).toBe('NotFound');
    await secret(ns, 'cache');
    await expect.poll(() => referrerState(manager, ns, 'app'), { timeout: 20_000 }).toBe('Resolved');

    const again = await SseClient.connect(server.url, 'again', first);
    const resumed = await again.next();
    const missed = manager.changelog.changesSince(seen);
    expect(resumed.event).toBe('delta');
    expect(resumed.id).toBe(manager.changelog.revision);
    const delta = resumed.data as Delta;
    expect(delta.from).toBe(seen);
    expect(missed.resnapshot).toBe(false);
    expect(delta.changes).toEqual(JSON.parse(JSON.stringify(missed.resnapshot ? [] : missed.changes)));
    // Coalesced: one change per entity, though the referrer changed state four times.
    const ids = delta.changes.map((c) => `${c.entity}|${c.id}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(delta.changes.length).toBeLessThan(delta.revision - seen);
    expect(delta.changes.filter((c) => c.entity === 'referrer')).toEqual([
      expect.objectContaining({ value: expect.objectContaining({ state: 'Resolved', references: 2 }) }),
    ]);

    // The snapshot it held plus the delta is the state now.
    expect(again.view()).toEqual(viewOf(manager));
  });

  it('answers a compacted Last-Event-ID with resync and a fresh snapshot', async () => {
    const ns = await cluster.newNamespace('sse-resync');
    const manager = startManager(ns, new ChangeLog({ retainRevisions: 20 }));
    const server = await serveSse(manager);
    await configMap(ns, 'old', { db: `Secret/${ns}/old-db` });
    await expect.poll(() => referrerState(manager, ns, 'old'), { timeout: 20_000 }).toBe('NotFound');

    const first = await SseClient.connect(server.url, 'first');
    const seen = (await first.next()).id!;
    await first.close();
    await expect.poll(() => server.closed()).toBe(1);

    // Removing the referrer leaves tombstones; enough changes after them compact them away.
    await client.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/old`);
    await expect.poll(() => referrerState(manager, ns, 'old'), { timeout: 20_000 }).toBeUndefined();
    for (let i = 0; i < 10; i++) await configMap(ns, `new-${i}`, { db: `Secret/${ns}/db-${i}` });
    await expect.poll(() => manager.changelog.compactedRevision, { timeout: 20_000 }).toBeGreaterThan(seen);
    await expect
      .poll(() => [...Array(10).keys()].every((i) => referrerState(manager, ns, `new-${i}`) === 'NotFound'), {
        timeout: 20_000,
      })
      .toBe(true);

    const again = await SseClient.connect(server.url, 'again', first);
    const resync = await again.next();
    expect(resync.event).toBe('resync');
    expect(resync.data).toEqual({ revision: manager.changelog.revision });
    const snapshot = await again.next();
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.id).toBe(manager.changelog.revision);
    const referrers = (snapshot.data as Snapshot).referrers.map((r) => r.key).filter((k) => k.includes(`/${ns}/`));
    expect(referrers.sort()).toEqual([...Array(10).keys()].map((i) => `ConfigMap/${ns}/new-${i}`).sort());
    expect(again.view()).toEqual(viewOf(manager));
  });

  it('holds a client that stops reading to the high-water mark, without slowing the others', async () => {
    const ns = await cluster.newNamespace('sse-slow');
    const manager = startManager(ns);
    const server = await serveSse(manager);
    // Referrers whose references flip between two sets of Secrets: `fan` (200) makes ~200 KB
    // deltas to fill the slow client's socket, `trickle` (10) makes deltas of a few KB to fill its queue.
    const refs = (n: number, set: string) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`s${String(i).padStart(3, '0')}`, `Secret/${ns}/${set}-${i}`]),
      );
    const sizes = { fan: 200, trickle: 10 } as const;
    type Name = keyof typeof sizes;
    const holds = (name: Name, set: string) =>
      manager.registry
        .referencesOf(CONTROLLER, `ConfigMap/${ns}/${name}`)
        .filter((r) => r.referent.startsWith(`Secret/${ns}/${set}-`)).length === sizes[name];
    let flips = 0;
    const flip = async (name: Name) => {
      const set = `${name}${++flips % 2}`;
      await client.request('PUT', `/api/v1/namespaces/${ns}/configmaps/${name}`, {
        body: { metadata: { name, namespace: ns }, data: refs(sizes[name], set) },
      });
      await expect.poll(() => holds(name, set), { timeout: 20_000 }).toBe(true);
    };
    for (const name of ['fan', 'trickle'] as const) {
      await configMap(ns, name, refs(sizes[name], `${name}-start`));
      await expect.poll(() => holds(name, `${name}-start`), { timeout: 20_000 }).toBe(true);
    }

    const slow = await SseClient.connect(server.url, 'slow');
    expect((await slow.next()).event).toBe('snapshot');
    const fast = await Promise.all(['fast-1', 'fast-2'].map((name) => SseClient.connect(server.url, name)));
    for (const f of fast) f.readAlong();
    const slowStream = server.streams.get('slow')!;

    // Flip until the slow client's socket is full (the kernel takes megabytes), then fill the stream's queue.
    while (!slowStream.blocked) {
      if (flips > 200)
        throw new Error(
          `the slow client's socket never filled after ${flips} flips (${fast[0]!.bytes} bytes sent to a fast client)`,
        );
      await flip('fan');
    }
    // Then small deltas until twice the queue's mark has gone to a fast client since: the slow one's queue
    // fills with the first half, and the changes after it wait. Counted in bytes, not flips: small deltas
    // sent close together coalesce, so a fixed number of flips can stay under the mark.
    await expect.poll(() => fast[0]!.lastId, { timeout: 20_000 }).toBe(manager.changelog.revision);
    const sentBefore = fast[0]!.bytes;
    while (fast[0]!.bytes - sentBefore < 2 * HIGH_WATER_BYTES) {
      if (flips > 600) throw new Error(`the slow client's queue never filled after ${flips} flips`);
      await flip('trickle');
    }

    // The fast clients have everything, while the slow one has read nothing past its snapshot.
    const revision = manager.changelog.revision;
    await Promise.all(fast.map((f) => expect.poll(() => f.lastId, { timeout: 20_000 }).toBe(revision)));
    for (const f of fast) expect(f.view()).toEqual(viewOf(manager));
    expect(slowStream.blocked).toBe(true);

    // What the server holds for the slow client: the stream's queue, plus the chunk the socket would not take.
    const queued = await slowStream.takeQueued();
    const queuedBytes = queued.reduce((n, c) => n + c.byteLength, 0);
    // sseStream wrote until its queue reached the mark, and stopped there: the last message is the one that crossed it.
    expect(queuedBytes).toBeGreaterThanOrEqual(HIGH_WATER_BYTES);
    expect(queuedBytes - queued.at(-1)!.byteLength).toBeLessThan(HIGH_WATER_BYTES);
    // Node's own buffer takes one chunk past its mark, then the pump waits for 'drain'.
    expect(slowStream.res.writableLength).toBeLessThanOrEqual(
      slowStream.res.writableHighWaterMark + slowStream.largestWritten,
    );

    // Reading again, it catches up with one coalesced delta (or resync and snapshot), not the backlog.
    await slow.readUntil(manager.changelog.revision);
    expect(slow.view()).toEqual(viewOf(manager));
    const caughtUpWith = slowStream.after.join('').match(/^event: \w+$/gm) ?? [];
    expect([['event: delta'], ['event: resync', 'event: snapshot']]).toContainEqual(caughtUpWith);
  });

  it('closes every stream when its client goes or the server stops', async () => {
    const ns = await cluster.newNamespace('sse-close');
    const manager = startManager(ns);
    const server = await serveSse(manager);
    const clients = await Promise.all(['a', 'b', 'c'].map((n) => SseClient.connect(server.url, n)));
    for (const c of clients) expect((await c.next()).event).toBe('snapshot');
    await clients[0]!.close();
    await expect.poll(() => server.closed()).toBe(1);

    await server.stop();
    await expect.poll(() => server.closed()).toBe(3);
    expect(server.opened()).toBe(3);
    await expect(clients[1]!.next()).rejects.toThrow();
  });
});
