/**
 * cli.explain.standalone: from process start to answer, `refwatch explain
 * pod/web -n NS` headless against a cluster: load the CLI, read the
 * kubeconfig, start the engine, watch the Pods of one namespace and the
 * kinds they refer to, answer once those caches are primed, stop every watch
 * and exit. Runs on kube-apiserver with REFWATCH_BENCH_REAL=1, else on the
 * embedded API server. The namespace holds 50 Pods and the cluster 500
 * ConfigMaps, so priming lists real objects.
 *
 * The figure with the target runs the CLI as users of the package do: plain
 * node on the package's own build (`npm run build:lib`, lib/dist/cli/main.js,
 * the file the `refwatch` bin points at). The same command run from sources
 * through tsx (bin/refwatch, as in this checkout) is reported beside it.
 *
 * Target: p50 <= 2 s. `refwatch explain` is typed at a prompt and run in pipelines beside kubectl,
 * which answers in about a second; two seconds leave one more for priming the caches kubectl does
 * not keep.
 *
 *   npx tsx bench/cli.ts
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeClient } from '../lib/kube';
import { startEmbeddedServer } from '../lib/embedded';
import { startRealCluster } from '../tests/setup/real-cluster';
import { percentile, report, result } from './report';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = 9;
const TARGET_MS = 2000;
const PODS = 50;
const CONFIGMAPS = 500;
const NS = 'bench-cli';

async function populate(client: KubeClient): Promise<void> {
  await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: `${NS}-other` } } });
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < CONFIGMAPS; i++)
    writes.push(
      client.request('POST', `/api/v1/namespaces/${i % 2 ? NS : `${NS}-other`}/configmaps`, {
        body: { metadata: { name: `config-${i}` }, data: { i: String(i) } },
      }),
    );
  writes.push(
    client.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: 'web-secrets' }, stringData: { token: 'x' } },
    }),
  );
  await Promise.all(writes);
  const pods: Promise<unknown>[] = [];
  for (let i = 0; i < PODS; i++) {
    const name = i === 0 ? 'web' : `web-${i}`;
    pods.push(
      client.request('POST', `/api/v1/namespaces/${NS}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: {
            automountServiceAccountToken: false,
            containers: [
              { name: 'web', image: 'registry.k8s.io/pause:3.10', envFrom: [{ secretRef: { name: 'web-secrets' } }] },
            ],
            volumes: [{ name: 'config', configMap: { name: `config-${2 * i + 1}` } }],
          },
        },
      }),
    );
  }
  await Promise.all(pods);
}

/** explainOnce runs the CLI once and resolves with its wall time (ms), from spawn to exit, checking the answer. */
function explainOnce(command: string[], kubeconfig: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // Asynchronous: the embedded API server answers from this very process.
    const child = spawn(
      command[0]!,
      [...command.slice(1), 'explain', 'pod/web', '-n', NS, '--kubeconfig', kubeconfig],
      { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0 || !out.includes(`ConfigMap/${NS}/config-1`))
        reject(new Error(`refwatch explain failed (exit ${code}): ${out}`));
      else resolve(ms);
    });
  });
}

/** timeRuns runs the command RUNS times, one after another, and returns the sorted wall times (ms). */
async function timeRuns(command: string[], kubeconfig: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await explainOnce(command, kubeconfig));
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const real = process.env.REFWATCH_BENCH_REAL === '1';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-bench-cli-'));
  execFileSync('npm', ['run', '--silent', 'build:lib'], { cwd: ROOT, stdio: 'inherit' });
  const out = path.join(ROOT, 'lib', 'dist', 'cli', 'main.js');
  let stop: () => Promise<void>;
  let kubeconfig: object;
  if (real) {
    const c = await startRealCluster();
    console.log(`== cli on kube-apiserver ${c.version} at ${c.url}`);
    kubeconfig = c.kubeconfig;
    stop = () => c.stop();
  } else {
    const s = await startEmbeddedServer({ token: 'bench-cli-token-0123456789' });
    console.log(`== cli on the embedded API server at ${s.url} (set REFWATCH_BENCH_REAL=1 for kube-apiserver)`);
    kubeconfig = s.kubeconfig();
    stop = () => s.stop();
  }
  try {
    const file = path.join(dir, 'kubeconfig.json');
    fs.writeFileSync(file, JSON.stringify(kubeconfig));
    await populate(KubeClient.fromKubeconfig(kubeconfig, { source: 'bench cluster' }));
    const node = await timeRuns([process.execPath, out], file);
    const tsx = await timeRuns([path.join(ROOT, 'bin', 'refwatch')], file);
    console.log(`plain node, lib/dist: ${node.map((t) => t.toFixed(0)).join(' ')} ms`);
    console.log(`tsx, from sources: ${tsx.map((t) => t.toFixed(0)).join(' ')} ms`);
    console.log(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${os.cpus().length} CPUs`,
    );
    result('cli.explain.standalone', Math.round(percentile(node, 50)), 'ms', '<=', TARGET_MS);
    report('cli.explain.standalone.p90', Math.round(percentile(node, 90)), 'ms');
    report('cli.explain.standalone.tsx', Math.round(percentile(tsx, 50)), 'ms');
  } finally {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
