import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { KubeClient, sleep } from '../lib/kube';
import { demoManifests } from '../server/cluster';
import {
  ReadinessSimulator,
  demoPath,
  ensureDemoKinds,
  parseDemoConfig,
  planScenario,
  secretPath,
} from '../server/demo';
import { startEmbeddedServer } from '../lib/embedded';
import { startRealCluster } from '../tests/setup/real-cluster';
import { result } from './report';

// lib-rss: the example controller (examples/controller, installed from the packed tarball and run with
// plain node) as its own process. READY: its App cache and its three referent caches are primed (one
// canary App resolved, 1,000 Secrets cached) and no other work was done. Then 1,000 Apps whose
// Databases and Caches turn Ready 1–20 s after creation; peak is the process's high-water mark (VmHWM)
// once every App is resolved. REFWATCH_BENCH_REAL=1 runs on a real kube-apiserver, else on the
// embedded one. REFWATCH_BENCH_CONTROLLER=DIR measures an already installed controller (e.g. another
// build's); REFWATCH_BENCH_HEAPSNAPSHOT=1 also writes heap snapshots at READY and once all are resolved into the controller's
// dir (scripts/heap-summary.ts summarizes one); REFWATCH_BENCH_NODE_ARGS passes flags to its node.
//
// Targets: the memory a kubebuilder-scaffolded controller's Deployment gives its manager
// (config/manager/manager.yaml: requests 64Mi, limits 128Mi), so a team that moves a controller from
// controller-runtime to refwatch keeps its manifests. READY must fit the request, what the scheduler
// sets aside for the pod; the peak must stay under the limit, past which the kernel kills the pod.
// Figures are MiB (/proc's kB / 1024), as Kubernetes' Mi.

const APPS = 1_000;
const NAMESPACE = 'rss';
const TIMEOUT_MS = Number(process.env.REFWATCH_BENCH_TIMEOUT_MS ?? 180_000);
const root = path.resolve(import.meta.dirname, '..');

function installController(): { dir: string; cleanup(): void } {
  if (process.env.REFWATCH_BENCH_CONTROLLER)
    return { dir: process.env.REFWATCH_BENCH_CONTROLLER, cleanup: () => undefined };
  const work = mkdtempSync(path.join(os.tmpdir(), 'refwatch-lib-rss-'));
  const r = spawnSync('bash', [path.join(root, 'scripts/install-example-controller.sh'), work], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const dir = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !dir)
    throw new Error(`scripts/install-example-controller.sh exited with ${r.status ?? r.signal}`);
  return { dir, cleanup: () => rmSync(work, { recursive: true, force: true }) };
}

/** status reads one figure of /proc/PID/status in MB: VmRSS now, VmHWM the peak so far. */
function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(m[1]) / 1024;
}

