/**
 * wire: GET /api/v1/snapshot and the stream's first snapshot on a registry of
 * a million references, served by the server's own handlers (getSnapshot,
 * getStream) over node:http on 127.0.0.1, behind the compression middleware
 * Next's server puts in front of every route (next.config.js `compress`). The
 * registry is a Manager over MemoryInformerSource (bench/wire/cluster.ts):
 * 333,334 Apps × 3 references.
 *
 * - api.snapshot.bytesPerReference: the uncompressed body's bytes / references
 *   in the lean format, which the dashboard and the CLI ask for; the gzip body
 *   is reported beside it, and so is the plain entity JSON that scripts get
 *   (api.snapshot.plain.bytesPerReference, and its loop hold), with no target:
 *   scripts that read a million references accept its size.
 * - api.snapshot.maxBlockMs: the longest the event loop was held while the three
 *   lean requests (identity, gzip, stream) were answered, one after the other,
 *   while 1,000 referrers/s changed. A 1 ms interval timer measures it: each
 *   gap beyond 1 ms is time nothing else could run. On a shared, loaded
 *   machine a gap is also time the OS ran other processes, so a gap counts
 *   only the CPU time the main thread used in it (Linux schedstat of the main
 *   thread; elsewhere the process's CPU time, which errs high); the
 *   wall-clock maximum is reported beside it. GC pauses count: a heap holding
 *   a million references pauses for collections whatever request runs, so
 *   the figure without them (gaps less the 'gc' performance entries within
 *   them) and the longest pause are reported too, and so are the pauses'
 *   total and the scavenges' (the young generation's collections), over all
 *   four requests: what a request keeps young, every scavenge copies.
 *
 * Targets: <= 150 bytes a reference uncompressed, so a million-reference snapshot (150 MB) still
 * opens in a browser tab; <= 50 ms of the event loop held, so the watches and the other clients of a
 * server answering a snapshot wait no longer than a few frames of a dashboard.
 *
 * The client reads each body in a worker thread of this process, counting
 * bytes only: the probe measures the server's event loop, not the client's.
 *
 *   npm run bench -- wire         REFWATCH_WIRE_APPS=10000 for a quick run
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { LEAN_MEDIA_TYPE, type ClusterInfo } from '../../lib/changelog';
import { getSnapshot, getStream } from '../../server/api';
import type { Runtime } from '../../server/runtime';
import { ReferrerSummary } from '../../server/summary';
import { SummaryFeed } from '../../server/summary-feed';
import { report, result } from '../report';
import { buildRegistry } from './cluster';

const HEAP_MB = 12_288;
// A million references and their Manager need more than the default heap: rerun with more.
if (!process.execArgv.some((a) => a.startsWith('--max-old-space-size'))) {
  const r = spawnSync(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, ...process.execArgv, import.meta.filename, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(r.status ?? 1);
}

const APPS = Number(process.env.REFWATCH_WIRE_APPS ?? 333_334);
const TARGET_BYTES = 150;
const TARGET_BLOCK_MS = 50;
const CHURN_PER_S = 1000;

const cluster: ClusterInfo = {
  mode: 'embedded',
  server: 'http://127.0.0.1:1',
  context: 'embedded',
  reachable: true,
  version: 'v1.35.4',
};

const { manager, references, setupMs } = await buildRegistry(APPS);
console.log(
  `wire: ${APPS} referrers, ${references} references, ${manager.changelog.size('referent')} referents; set up in ${(setupMs / 1000).toFixed(1)} s; heap ${(process.memoryUsage().heapUsed / 1e9).toFixed(2)} GB`,
);

// The parts of the runtime the two handlers read; the overview's summary follows the change log, as in the server.
const summary = new ReferrerSummary(manager.changelog, { stuckThresholdMs: 30_000 });
const summaryFeed = new SummaryFeed(summary);
const rt = {
  manager,
  changelog: manager.changelog,
  summary,
  summaryFeed,
  config: { stuckThresholdMs: 30_000, mutationRate: 5, streamsPerClient: 16, streamsTotal: 256 },
  cluster: () => cluster,
  onCluster: () => () => undefined,
  metrics: { sseClients: { inc: () => undefined, dec: () => undefined } },
} as unknown as Runtime;

type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;
const compress = (createRequire(import.meta.url)('next/dist/compiled/compression') as () => Middleware)();
const server = http.createServer((req, res) => void serve(req, res));
async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  compress(req, res, () => undefined);
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const request = new Request(`http://127.0.0.1${req.url}`, {
    headers: req.headers as Record<string, string>,
    signal: abort.signal,
  });
  const response = req.url!.startsWith('/api/v1/stream') ? getStream(rt, request) : await getSnapshot(rt, request);
  for (const [name, value] of response.headers) res.setHeader(name, value);
  res.statusCode = response.status;
  const reader = response.body!.getReader();
  // One 'drain' listener for the whole body: the compression middleware hands res.on('drain') to its gzip stream,
  // but a res.once listener removes itself from res, so each wait left one behind on the stream.
  let drained: (() => void) | undefined;
  res.on('drain', () => drained?.());
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (!res.write(r.value)) await new Promise<void>((resolve) => (drained = resolve));
    }
  } catch {
    // the client hung up
  } finally {
    res.end();
  }
}
// Node loads fetch's Request and Response (undici) on first use, ~20 ms once per process; a Next server has long done so.
void new Response(new Request('http://127.0.0.1/').body);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/**
 * The client: a worker thread that reads a response, counting its bytes; a
 * stream is read until its first message (the snapshot) is whole. It runs
 * beside the server's event loop, not in it: parsing 80 MB of chunked HTTP
 * is the client's work, and in the server's loop it held the probe up to
 * hundreds of milliseconds.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
parentPort.on('message', ({ url, headers, stream }) => {
  const t0 = performance.now();
  const done = (r) => parentPort.postMessage(r);
  const req = http.get(url, { headers, agent: false }, (res) => {
    let bytes = 0;
    let tail = '';
    res.on('data', (chunk) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1', Math.max(0, chunk.length - 64))).slice(-64);
      if (stream && tail.endsWith('\\n\\n') && bytes > 1000) {
        req.destroy();
        done({ bytes, ms: performance.now() - t0, tail });
      }
    });
    res.on('end', () => done({ bytes, ms: performance.now() - t0, encoding: res.headers['content-encoding'], tail }));
    res.on('error', (e) => done({ error: String(e) }));
  });
  req.on('error', (e) => (req.destroyed ? undefined : done({ error: String(e) })));
});
`;
const client = new Worker(CLIENT, { eval: true });

function get(
  path: string,
  headers: Record<string, string>,
): Promise<{ bytes: number; ms: number; encoding?: string; tail: string }> {
  return new Promise((resolve, reject) => {
    client.once('message', (r: { bytes: number; ms: number; encoding?: string; tail: string; error?: string }) =>
      r.error ? reject(new Error(r.error)) : resolve(r),
    );
    client.postMessage({ url: `${base}${path}`, headers, stream: path.startsWith('/api/v1/stream') });
  });
}

// The probe: a 1 ms timer; any longer gap is the loop held, for as long as the main thread ran in it.
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const cpuMs = existsSync(schedstat)
  ? () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e6
  : () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
let maxGap = 0;
let maxWallGap = 0;
/** Gaps over 10 ms, [start, end, held], to take the GC pauses within them out afterwards. */
const gaps: [number, number, number][] = [];
const gcPauses: PerformanceEntry[] = [];
const gcObserver = new PerformanceObserver((list) => gcPauses.push(...list.getEntries()));
gcObserver.observe({ entryTypes: ['gc'] });
let last = performance.now();
let lastCpu = cpuMs();
const probe = setInterval(() => {
  const now = performance.now();
  const cpu = cpuMs();
  const wall = now - last - 1;
  maxWallGap = Math.max(maxWallGap, wall);
  const held = Math.min(wall, cpu - lastCpu);
  maxGap = Math.max(maxGap, held);
  if (held > 10) gaps.push([last, now, held]);
  last = now;
  lastCpu = cpu;
}, 1);
// Churn: referrers change while snapshots are captured and encoded.
let churned = 0;
const referrerIds = manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer.map((r) => r.id);
const churn = setInterval(() => {
  for (let k = 0; k < CHURN_PER_S / 100; k++) {
    const id = referrerIds[churned++ % referrerIds.length]!;
    const prev = manager.changelog.get('referrer', id);
    if (prev)
      manager.changelog.put('referrer', id, { ...prev, reconciles: prev.reconciles + 1, lastReconcileAt: Date.now() });
  }
}, 10);

