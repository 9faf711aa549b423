/**
 * sse.fanout: 50 SSE clients on GET /api/v1/stream while the change log takes
 * 1,000 changes/s for 10 s. Each change is a referent whose `changedAt` is the
 * instant it was put (performance.timeOrigin + performance.now()); clients
 * parse every delta and measure now − changedAt per change, so the figure is
 * change → client delivery, coalescing window included.
 *
 * The stream is sseStream() (what getStream serves) over node:http on
 * 127.0.0.1, fed by a ChangeLog; the clients run in a child process so their
 * parsing does not share the server's event loop. The child's clock is
 * aligned to the server's over IPC (offset taken from the round trip with the
 * least delay). Deltas are in the lean wire format; clients decode each with
 * decodeDelta, as the dashboard does.
 *
 * Target: p99 <= 100 ms. A change shows on every open dashboard within the tenth of a second under
 * which people see an update as immediate.
 *
 *   npx tsx bench/sse.ts
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChangeLog, decodeDelta, type ClusterInfo, type ReferentEntity, type ReferrerEntity } from '../lib/changelog';
import { Manager, MemoryInformerSource, type WakeOn } from '../lib/engine';
import { SSE_HEADERS, sseStream } from '../server/http/sse';
import { buildSnapshot } from '../server/snapshot';
import { percentile, report, result } from './report';

const CLIENTS = 50;
const RATE_PER_S = 1_000;
const DURATION_MS = 10_000;
const REFERENTS = 1_000;
const TARGET_P99_MS = 100;
const NOOP_UPDATES = 1_000;
/** How long clients get to receive the last changes before the run ends. */
const DRAIN_MS = 5_000;

const now = () => performance.timeOrigin + performance.now();

/** Messages between the server process and the clients' process. */
type ToClients = { type: 'clock'; t: number } | { type: 'finish'; expected: number };
type FromClients =
  | { type: 'clock' }
  | { type: 'ready' }
  | { type: 'result'; latencies: number[]; perClient: number[]; offsetMs: number; rttMs: number }
  | { type: 'error'; message: string };

if (process.argv[2] === 'clients') await runClients(process.argv[3]!, Number(process.argv[4]));
else {
  await runServer();
  await runNoopUpdates();
}

// ---------------------------------------------------------------- no-op updates

/**
 * sse.noop: what 1,000 status-only updates of a Ready referent (a heartbeat
 * field, the Ready condition as it was) cost a stream client, through the
 * engine: a Manager over a MemoryInformerSource, one App referencing the
 * Database, one sseStream() reader resumed at the settled revision. With
 * wakeOn 'readiness' nothing a client shows changes, so the goal is none; with
 * the default wakeOn every update reconciles the App, and its reconcile count
 * is a change the dashboard shows.
 */
async function runNoopUpdates(): Promise<void> {
  for (const wakeOn of ['readiness', 'change'] as const) {
    const { revisions, deltas, bytes } = await noopUpdates(wakeOn);
    console.log(
      `sse.noop: ${NOOP_UPDATES} status-only updates of a Ready referent, wakeOn '${wakeOn}': ${revisions} revisions, ${deltas} deltas (${bytes} bytes) on the stream`,
    );
    if (wakeOn === 'readiness') {
      result('sse.noop.revisions', revisions, 'revisions/1000 updates', '<=', 0);
      result('sse.noop.deltas', deltas, 'deltas/1000 updates', '<=', 0);
    } else {
      report('sse.noop.wake_change.revisions', revisions, 'revisions/1000 updates');
      report('sse.noop.wake_change.bytes', bytes, 'B/1000 updates');
    }
  }
}

async function noopUpdates(wakeOn: WakeOn): Promise<{ revisions: number; deltas: number; bytes: number }> {
  const source = new MemoryInformerSource({ priming: 'sync' });
  // A log of its own, written as the reconciles go, as the server gives its Manager (server/runtime.ts). The
  // Manager's own log would state every entity at once when the stream first reads it, revisions the updates
  // did not cause.
  const manager = new Manager({ source, changelog: new ChangeLog(), statsIntervalMs: 0 });
  const db = (heartbeat: number) => ({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop' },
    status: {
      observedAt: heartbeat,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: '' }],
    },
  });
  const controller = manager.addController({
    name: 'watch',
    for: { group: 'demo.refwatch.dev', kind: 'App' },
    reconcile: (ctx) => void ctx.resolve('Database.demo.refwatch.dev/shop/orders', 'spec.databaseRef', { wakeOn }),
  });
  manager.start();
  source.apply(db(0));
  source.apply({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { databaseRef: 'orders' },
  });
  const settled = async () => {
    for (let i = 0; i < 1_000; i++) {
      const q = controller.queue.stats();
      if (q.depth === 0 && q.processing === 0 && manager.registry.referrerCount === 1) return;
      await new Promise((r) => setTimeout(r, 1));
    }
    throw new Error('sse.noop: the App did not settle');
  };
  await settled();
  const log = manager.changelog;
  const from = log.revision;
  const abort = new AbortController();
  const reader = sseStream({
    changelog: log,
    snapshot: () => buildSnapshot({ changelog: log }, { mode: 'embedded', server: '', reachable: true }, []),
    lastEventId: String(from),
    signal: abort.signal,
  }).getReader();
  let deltas = 0;
  let bytes = 0;
  const decoder = new TextDecoder();
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const text = decoder.decode(value);
      if (text.startsWith(':')) continue; // the resume comment, a ping
      bytes += value.byteLength;
      deltas += text.split('event: delta\n').length - 1;
    }
  })();
  for (let i = 1; i <= NOOP_UPDATES; i++) {
    source.apply(db(i));
    // Let reconciles run and the stream flush, as a watch's events arrive spread out.
    if (i % 10 === 0) await new Promise((r) => setTimeout(r, 0));
  }
  await settled();
  await new Promise((r) => setTimeout(r, 50));
  const revisions = log.revision - from;
  abort.abort();
  await reading;
  await manager.stop();
  return { revisions, deltas, bytes };
}

