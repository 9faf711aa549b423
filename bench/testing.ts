// npm run bench -- testing
// refwatch/testing's startTestCluster(): boot to first successful list, p50 and p99 over 50 boots, on the
// embedded cluster (target p50 <= 150 ms, against envtest's published 5-7 s) and, reported beside it, on
// kube-apiserver + etcd (REFWATCH_TEST_CLUSTER=real; REFWATCH_BENCH_TESTING_REAL_BOOTS boots, default 10, as
// each takes seconds). Then the example controller's test suite (examples/controller, installed from the
// packed tarball), timed on each: its wall time, and real over embedded.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestCluster, type TestClusterMode } from '../lib/testing';
import { percentile, report, result } from './report';

const root = path.resolve(import.meta.dirname, '..');

async function bootToFirstList(mode: TestClusterMode): Promise<number> {
  const t0 = performance.now();
  const cluster = await startTestCluster({ mode });
  try {
    await cluster.client.getJSON('/api/v1/namespaces');
    return performance.now() - t0;
  } finally {
    await cluster.stop();
  }
}

async function boots(mode: TestClusterMode, n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) ms.push(await bootToFirstList(mode));
  return ms.sort((a, b) => a - b);
}

function realAvailable(): string | undefined {
  const built = spawnSync('bash', [path.join(root, 'tests/setup/build-real-cluster.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (built.status === 0) return built.stdout.trim().split('\n').pop();
  console.log(`SKIPPED: testing.real: ${built.stderr.trim().split('\n').pop() ?? 'build-real-cluster.sh failed'}`);
  return undefined;
}

function suite(app: string, mode: TestClusterMode, assets: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      'npm',
      ['test', '--silent'],
      { cwd: app, env: { ...process.env, REFWATCH_TEST_CLUSTER: mode, REFWATCH_KUBE_ASSETS: assets } },
      (e, stdout) =>
        e ? reject(new Error(`the example's tests failed on ${mode}:\n${stdout}`)) : resolve(performance.now() - t0),
    ),
  );
}

const embedded = await boots('embedded', 50);
result('testing.boot.embedded.p50', percentile(embedded, 50), 'ms', '<=', 150);
report('testing.boot.embedded.p99', percentile(embedded, 99), 'ms');

const assets = realAvailable();
if (assets) {
  process.env.REFWATCH_KUBE_ASSETS = assets;
  const real = await boots('real', Number(process.env.REFWATCH_BENCH_TESTING_REAL_BOOTS ?? 10));
  report('testing.boot.real.p50', percentile(real, 50), 'ms');
  report('testing.boot.real.p99', percentile(real, 99), 'ms');
  report('testing.boot.ratio.real_over_embedded', percentile(real, 50) / percentile(embedded, 50), 'x');
}

const work = mkdtempSync(path.join(os.tmpdir(), 'refwatch-bench-testing-'));
try {
  const install = spawnSync('bash', [path.join(root, 'scripts/install-example-controller.sh'), work], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const app = install.stdout.trim().split('\n').pop() ?? '';
  if (install.status !== 0) throw new Error('scripts/install-example-controller.sh failed (above)');
  const onEmbedded = await suite(app, 'embedded', '');
  report('testing.example.embedded', onEmbedded, 'ms');
  if (assets) {
    const onReal = await suite(app, 'real', assets);
    report('testing.example.real', onReal, 'ms');
    report('testing.example.ratio.real_over_embedded', onReal / onEmbedded, 'x');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