const lean = { accept: LEAN_MEDIA_TYPE };
const runs: [string, string, Record<string, string>][] = [
  ['identity', '/api/v1/snapshot', lean],
  ['gzip', '/api/v1/snapshot', { ...lean, 'accept-encoding': 'gzip, deflate, br' }],
  // What `curl … | jq` gets: no target, reported beside the lean figures.
  ['plain', '/api/v1/snapshot', { accept: '*/*' }],
  // Last: the client hangs up on a stream, and its socket's late 'aborted' must find no request waiting.
  ['stream', '/api/v1/stream?format=lean', { accept: 'text/event-stream' }],
];
const sizes: Record<string, number> = {};
const blocks: number[] = [];
const wallBlocks: number[] = [];
for (const [name, path, headers] of runs) {
  maxGap = 0;
  maxWallGap = 0;
  last = performance.now();
  lastCpu = cpuMs();
  const gapsBefore = gaps.length;
  const r = await get(path, headers);
  const encoding = name === 'plain' ? 'identity' : name;
  if (name !== 'stream' && (r.encoding ?? 'identity') !== encoding)
    throw new Error(`GET ${path} with ${JSON.stringify(headers)} came back ${r.encoding ?? 'identity'}`);
  sizes[name] = r.bytes;
  if (name !== 'plain') {
    blocks.push(maxGap);
    wallBlocks.push(maxWallGap);
  } else {
    gaps.length = gapsBefore; // the judged and reported figures without GC are the lean path's
  }
  console.log(
    `wire: ${name.padEnd(8)} ${(r.bytes / 1e6).toFixed(1)} MB in ${(r.ms / 1000).toFixed(2)} s; loop held at most ${maxGap.toFixed(1)} ms (wall-clock gap ${maxWallGap.toFixed(1)} ms)`,
  );
  report(`api.snapshot.maxBlockMs.${name}`, Number(maxGap.toFixed(1)), 'ms');
}
clearInterval(probe);
clearInterval(churn);
await new Promise((resolve) => setTimeout(resolve, 100)); // the last gc entries are delivered
gcObserver.disconnect();
const inGap = (start: number, end: number) =>
  gcPauses.filter((g) => g.startTime >= start && g.startTime < end).reduce((sum, g) => sum + g.duration, 0);