// ---------------------------------------------------------------- server side

async function runServer(): Promise<void> {
  const cluster: ClusterInfo = { mode: 'embedded', server: 'http://127.0.0.1:1', context: 'embedded', reachable: true };
  const log = new ChangeLog();
  const keys = Array.from({ length: REFERENTS }, (_, i) => `Database.demo.refwatch.dev/team-${i % 20}/orders-db-${i}`);
  const referent = (i: number, state: ReferentEntity['state'], changedAt: number): ReferentEntity => {
    const key = keys[i]!;
    return {
      id: key,
      key,
      kind: 'Database.demo.refwatch.dev',
      namespace: `team-${i % 20}`,
      state,
      referencedBy: 1,
      uid: `uid-${i}`,
      resourceVersion: String(changedAt | 0),
      changedAt,
    };
  };
  const t = Date.now();
  for (let i = 0; i < REFERENTS; i++) {
    log.put('referent', keys[i]!, referent(i, 'NotReady', t));
    const key = `App.demo.refwatch.dev/team-${i % 20}/storefront-${i}`;
    const referrer: ReferrerEntity = {
      id: `watch|${key}`,
      key,
      controller: 'watch',
      kind: 'App.demo.refwatch.dev',
      namespace: `team-${i % 20}`,
      state: 'Waiting',
      since: t,
      references: 1,
      reconciles: 1,
    };
    log.put('referrer', referrer.id, referrer);
  }

  let open = 0;
  let closed = 0;
  const server = http.createServer({ noDelay: true }, (req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith('/api/v1/stream')) {
      res.writeHead(404).end();
      return;
    }
    // The socket's close is the request's abort, as in a route handler's req.signal.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const body = sseStream({
      changelog: log,
      snapshot: () => buildSnapshot({ changelog: log }, cluster, []),
      lastEventId: req.headers['last-event-id'] as string | undefined,
      signal: abort.signal,
      onOpen: () => open++,
      onClose: () => closed++,
    });
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    void pipeToResponse(body, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/stream`;

  const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, 'clients', url, String(CLIENTS)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const send = (m: ToClients) => child.send(m);
  let onReady!: () => void;
  let onResult!: (m: Extract<FromClients, { type: 'result' }>) => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const clientResult = new Promise<Extract<FromClients, { type: 'result' }>>((resolve) => (onResult = resolve));
  child.on('message', (m: FromClients) => {
    if (m.type === 'clock') send({ type: 'clock', t: now() });
    else if (m.type === 'ready') onReady();
    else if (m.type === 'result') onResult(m);
    else if (m.type === 'error') {
      console.error(`sse clients: ${m.message}`);
      process.exitCode = 1;
    }
  });
  await Promise.race([
    ready,
    exited.then((code) => Promise.reject(new Error(`the clients' process exited with ${code} before connecting`))),
  ]);
  if (open !== CLIENTS) throw new Error(`expected ${CLIENTS} streams open, have ${open}`);

  // 1,000 changes/s: each timer tick puts the changes due by now, each stamped as it is put.
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  let made = 0;
  let rssMax = 0;
  const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 250);
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - started;
      const due = Math.min(Math.floor((elapsed * RATE_PER_S) / 1000), (DURATION_MS * RATE_PER_S) / 1000);
      for (; made < due; made++) {
        const i = made % REFERENTS;
        log.put('referent', keys[i]!, referent(i, made % 2 === 0 ? 'Ready' : 'NotReady', now()));
      }
      if (elapsed >= DURATION_MS) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(rssTimer);
  rssMax = Math.max(rssMax, process.memoryUsage().rss);

  send({ type: 'finish', expected: made });
  const r = await clientResult;
  await exited;
  // The clients hung up: every stream must have seen its close.
  const deadline = Date.now() + 5_000;
  while (closed < CLIENTS && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));

  const sorted = Float64Array.from(r.latencies).sort();
  const lat = Array.from(sorted);
  const delivered = r.perClient.reduce((a, b) => a + b, 0);
  const short = r.perClient.filter((n) => n < made).length;
  console.log(
    `sse.fanout: sseStream() over node:http on 127.0.0.1 fed by a ChangeLog (${REFERENTS} referents, ${REFERENTS} referrers); ${CLIENTS} clients in a child process`,
  );
  console.log(
    `sse.fanout: ${made} changes in ${(wallMs / 1000).toFixed(1)} s (${Math.round((made * 1000) / wallMs)}/s); ${delivered} deliveries (${CLIENTS} × ${made} expected; ${short} clients short)`,
  );
  console.log(
    `sse.fanout: clock offset ${r.offsetMs.toFixed(3)} ms (±${(r.rttMs / 2).toFixed(3)} ms); latency p50 ${percentile(lat, 50).toFixed(2)} ms, p99 ${percentile(lat, 99).toFixed(2)} ms, p99.9 ${percentile(lat, 99.9).toFixed(2)} ms, max ${lat.at(-1)?.toFixed(2)} ms`,
  );
  console.log(`sse.fanout: streams opened ${open}, closed ${closed}`);
  if (short > 0 || closed !== CLIENTS) process.exitCode = 1;
  report('sse.fanout.server_cpu', Number((((cpu.user + cpu.system) / 1000 / wallMs) * 100).toFixed(1)), '%core');
  report('sse.fanout.server_rss', Number((rssMax / 1e6).toFixed(1)), 'MB(max)');
  report('sse.fanout.p50', Number(percentile(lat, 50).toFixed(2)), 'ms');
  result('sse.fanout', Number(percentile(lat, 99).toFixed(2)), 'ms(p99)', '<=', TARGET_P99_MS);
}

