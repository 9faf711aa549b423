import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../lib/kube';
import { startRealCluster } from '../../tests/setup/real-cluster';
import { pooledPercentile, report, result } from '../report';
import { COMPACTION_OFF, compactEtcd } from './etcd-compaction';
import { latencyRatio, type LatencyRatio } from './latency-ratio';
import { parseMemoryLimit } from './memory-limit';
import { DEFAULT_PLAN, parseImplementations, parsePlan } from './plan';
import {
  IMPLEMENTATIONS,
  isNodeImplementation,
  prepareCluster,
  runPeer,
  type Implementation,
  type RunFigures,
} from './peer-run';
import { requestsRatio } from './requests-ratio';

// peer: refwatch's App controller against the same controller written with
// controller-runtime (cr-watch, cr-backoff), against a bare client-go
// watch (raw-watch, the floor) and against plain node doing the same work
// (node-floor), on one real kube-apiserver, one
// implementation at a time, in rotating order, several rounds per size.
//
// Env:
//   REFWATCH_PEER_PLAN        sizes and rounds, APPSxROUNDS[@impl+impl], default "1000x5,5000x3@refwatch+cr-watch+raw-watch"
//                             (bench/peer/plan.ts: @ names the implementations that run at that size)
//   REFWATCH_PEER_IMPLS       implementations, default "refwatch,cr-watch,cr-backoff,raw-watch,node-floor"
//                             (node-floor: the same job in plain node with nothing of refwatch,
//                             bench/peer/node-floor.ts; its ratios to cr-watch are reported, the floor
//                             any node library starts from)
//   REFWATCH_PEER_TIMEOUT_MS  wait after the last referent is Ready, default 30000
//   REFWATCH_PEER_WORKERS     concurrent reconciles in every implementation, default 8
//   REFWATCH_PEER_CPU_PROF    a directory: refwatch's process writes V8 CPU profiles there
//   REFWATCH_PEER_NODE_ARGS   node flags for refwatch's and node-floor's processes, for measurement only (e.g.
//                             --trace-gc-nvp, read by bench/peer/gc-survivors.ts); its figures are then not the bench's
//   REFWATCH_PEER_DEBUG       refwatch's process notes each change of its watches and each resolution later than
//                             100 ms, and writes them to stderr when it stops (bench/peer/lag-probe.ts); every
//                             implementation's stdout and stderr are copied to the benchmark's stderr, prefixed with
//                             its name
//   REFWATCH_PEER_HEAP_PROF   a directory: refwatch's process writes a heap profile, its memory at its peak and a
//                             heap snapshot there (bench/peer/memory-profile.ts); its figures are then not the bench's
//   REFWATCH_PEER_SAMPLES     a directory: each run's latencies are written there as IMPL.nAPPS.rROUND.tsv, one
//                             row per App: seconds since the run's first referent became Ready, latency ms, how
//                             long the server took to answer the patch that made it Ready (ms), that readyAt in
//                             epoch ms, and how long after it the generator's own watch heard of it (ms)
//   REFWATCH_PEER_MEMORY_LIMIT  e.g. 128Mi: every implementation runs in a memory cgroup of that limit, as a pod's
//                             resources.limits.memory gives a container (bench/peer/memory-limit.ts; needs root).
//                             Its figures are named with a .limit128Mi suffix, beside the unlimited ones the
//                             targets below were set on
//
// Targets, refwatch ÷ cr-watch; set from what a controller author needs, not from a run. Latency is judged as the
// reaction: from the moment the App's last referent's Ready event reached the generator's own watch of its kind
// (a watcher like the implementation's, on the same server) to the resolvedAt the implementation stamped. From
// readyAt, stamped before the generator's patch, the figure is mostly the server's: in a three-round run at
// 1,000 Apps the event reached the generator's watch a p99 of 53–110 ms after readyAt, round by round, against
// reaction p99s of 5–61 ms. kube-apiserver's bursts of CPU fall on whichever run is under way, and raw-watch,
// a bare client-go watch doing less than either controller, was 2.49 and 0.83 times controller-runtime's p99 from
// readyAt in two such runs. So those ratios are printed beside the judged ones, with no target.
// Latency percentiles are taken over every App of every round (a tail that shows in one round is part of the
// tail a user meets; one round's p99 is its 10th-slowest App of 1,000, which one stall of the machine decides),
// the rounds' own ratios printed beside them; the other figures are round by round, median over the rounds:
//   latency p50 and p99 <= 1, requests/App <= 1: refwatch is only worth adopting if it resolves no later
//     than the controller it replaces and costs the API server no more;
//   CPU <= 0.9: refwatch does less per event than controller-runtime (one shared watch per kind, cached
//     objects frozen once instead of deep-copied per read), so it must show it, with a margin that a
//     loaded machine's noise does not erase;
//   peak RSS <= 1.5: a refwatch controller must fit in the memory request a team sizes for the
//     controller-runtime one it replaces, with the usual half again of headroom; a Node process's fixed
//     cost (the node binary's pages, V8's young generation) is part of what a user pays, so it counts.
//   All with plain node and no V8 flags: a user runs the package as it comes.