/** ControllerProcess follows the controller's stdout: the Apps it says are resolved. */
class ControllerProcess {
  readonly resolved = new Set<string>();
  private out = '';
  private exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      this.out += d;
      let nl: number;
      while ((nl = this.out.indexOf('\n')) >= 0) {
        const line = this.out.slice(0, nl);
        this.out = this.out.slice(nl + 1);
        const m = /^App (\S+) resolved$/.exec(line);
        if (m) this.resolved.add(m[1]!);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => process.stderr.write(`[controller] ${d}`));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  async until(cond: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.child.exitCode !== null)
        throw new Error(`the controller exited with ${this.child.exitCode} while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
      await sleep(50);
    }
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** inParallel runs fn over items, n at a time. */
async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function measure(
  client: KubeClient,
  kubeconfigPath: string,
  controllerDir: string,
): Promise<{ ready: number; peak: number }> {
  await ensureDemoKinds(client, { install: true });
  const ns = NAMESPACE;
  const scenario = planScenario(
    parseDemoConfig({ apps: APPS, readyAfter: { distribution: 'uniform', minMs: 1_000, maxMs: 20_000 }, seed: 42 }),
    ns,
    42,
  );
  const demo = (kind: 'Database' | 'Cache' | 'App', name: string, spec: object) => ({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind,
    metadata: { name, namespace: ns },
    spec,
  });
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  await inParallel(scenario.secrets, 16, (s) =>
    client.request('POST', secretPath(ns), {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: s.name, namespace: ns },
        stringData: { password: randomBytes(16).toString('hex') },
      },
    }),
  );

  const heapSnapshot = process.env.REFWATCH_BENCH_HEAPSNAPSHOT === '1';
  const nodeArgs = (process.env.REFWATCH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...(heapSnapshot ? ['--heapsnapshot-signal=SIGUSR2'] : []),
      path.join(controllerDir, 'dist/controller.js'),
    ],
    {
      cwd: controllerDir,
      env: { ...process.env, KUBECONFIG: kubeconfigPath, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const controller = new ControllerProcess(child);
  const controllerSignal = new AbortController();
  const simulator = new ReadinessSimulator({
    client,
    namespace: ns,
    signal: controllerSignal.signal,
    onReady: () => undefined,
    onError: (k, n, e) => console.error(`marking ${k} ${n} Ready failed: ${String(e)}`),
  });
  try {
    // The canary primes every cache the workload needs: Apps, Databases, Caches and the Secrets.
    await client.request('POST', demoPath('Database', ns), { body: demo('Database', 'canary', {}) });
    await client.request('POST', demoPath('Cache', ns), { body: demo('Cache', 'canary', {}) });
    simulator.schedule('Database', 'canary', 0);
    simulator.schedule('Cache', 'canary', 0);
    await sleep(500);
    await client.request('POST', demoPath('App', ns), {
      body: demo('App', 'canary', {
        databaseRef: { name: 'canary' },
        cacheRef: { name: 'canary' },
        secretRef: { name: scenario.secrets[0]!.name },
      }),
    });
    await controller.until(() => controller.resolved.has(`${ns}/canary`), 'the canary App to resolve', 60_000);
    await sleep(2_000); // let the canary's reconcile settle
    const ready = status(child.pid!, 'VmRSS');
    console.log(`READY: ${ready.toFixed(1)} MB resident (pid ${child.pid})`);
    if (heapSnapshot) {
      child.kill('SIGUSR2');
      await sleep(5_000);
      console.log(`heap snapshot written to ${controllerDir}`);
    }

    const started = Date.now();
    await inParallel([...scenario.databases, ...scenario.caches], 16, (r) =>
      client.request('POST', demoPath(r.kind as 'Database' | 'Cache', ns), {
        body: demo(r.kind as 'Database' | 'Cache', r.name, {}),
      }),
    );
    await inParallel(scenario.apps, 16, (a) =>
      client.request('POST', demoPath('App', ns), { body: demo('App', a.name, a.spec) }),
    );
    for (const r of [...scenario.databases, ...scenario.caches])
      simulator.schedule(r.kind as 'Database' | 'Cache', r.name, r.readyAfterMs);
    console.log(
      `created ${APPS} Apps and their ${2 * APPS} Databases and Caches in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    let sampled = ready;
    await controller.until(
      () => {
        sampled = Math.max(sampled, status(child.pid!, 'VmRSS'));
        return controller.resolved.size >= APPS + 1;
      },
      `${APPS} Apps to resolve (${controller.resolved.size - 1} so far)`,
      TIMEOUT_MS,
    );
    const peak = status(child.pid!, 'VmHWM');
    if (heapSnapshot) {
      child.kill('SIGUSR2');
      await sleep(5_000);
    }
    console.log(
      `all ${APPS} Apps resolved ${((Date.now() - started) / 1000).toFixed(1)} s after the first was created; highest sampled RSS ${sampled.toFixed(1)} MB, high-water mark ${peak.toFixed(1)} MB`,
    );
    return { ready, peak };
  } finally {
    controllerSignal.abort();
    await simulator.stop();
    const code = await controller.stop();
    if (code !== 0) console.error(`the controller exited with ${code} after SIGTERM`);
  }
}

const { dir: controllerDir, cleanup } = installController();
const real = process.env.REFWATCH_BENCH_REAL === '1';
const suffix = real ? '' : '.embedded';
const work = mkdtempSync(path.join(os.tmpdir(), 'refwatch-lib-rss-kubeconfig-'));
let figures: { ready: number; peak: number };
try {
  const kubeconfigPath = path.join(work, 'kubeconfig.json');
  if (real) {
    const cluster = await startRealCluster();
    console.log(`== lib-rss on a real kube-apiserver ${cluster.version}: ${APPS} Apps`);
    try {
      writeFileSync(kubeconfigPath, JSON.stringify(cluster.kubeconfig), { mode: 0o600 });
      figures = await measure(KubeClient.fromFile(kubeconfigPath), kubeconfigPath, controllerDir);
    } finally {
      await cluster.stop();
    }
  } else {
    console.log(`== lib-rss on the embedded cluster: ${APPS} Apps (REFWATCH_BENCH_REAL=1 for a real kube-apiserver)`);
    const server = await startEmbeddedServer({ objects: demoManifests(root), token: randomBytes(24).toString('hex') });
    try {
      writeFileSync(kubeconfigPath, JSON.stringify(server.kubeconfig()), { mode: 0o600 });
      figures = await measure(KubeClient.fromFile(kubeconfigPath), kubeconfigPath, controllerDir);
    } finally {
      await server.stop();
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  cleanup();
}
const SCAFFOLD_REQUEST_MIB = 64;
const SCAFFOLD_LIMIT_MIB = 128;
result(`lib.rss.ready${suffix}`, Math.round(figures.ready), 'MB', '<=', SCAFFOLD_REQUEST_MIB);
result(`lib.rss.peak${suffix}`, Math.round(figures.peak), 'MB', '<=', SCAFFOLD_LIMIT_MIB);
