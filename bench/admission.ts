import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  Admission,
  generateAdmissionCertificate,
  startAdmissionServer,
  type AdmissionReviewOut,
} from '../lib/admission';
import { Manager, MemoryInformerSource } from '../lib/engine';
import type { KubeObject } from '../lib/model';
import { builtinRuleSet, observeRuleSet } from '../lib/rules';
import { percentile, report, result } from './report';

// admission: the webhook answering 200 AdmissionReviews per second (Pods and Deployments, 10
// references each, one in ten with a typo) over HTTPS from a separate load process, against
// caches of 50,000 objects (Secrets and ConfigMaps in 50 namespaces). Targets: p99 of the time
// the server spends on a review ≤ 5 ms (the API server waits 2 s at most), the server process's
// CPU ≤ 15% of a core, and the engine's resolution p99 in the same process no more than 5 ms
// higher under that load than without it: the webhook reads the caches and never slows dispatch. The window is a
// long-running server's steady state: a warm-up of 3,000 reviews and the engine's start come before it.
// The same window runs again with each review answered "allowed" unread (admission.cpu.floor, reported): what
// TLS, HTTP and JSON cost the server on this machine before it checks anything.

const OBJECTS = 50_000;
const NAMESPACES = 50;
const RATE = 200;
const SECONDS = Number(process.env.REFWATCH_BENCH_ADMISSION_SECONDS ?? 10);
const REFERRERS = 300;
/** Reviews before the measured window, not counted: WARM_UP_RATE a second for WARM_UP_SECONDS. */
const WARM_UP_SECONDS = 3;
const WARM_UP_RATE = 1000;

/** Secrets and ConfigMaps per namespace: secret-0…secret-499 and configmap-0…configmap-499 in each. */
const PER_NAMESPACE = OBJECTS / NAMESPACES / 2;