const maxWithoutGc = Math.max(0, ...gaps.map(([start, end, held]) => held - inGap(start, end)));
const maxGcPause = Math.max(0, ...gcPauses.map((g) => g.duration));
const scavenges = gcPauses.filter(
  (g) => (g as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR,
);
const totalMs = (list: PerformanceEntry[]) => list.reduce((sum, g) => sum + g.duration, 0);
await client.terminate();
server.closeAllConnections();
await new Promise((resolve) => server.close(resolve));
summaryFeed.stop();
summary.stop();
await manager.stop();

const maxBlock = Math.max(...blocks);
console.log(
  `wire: ${churned} referrer changes during the run; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
report('api.snapshot.maxBlockMs.withoutGc', Number(maxWithoutGc.toFixed(1)), 'ms');
report('api.snapshot.maxGcPauseMs', Number(maxGcPause.toFixed(1)), 'ms');
report('api.snapshot.gcPauseMs', Number(totalMs(gcPauses).toFixed(0)), 'ms(all four requests)');
report('api.snapshot.scavengeMs', Number(totalMs(scavenges).toFixed(0)), `ms(${scavenges.length} scavenges)`);
report(
  'api.snapshot.maxBlockMs.wallClock',
  Number(Math.max(...wallBlocks).toFixed(1)),
  'ms(wall, includes time descheduled)',
);
report('api.snapshot.bytes', sizes.identity!, 'bytes');
report('api.snapshot.gzipBytesPerReference', Number((sizes.gzip! / references).toFixed(1)), 'bytes');
report('api.snapshot.plain.bytesPerReference', Number((sizes.plain! / references).toFixed(1)), 'bytes(uncompressed)');
result(
  'api.snapshot.bytesPerReference',
  Number((sizes.identity! / references).toFixed(1)),
  'bytes(uncompressed)',
  '<=',
  TARGET_BYTES,
);
result(
  'api.snapshot.maxBlockMs',
  Number(maxBlock.toFixed(1)),
  `ms(at ${references} references)`,
  '<=',
  TARGET_BLOCK_MS,
);