const SEED = 42;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: "${raw}" must be a whole number of at least 1`);
  return n;
}

/**
 * readyAfter keeps the event rate of 1,000 Apps over 1–20 s: larger runs
 * spread readiness in proportion (5,000 Apps over 1–100 s), since 5,000
 * Apps in 20 s saturate a kube-apiserver on two cores.
 */
function readyAfter(apps: number): { minMs: number; maxMs: number } {
  return { minMs: 1_000, maxMs: Math.max(20_000, 20 * apps) };
}

function runLine(f: RunFigures): string {
  const l = f.latencyMs;
  const censored = f.unresolved > 0 ? ` (${f.unresolved} unresolved, censored)` : '';
  const top = Object.entries(f.requests.byKey)
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.REFWATCH_PEER_SHOW_REQUESTS ?? 4))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const r = f.reactionMs;
  return `${f.implementation.padEnd(10)} p50 ${l.p50} p90 ${l.p90} p99 ${l.p99} max ${l.max} ms${censored} (reaction p50 ${r.p50} p99 ${r.p99} max ${r.max}); cpu ${f.cpuSeconds.toFixed(2)} s${isNodeImplementation(f.implementation) ? ` (main thread ${f.mainThreadCpuSeconds.toFixed(2)})` : ''}; peak RSS ${mb(f.peakRssBytes)} MB (${mb(f.readyRssBytes)} when ready; file-backed ${mb(f.rssFileBytes.ready)} when ready, ${mb(f.rssFileBytes.end)} at the end); ${f.requests.perApp.toFixed(2)} requests/App (${f.requests.total}); ${f.openWatches} watches (${Object.entries(
    f.openWatchesByResource,
  )
    .map(([r, n]) => `${r.split('.')[0]} ${n}`)
    .join(', ')}); created in ${(f.createMs / 1000).toFixed(1)} s; server saw (incl. generator) ${top}`;
}

/**
 * writeSamples writes one run's latencies as TSV: seconds since its first referent became Ready, latency in ms, and
 * how long the server took to answer the patch that made the App's last referent Ready (empty for a Secret).
 */
function writeSamples(dir: string, name: string, f: RunFigures): void {
  const first = Math.min(...f.latencySamples.map((s) => s.readyAt));
  const rows = [...f.latencySamples]
    .sort((a, b) => a.readyAt - b.readyAt)
    .map(
      (s) =>
        `${((s.readyAt - first) / 1000).toFixed(3)}\t${s.latencyMs}\t${s.writeMs ?? ''}\t${s.readyAt}\t${s.seenMs ?? ''}`,
    );
  writeFileSync(path.join(dir, name), `readyAtS\tlatencyMs\twriteMs\treadyAtMs\tseenMs\n${rows.join('\n')}\n`);
}

function mb(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

function median(values: number[]): number {
  const s = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function spread(values: number[], digits: number): string {
  const med = median(values);
  if (values.length < 2) return med.toFixed(digits);
  return `${med.toFixed(digits)} [${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}]`;
}

const COLUMNS: [string, (f: RunFigures) => number, number][] = [
  ['p50 ms', (f) => f.latencyMs.p50, 0],
  ['p90 ms', (f) => f.latencyMs.p90, 0],
  ['p99 ms', (f) => f.latencyMs.p99, 0],
  ['max ms', (f) => f.latencyMs.max, 0],
  ['reaction p50 ms', (f) => f.reactionMs.p50, 0],
  ['reaction p99 ms', (f) => f.reactionMs.p99, 0],
  ['unresolved', (f) => f.unresolved, 0],
  ['CPU s', (f) => f.cpuSeconds, 2],
  ['peak RSS MB', (f) => f.peakRssBytes / 2 ** 20, 1],
  ['RSS ready MB', (f) => f.readyRssBytes / 2 ** 20, 1],
  ['RssFile end MB', (f) => f.rssFileBytes.end / 2 ** 20, 1],
  ['requests/App', (f) => f.requests.perApp, 2],
  ['watches', (f) => f.openWatches, 0],
];

/** printRatio prints how a latency ratio was taken, above its RESULT line, and gives back its name. */
function printRatio(name: string, what: string, r: LatencyRatio): string {
  console.log(
    `${name}: ${what} over every App of ${r.rounds} round(s), refwatch ${r.ours} ms ÷ cr-watch ${r.theirs} ms; rounds' own ratios ${spread(r.perRound, 2)}`,
  );
  return name;
}

