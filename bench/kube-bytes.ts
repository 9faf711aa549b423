/**
 * kube.bytesPerObject: heap retained per cached object by a SharedInformerPool
 * watching 10,000 Secrets of 4 KiB each, cached whole and cached as metadata
 * only, side by side in one run. Each mode is measured in its own child
 * process (node --expose-gc): heap used after GC with the cache primed, minus
 * heap used after GC with the same pool warmed up on an empty namespace,
 * divided by the number of cached objects.
 *
 * The figures are kube-apiserver's with REFWATCH_BENCH_REAL=1 (the
 * kube-apiserver/etcd binaries of tests/setup), the embedded server's otherwise.
 *
 * Target: metadata only, <= 1,500 bytes an object. Metadata-only caches are for the kinds a
 * controller refers to by name, Secrets first, whose number grows with the cluster: at 1,500 bytes
 * the 100,000 Secrets of a large cluster take 150 MB, a fifth of the 768Mi the Helm chart gives the
 * server, where whole 4 KiB Secrets would not fit.
 *
 *   REFWATCH_BENCH_REAL=1 npm run bench -- kube-bytes
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { KubeClient, SharedInformerPool } from '../lib/kube';
import { realCluster } from './real';
import { gc, report, result } from './report';

const SECRETS = Number(process.env.BENCH_SECRETS ?? 10_000);
const SECRET_BYTES = 4096;
const IN_FLIGHT = 20;
const NS = 'bytes';
const WARM_NS = 'bytes-warm';
const TARGET_BYTES = 1500;

type Mode = 'full' | 'metadata';
interface Measurement {
  objects: number;
  bytesPerObject: number;
  primeMs: number;
}

async function until(cond: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** measure runs in a child process: one pool, one mode, heap before and after priming the Secrets of NS. */
async function measure(mode: Mode, kubeconfig: unknown): Promise<Measurement> {
  const client = KubeClient.fromKubeconfig(kubeconfig, { source: 'bench' });
  const pool = new SharedInformerPool({ client });
  const opts = { metadataOnly: mode === 'metadata' };
  try {
    // Warm up the same code paths on an empty namespace, so the baseline holds the modules, agent and discovery.
    const warm = pool.acquire({ group: '', kind: 'Secret', namespace: WARM_NS }, () => {}, opts);
    await until(() => warm.isPrimed(), 'warm-up');
    await warm.release();
    gc();
    const before = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    const sub = pool.acquire({ group: '', kind: 'Secret', namespace: NS }, () => {}, opts);
    await until(() => sub.isPrimed(), 'priming');
    const primeMs = performance.now() - t0;
    gc();
    const after = process.memoryUsage().heapUsed;
    const objects = sub.store.size;
    if (objects !== SECRETS) throw new Error(`cached ${objects} Secrets, expected ${SECRETS}`);
    const sample = sub.store.values().next().value as { data?: unknown } | undefined;
    if (mode === 'metadata' && sample && 'data' in sample) throw new Error('a metadata-only cache holds Secret data');
    if (mode === 'full' && !sample?.data) throw new Error('a whole-object cache lacks Secret data');
    return { objects, bytesPerObject: (after - before) / objects, primeMs };
  } finally {
    await pool.stop();
    client.close();
  }
}

/** inChild measures one mode in a fresh process; asynchronously, since the embedded server answers from this one. */
async function inChild(mode: Mode, kubeconfig: unknown): Promise<Measurement> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', import.meta.filename, `--measure=${mode}`],
    {
      env: { ...process.env, REFWATCH_BENCH_KUBECONFIG: JSON.stringify(kubeconfig) },
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('MEASURED '));
  if (!line) throw new Error(`measuring ${mode} printed no figure: ${stdout}`);
  return JSON.parse(line.slice('MEASURED '.length)) as Measurement;
}

/** createSecrets creates SECRETS Secrets of SECRET_BYTES random bytes each, IN_FLIGHT at a time. */
async function createSecrets(client: KubeClient): Promise<number> {
  for (const name of [NS, WARM_NS])
    await client.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < SECRETS; i = next++) {
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `s-${String(i).padStart(5, '0')}` },
        data: { payload: randomBytes(SECRET_BYTES).toString('base64') },
      };
      await client.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return performance.now() - t0;
}

async function run(tier: string, kubeconfig: unknown): Promise<boolean> {
  const client = KubeClient.fromKubeconfig(kubeconfig, { source: tier });
  const createMs = await createSecrets(client);
  client.close();
  console.log(
    `${tier}: created ${SECRETS} Secrets of ${SECRET_BYTES} bytes in ${(createMs / 1000).toFixed(1)} s (${IN_FLIGHT} in flight)`,
  );
  const full = await inChild('full', kubeconfig);
  const meta = await inChild('metadata', kubeconfig);
  console.log(
    `${tier}: whole objects primed in ${full.primeMs.toFixed(0)} ms, metadata only in ${meta.primeMs.toFixed(0)} ms`,
  );
  const suffix = tier === 'real' ? '' : `.${tier}`;
  report(`kube.bytesPerObject.full${suffix}`, Math.round(full.bytesPerObject), 'B/object');
  report(`kube.bytesPerObject.ratio${suffix}`, full.bytesPerObject / meta.bytesPerObject, 'x');
  return result(`kube.bytesPerObject${suffix}`, Math.round(meta.bytesPerObject), 'B/object', '<=', TARGET_BYTES);
}

async function real(): Promise<void> {
  const cluster = await realCluster('kube-bytes');
  try {
    await run('real', cluster.kubeconfig);
  } finally {
    await cluster.stop();
  }
}

async function embedded(): Promise<void> {
  const { startEmbeddedServer } = await import('../lib/embedded');
  const server = await startEmbeddedServer();
  try {
    await run('embedded', server.kubeconfig());
  } finally {
    await server.stop();
  }
}

const child = process.argv.find((a) => a.startsWith('--measure='));
if (child) {
  const m = await measure(
    child.slice('--measure='.length) as Mode,
    JSON.parse(process.env.REFWATCH_BENCH_KUBECONFIG ?? 'null'),
  );
  console.log(`MEASURED ${JSON.stringify(m)}`);
} else if (process.env.REFWATCH_BENCH_REAL === '1') await real();
else await embedded();