function fill(source: MemoryInformerSource): void {
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `team-${n}`;
    for (let j = 0; j < PER_NAMESPACE; j++)
      for (const kind of ['Secret', 'ConfigMap'])
        source.apply({ apiVersion: 'v1', kind, metadata: { name: `${kind.toLowerCase()}-${j}`, namespace: ns } });
  }
  for (let n = 0; n < NAMESPACES; n++)
    source.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${n}` } });
}

/**
 * review builds an AdmissionReview of a Pod or a Deployment naming 10 Secrets and ConfigMaps of its own
 * namespace, all of which exist, except that one review in ten has a typo in its three ConfigMap names
 * (misspelling appended).
 */
function review(i: number, misspelling = 'x'): object {
  const ns = `team-${i % NAMESPACES}`;
  const name = (kind: string, k: number) => `${kind}-${(i * 10 + k) % PER_NAMESPACE}`;
  const typo = i % 10 === 0 ? misspelling : '';
  const spec = {
    containers: [
      {
        name: 'c',
        image: 'x',
        envFrom: [0, 1, 2].map((k) => ({ configMapRef: { name: name('configmap', k) + typo } })),
        env: [3, 4].map((k) => ({ name: `E${k}`, valueFrom: { secretKeyRef: { name: name('secret', k), key: 'k' } } })),
      },
    ],
    volumes: [5, 6, 7, 8, 9].map((k) => ({ name: `v${k}`, secret: { secretName: name('secret', k) } })),
  };
  const object =
    i % 2 === 0
      ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: ns }, spec }
      : {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: `d${i}`, namespace: ns },
          spec: { template: { spec } },
        };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: `u${i}`, operation: 'CREATE', namespace: ns, object },
  };
}

/** The floor's answer: allowed, with the request's uid, and nothing else of the body read. */
function allow(body: unknown): AdmissionReviewOut {
  const uid = (body as { request?: { uid?: unknown } } | undefined)?.request?.uid;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: typeof uid === 'string' ? uid : '', allowed: true },
  };
}

// The load process: RATE reviews per second over one keep-alive agent, for SECONDS.
const LOAD = `
const https = require('node:https');
const [url, rate, seconds, bodies] = [process.argv[2], +process.argv[3], +process.argv[4], require(process.argv[5])];
const agent = new https.Agent({ keepAlive: true, maxSockets: 16, rejectUnauthorized: false });
let sent = 0, done = 0, failed = 0;
const total = rate * seconds;
const start = Date.now();
const tick = setInterval(() => {
  const due = Math.min(total, Math.floor(((Date.now() - start) / 1000) * rate));
  while (sent < due) {
    const body = JSON.stringify(bodies[sent % bodies.length]);
    sent++;
    const req = https.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => { done++; if (res.statusCode !== 200) failed++; finish(); });
    });
    req.on('error', () => { done++; failed++; finish(); });
    req.end(body);
  }
}, 5);
function finish() { if (done === total) { clearInterval(tick); process.send({ done, failed }); agent.destroy(); } }
`;

interface Resolution {
  p99: number;
  p50: number;
}

/**
 * A resolution round: REFERRERS Pods each waiting on its own Secret. prepareRound starts the round's Manager
 * and creates the Pods (so the Manager's start and its priming, one-time costs of a long-running server, stay out
 * of the measured window); run creates the Secrets one every 10 ms and gives the ms from creation to Resolved.
 */
async function prepareRound(source: MemoryInformerSource, round: string): Promise<{ run: () => Promise<Resolution> }> {
  const created = new Map<string, number>();
  const latencies: number[] = [];
  let resolvedAll: () => void = () => {};
  const all = new Promise<void>((r) => (resolvedAll = r));
  const manager = new Manager({
    source,
    statsIntervalMs: 0,
    hooks: {
      onResolved: (_c, key) => {
        const at = created.get(key);
        if (at === undefined) return;
        latencies.push(performance.now() - at);
        created.delete(key);
        if (latencies.length === REFERRERS) resolvedAll();
      },
    },
  });
  manager.addController({
    name: `bench-${round}`,
    for: { group: '', kind: 'Pod', namespace: `res-${round}` },
    reconcile: (ctx) => {
      const o = ctx.object as KubeObject | undefined;
      if (o)
        ctx.resolve({
          referent: `Secret/res-${round}/${o.metadata.name}`,
          fieldPath: 'spec.volumes[0].secret.secretName',
        });
    },
  });
  manager.start();
  for (let i = 0; i < REFERRERS; i++)
    source.apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `w${i}`, namespace: `res-${round}` } });
  await new Promise((r) => setTimeout(r, 200));
  return {
    run: async () => {
      for (let i = 0; i < REFERRERS; i++) {
        created.set(`Pod/res-${round}/w${i}`, performance.now());
        source.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `w${i}`, namespace: `res-${round}` } });
        await new Promise((r) => setTimeout(r, 10));
      }
      await Promise.race([all, new Promise((r) => setTimeout(r, 30_000))]);
      await manager.stop();
      const sorted = latencies.sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    },
  };
}

async function main(): Promise<void> {
  const source = new MemoryInformerSource({ priming: 'sync' });
  fill(source);
  const rules = builtinRuleSet(['core']);
  const observer = observeRuleSet(rules);
  const admission = new Admission({ source, ruleSet: rules, readiness: (k) => observer.readiness(k) });
  await admission.prime();
  const { cert, key } = await generateAdmissionCertificate(['127.0.0.1']);
  const serverMs: number[] = [];
  let warnings = 0;
  /** Answer every review "allowed" without reading it: the floor window. */
  let floor = false;
  const server = await startAdmissionServer({
    host: '127.0.0.1',
    port: 0,
    cert,
    key,
    review: (body) => {
      if (floor) return allow(body);
      const t = performance.now();
      const out = admission.review(body);
      serverMs.push(performance.now() - t);
      warnings += out.response.warnings?.length ?? 0;
      return out;
    },
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-bench-admission-'));
  try {
    const bodies = Array.from({ length: 1000 }, (_, i) => review(i));
    writeFileSync(path.join(dir, 'bodies.json'), JSON.stringify(bodies));
    writeFileSync(path.join(dir, 'load.cjs'), LOAD);

    writeFileSync(path.join(dir, 'warm-up.json'), JSON.stringify(bodies.map((_, i) => review(i, 'w'))));
    // Plain CommonJS: the load process needs none of this process's flags (tsx would only slow its start).
    const startLoad = (seconds: number, file: string, rate = RATE) =>
      fork(path.join(dir, 'load.cjs'), [server.url, String(rate), String(seconds), path.join(dir, file)], {
        execArgv: [],
      });
    const finished = (load: ChildProcess) =>
      new Promise<{ done: number; failed: number }>((resolve, reject) => {
        load.once('message', (m) => resolve(m as { done: number; failed: number }));
        load.once('exit', (code) => (code ? reject(new Error(`load process exited ${code}`)) : undefined));
      });

    const quiet = await (await prepareRound(source, 'quiet')).run();
    // The setup's garbage (the fill, the bodies, the quiet round) is collected now, not by a major GC in the
    // window; before the warm-up, since a forced full GC also drops compiled code.
    globalThis.gc?.();
    // A webhook serves for days, and V8 compiles its request path (Node's HTTPS server and the check) over the
    // first thousands of reviews: the warm-up sends them before the window. Its reviews name other typos than the
    // measured ones, so no did-you-mean answer of the window comes from the warm-up.
    const warm = startLoad(WARM_UP_SECONDS, 'warm-up.json', WARM_UP_RATE);
    await finished(warm);
    warm.kill();
    serverMs.length = 0;
    warnings = 0;
    /** The measured window: the load for SECONDS beside a resolution round; the server's CPU over its wall time. */
    const measure = async (round: string) => {
      const loadedRound = await prepareRound(source, round);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const load = startLoad(SECONDS, 'bodies.json');
      const loaded = loadedRound.run();
      const summary = await finished(load);
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const busy = await loaded;
      load.kill();
      return { summary, wallMs, cpu, busy, cpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100 };
    };
    const { summary, wallMs, cpu, busy, cpuPercent } = await measure('loaded');
    // The same window again with every review answered "allowed" unread: what the server costs on this machine
    // before it checks anything (TLS, HTTP, JSON, the resolution round), reported beside the judged figure.
    floor = true;
    const bare = await measure('floor');

    const sorted = serverMs.sort((a, b) => a - b);
    console.log(
      `${summary.done} reviews (${summary.failed} failed) in ${(wallMs / 1000).toFixed(1)} s over ${OBJECTS} cached objects, ` +
        `${warnings} warnings (3 per review with a typo); ` +
        `resolution p50 ${quiet.p50.toFixed(2)} ms quiet, ${busy.p50.toFixed(2)} ms under load`,
    );
    report('admission.reviews', summary.done - summary.failed, 'reviews');
    report('admission.warnings', warnings, 'warnings');
    // Below RATE, the load process could not keep up (a busy machine): the CPU share is then of a lighter load.
    report('admission.rate', summary.done / (wallMs / 1000), 'reviews/s');
    report('admission.cpu.per.review', (cpu.user + cpu.system) / 1000 / Math.max(1, summary.done), 'ms');
    report('admission.review.p50', percentile(sorted, 50), 'ms');
    result('admission.review.p99', percentile(sorted, 99), 'ms', '<=', 5);
    // The whole server process (TLS, JSON, the check, timers) over the load's wall time, in % of one core.
    result('admission.cpu', cpuPercent, '%', '<=', 15);
    report('admission.cpu.floor', bare.cpuPercent, '%(answering allowed unread)');
    report('admission.cpu.check', cpuPercent - bare.cpuPercent, '%(the check: cpu less the floor)');
    result('admission.floor.failed', bare.summary.failed, 'reviews', '==', 0);
    report('admission.resolution.p99.quiet', quiet.p99, 'ms');
    report('admission.resolution.p99.loaded', busy.p99, 'ms');
    result('admission.resolution.p99.added', Math.max(0, busy.p99 - quiet.p99), 'ms', '<=', 5);
    result('admission.failed', summary.failed, 'reviews', '==', 0);
  } finally {
    await server.stop();
    await admission.stop();
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