/** pipeToResponse writes a web stream to a Node response, waiting for 'drain' so a slow socket holds the stream back. */
async function pipeToResponse(body: ReadableStream<Uint8Array>, res: http.ServerResponse): Promise<void> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
      }
    }
  } catch {
    // The client went away mid-write: the close already aborted the stream.
  } finally {
    await reader.cancel().catch(() => undefined);
    res.end();
  }
}

// ---------------------------------------------------------------- clients' side

async function runClients(url: string, n: number): Promise<void> {
  const fail = (e: unknown) => {
    process.send!({ type: 'error', message: e instanceof Error ? e.message : String(e) } satisfies FromClients);
    process.exit(1);
  };
  try {
    const inbox: ToClients[] = [];
    let wake: (() => void) | undefined;
    process.on('message', (m: ToClients) => {
      inbox.push(m);
      wake?.();
    });
    const receive = async (): Promise<ToClients> => {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return inbox.shift()!;
    };

    // Clock alignment: offset = server clock − this clock, from the exchange with the shortest round trip.
    let offsetMs = 0;
    let rttMs = Infinity;
    for (let i = 0; i < 20; i++) {
      const t0 = now();
      process.send!({ type: 'clock' } satisfies FromClients);
      const m = await receive();
      const t1 = now();
      if (m.type !== 'clock') throw new Error(`expected a clock reply, got ${m.type}`);
      if (t1 - t0 < rttMs) {
        rttMs = t1 - t0;
        offsetMs = m.t - (t0 + t1) / 2;
      }
    }

    const latencies: number[] = [];
    const perClient = new Array<number>(n).fill(0);
    const requests: http.ClientRequest[] = [];
    let snapshots = 0;
    let allConnected!: () => void;
    const connected = new Promise<void>((resolve) => (allConnected = resolve));
    for (let c = 0; c < n; c++) {
      const client = c;
      let buf = '';
      const req = http.get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return fail(new Error(`client ${client}: GET ${url} answered ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const arrived = now() + offsetMs;
          buf += text;
          for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
            const block = buf.slice(0, end);
            buf = buf.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            if (event === 'snapshot') {
              if (++snapshots === n) allConnected();
              continue;
            }
            if (event !== 'delta') continue;
            const data = /^data: (.*)$/m.exec(block)?.[1];
            const delta = decodeDelta(JSON.parse(data!));
            for (const ch of delta.changes) {
              if (ch.entity !== 'referent' || ch.removed) continue;
              latencies.push(arrived - ch.value.changedAt);
              perClient[client]!++;
            }
          }
        });
        res.on('error', () => undefined); // our own hang-up at the end
      });
      req.on('error', (e) => {
        if (!finishing) fail(e);
      });
      requests.push(req);
    }
    let finishing = false;
    await connected;
    process.send!({ type: 'ready' } satisfies FromClients);

    const m = await receive();
    if (m.type !== 'finish') throw new Error(`expected finish, got ${m.type}`);
    const deadline = Date.now() + DRAIN_MS;
    while (perClient.some((x) => x < m.expected) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    finishing = true;
    for (const req of requests) req.destroy();
    process.send!({ type: 'result', latencies, perClient, offsetMs, rttMs } satisfies FromClients, () =>
      process.exit(0),
    );
  } catch (e) {
    fail(e);
  }
}