/** reactionsOf gives each run's reactions where latencyRatio reads latencies. */
function reactionsOf(rounds: RunFigures[][]): { implementation: string; latencies: readonly number[] }[][] {
  return rounds.map((round) => round.map((f) => ({ implementation: f.implementation, latencies: f.reactions })));
}

function figuresOf(rounds: RunFigures[][], impl: Implementation): RunFigures[] {
  return rounds.flatMap((round) => round.filter((f) => f.implementation === impl));
}

/** summaryTable is a Markdown table, one row per implementation, as the README shows it. */
function summaryTable(rounds: RunFigures[][], impls: Implementation[]): string {
  const lines = [
    `| implementation | ${COLUMNS.map((c) => c[0]).join(' | ')} |`,
    `|---|${COLUMNS.map(() => '---:').join('|')}|`,
  ];
  for (const impl of impls) {
    const fs = figuresOf(rounds, impl);
    lines.push(`| ${impl} | ${COLUMNS.map(([, get, d]) => spread(fs.map(get), d)).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** perRound is one implementation's figure (refwatch's unless `of` says) against another's, round by round. */
function perRound(
  rounds: RunFigures[][],
  other: Implementation,
  combine: (a: RunFigures, b: RunFigures) => number,
  of: Implementation = 'refwatch',
): number[] {
  const out: number[] = [];
  for (const round of rounds) {
    const a = round.find((f) => f.implementation === of);
    const b = round.find((f) => f.implementation === other);
    if (a && b) out.push(combine(a, b));
  }
  return out;
}

function results(apps: number, rounds: RunFigures[][], impls: Implementation[], limit: string | undefined): void {
  const s = `.n${apps}${limit ? `.limit${limit}` : ''}`;
  const ratio = (get: (f: RunFigures) => number) => (a: RunFigures, b: RunFigures) =>
    get(a) / Math.max(get(b), Number.EPSILON);
  const withSpread = (name: string, values: number[], digits: number) => {
    if (values.length > 1) console.log(`${name}: ${spread(values, digits)} over ${values.length} rounds`);
    return median(values);
  };
  if (impls.includes('refwatch') && impls.includes('cr-watch')) {
    for (const p of [50, 99]) {
      const judged = latencyRatio(reactionsOf(rounds), 'refwatch', 'cr-watch', p);
      result(printRatio(`peer.ratio.p${p}${s}`, `p${p} of the reaction`, judged), judged.ratio, 'x', '<=', 1);
      // No target: from readyAt, the server's own time included, which falls on whichever implementation runs.
      const endToEnd = latencyRatio(rounds, 'refwatch', 'cr-watch', p);
      report(printRatio(`peer.ratio.endToEnd.p${p}${s}`, `p${p} from readyAt`, endToEnd), endToEnd.ratio, 'x');
    }
    const requestRatios = perRound(rounds, 'cr-watch', (a, b) => {
      const r = requestsRatio({ ...a, perApp: a.requests.perApp }, { ...b, perApp: b.requests.perApp });
      if ('ratio' in r) return r.ratio;
      console.log(`peer.ratio.requestsPerApp${s}: one round not measurable (${r.notMeasurable}); left out`);
      return NaN;
    });
    // No measurable round leaves NaN, which never meets the target: an unchecked figure does not pass.
    result(
      `peer.ratio.requestsPerApp${s}`,
      withSpread(
        `peer.ratio.requestsPerApp${s}`,
        requestRatios.filter((v) => !Number.isNaN(v)),
        2,
      ),
      'x',
      '<=',
      1,
    );
    result(
      `peer.ratio.rss${s}`,
      withSpread(
        `peer.ratio.rss${s}`,
        perRound(
          rounds,
          'cr-watch',
          ratio((f) => f.peakRssBytes),
        ),
        2,
      ),
      'x',
      '<=',
      1.5,
    );
    result(
      `peer.ratio.cpu${s}`,
      withSpread(
        `peer.ratio.cpu${s}`,
        perRound(
          rounds,
          'cr-watch',
          ratio((f) => f.cpuSeconds),
        ),
        2,
      ),
      'x',
      '<=',
      0.9,
    );
  }
  if (impls.includes('node-floor') && impls.includes('cr-watch')) {
    // No target: what plain node, doing the same work with nothing of refwatch, costs beside controller-runtime.
    for (const [figure, get] of [
      ['rss', (f: RunFigures) => f.peakRssBytes],
      ['cpu', (f: RunFigures) => f.cpuSeconds],
    ] as const) {
      const name = `peer.node-floor.ratio.${figure}${s}`;
      report(name, withSpread(name, perRound(rounds, 'cr-watch', ratio(get), 'node-floor'), 2), 'x');
    }
  }
  if (impls.includes('refwatch') && impls.includes('raw-watch')) {
    result(
      `peer.overhead.p50${s}`,
      withSpread(
        `peer.overhead.p50${s}`,
        perRound(rounds, 'raw-watch', (a, b) => a.reactionMs.p50 - b.reactionMs.p50),
        1,
      ),
      'ms',
      '<=',
      1,
    );
  }
  for (const impl of impls) {
    const fs = figuresOf(rounds, impl);
    const m = (get: (f: RunFigures) => number) => median(fs.map(get));
    for (const p of [50, 90, 99]) {
      report(
        `peer.${impl}.p${p}${s}`,
        pooledPercentile(
          fs.map((f) => f.latencies),
          p,
        ).pooled,
        'ms',
      );
      report(
        `peer.${impl}.reaction.p${p}${s}`,
        pooledPercentile(
          fs.map((f) => f.reactions),
          p,
        ).pooled,
        'ms',
      );
    }
    report(`peer.${impl}.max${s}`, Math.max(...fs.map((f) => f.latencyMs.max)), 'ms');
    report(
      `peer.${impl}.unresolved${s}`,
      m((f) => f.unresolved),
      'Apps',
    );
    report(
      `peer.${impl}.cpu${s}`,
      m((f) => f.cpuSeconds),
      's',
    );
    if (isNodeImplementation(impl))
      report(
        `peer.${impl}.cpuMainThread${s}`,
        m((f) => f.mainThreadCpuSeconds),
        's',
      );
    report(
      `peer.${impl}.rss${s}`,
      m((f) => f.peakRssBytes / 2 ** 20),
      'MB',
    );
    report(
      `peer.${impl}.requestsPerApp${s}`,
      m((f) => f.requests.perApp),
      'requests',
    );
    report(
      `peer.${impl}.watches${s}`,
      m((f) => f.openWatches),
      'watches',
    );
  }
}

async function main(): Promise<void> {
  const impls = parseImplementations(
    (process.env.REFWATCH_PEER_IMPLS ?? IMPLEMENTATIONS.join(',')).split(',').map((s) => s.trim()),
  );
  const plan = parsePlan(process.env.REFWATCH_PEER_PLAN ?? DEFAULT_PLAN, impls);
  const timeoutAfterReadyMs = positiveInt('REFWATCH_PEER_TIMEOUT_MS', 30_000);
  const workers = positiveInt('REFWATCH_PEER_WORKERS', 8);
  const cpuProfDir = process.env.REFWATCH_PEER_CPU_PROF ? path.resolve(process.env.REFWATCH_PEER_CPU_PROF) : undefined;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  // refwatch's process writes its memory profile there as it stops, into a directory that must exist by then.
  if (process.env.REFWATCH_PEER_HEAP_PROF) mkdirSync(process.env.REFWATCH_PEER_HEAP_PROF, { recursive: true });
  const samplesDir = process.env.REFWATCH_PEER_SAMPLES ? path.resolve(process.env.REFWATCH_PEER_SAMPLES) : undefined;
  if (samplesDir) mkdirSync(samplesDir, { recursive: true });
  const limit = process.env.REFWATCH_PEER_MEMORY_LIMIT?.trim() || undefined;
  const memoryLimitBytes = limit === undefined ? undefined : parseMemoryLimit(limit);

  const build = spawnSync('bash', [path.join(import.meta.dirname, 'build.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const goBinary = build.stdout.trim().split('\n').pop() ?? '';
  if (build.status !== 0 || !goBinary) {
    console.error(`bench/peer/build.sh exited with ${build.status ?? build.signal}: the Go side cannot run`);
    process.exit(1);
  }

  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(
    `== peer on a real kube-apiserver: ${plan.map((s) => `${s.apps} Apps × ${s.rounds} rounds of ${s.implementations.join(', ')}`).join('; ')}; ${workers} workers each; ${os.cpus().length} CPUs, load ${load()}`,
  );
  console.log(
    "client-side rate limit: none on either side (client-go QPS -1, as ctrl.GetConfig() sets it; refwatch's client has no limiter); refwatch runs with plain node, compiled from its sources once per run (no TypeScript loader)",
  );
  if (limit)
    console.log(
      `memory: every implementation runs in a memory cgroup limited to ${limit}, as a pod's resources.limits.memory (node sizes its heap from it; Go does not read it)`,
    );
  const real = await startRealCluster({ apiserverFlags: [COMPACTION_OFF] });
  const byRound = new Map<number, { rounds: RunFigures[][]; impls: Implementation[] }>();
  let failures = 0;
  try {
    console.log(`kube-apiserver ${real.version} at ${real.url}`);
    const client = KubeClient.fromFile(real.kubeconfigPath, { requestTimeoutMs: 120_000 });
    await prepareCluster(client);
    const cluster = {
      endpoint: { url: real.url, token: real.token, ca: real.ca },
      kubeconfigPath: real.kubeconfigPath,
      client,
    };
    for (const size of plan) {
      const rounds: RunFigures[][] = [];
      const impls = size.implementations;
      byRound.set(size.apps, { rounds, impls });
      const ready = readyAfter(size.apps);
      console.log(
        `== ${size.apps} Apps, referents Ready uniformly over ${ready.minMs / 1000}–${ready.maxMs / 1000} s (seed ${SEED}); load ${load()}`,
      );
      for (let r = 0; r < size.rounds; r++) {
        const order = impls.map((_, i) => impls[(i + r) % impls.length]!);
        const round: RunFigures[] = [];
        for (const implementation of order) {
          try {
            const f = await runPeer(cluster, {
              implementation,
              apps: size.apps,
              readyAfter: ready,
              seed: SEED,
              workers,
              timeoutAfterReadyMs,
              goBinary,
              cpuProfDir,
              memoryLimitBytes,
            });
            round.push(f);
            if (samplesDir) writeSamples(samplesDir, `${implementation}.n${size.apps}.r${r + 1}.tsv`, f);
            console.log(`  round ${r + 1} ${runLine(f)}; load ${load()}`);
          } catch (e) {
            // A failed run leaves a gap in its round; the other runs still count.
            failures++;
            console.error(`  round ${r + 1} ${implementation} FAILED: ${e instanceof Error ? e.message : String(e)}`);
          }
          // After every run, failed or not, so that the next starts from a compacted store (etcd-compaction.ts).
          const compactStart = Date.now();
          const revision = await compactEtcd(real.etcdUrl);
          console.log(`    etcd compacted at revision ${revision} in ${Date.now() - compactStart} ms`);
        }
        rounds.push(round);
      }
    }
  } finally {
    await real.stop();
  }

  for (const [apps, { rounds, impls }] of byRound) {
    console.log(`\n== ${apps} Apps: median of ${rounds.length} round(s) [min–max]; load ${load()}`);
    console.log(summaryTable(rounds, impls));
  }
  for (const [apps, { rounds, impls }] of byRound) results(apps, rounds, impls, limit);
  if (failures > 0) {
    console.error(`${failures} run(s) failed: see FAILED above`);
    process.exitCode = 1;
  }
}

await main();
