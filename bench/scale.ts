import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeClient } from '../lib/kube';
import { getReadyz } from '../server/api';
import { parseConfig } from '../server/config';
import { startRuntime, type Runtime } from '../server/runtime';
import { realCluster } from './real';
import { report, result } from './report';

/*
 * refwatch's start on a cluster the size of a production one, on the real
 * kube-apiserver: 15,000 Pods, 15,000 ConfigMaps and 15,000 Secrets of 4 KiB,
 * plus 2,000 Deployments and 2,000 Services, over 50 namespaces. Pod i mounts
 * ConfigMap i and reads Secret i; Deployment j's template names ConfigMap j;
 * Service j selects the Pods of app j. The server starts with the core pack
 * and the figure is the time until it is ready: /readyz answers 200, every
 * referrer has been judged once and every reference controller's cache holds
 * its initial snapshot. Provisioning is not timed against the target.
 */

/** REFWATCH_SCALE_FRACTION (0 < f <= 1) shrinks every count, for a quick check of the bench itself; its figures are not the target's. */
const FRACTION = Number(process.env.REFWATCH_SCALE_FRACTION ?? '1');
if (!(FRACTION > 0 && FRACTION <= 1))
  throw new Error(`REFWATCH_SCALE_FRACTION must be a number in (0, 1], got ${process.env.REFWATCH_SCALE_FRACTION}`);
const NAMESPACES = 50;
const PODS = Math.round(15_000 * FRACTION);
const DEPLOYMENTS = Math.round(2_000 * FRACTION);
const SERVICES = Math.round(2_000 * FRACTION);
const SECRET_BYTES = 4096;
const CONCURRENCY = 48;
const READY_TARGET_MS = 15_000;
const READY_TIMEOUT_MS = 300_000;

const nsOf = (i: number) => `scale-${String(i % NAMESPACES).padStart(2, '0')}`;
const app = (i: number) => `app-${i % SERVICES}`;

/** provision creates every object, CONCURRENCY requests at a time; returns how many it created. */
async function provision(client: KubeClient): Promise<number> {
  const secretData = Buffer.alloc(SECRET_BYTES, 'x').toString('base64');
  const jobs: (() => Promise<unknown>)[] = [];
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = nsOf(n);
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  }
  for (let i = 0; i < PODS; i++) {
    const ns = nsOf(i);
    jobs.push(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { metadata: { name: `cm-${i}` }, data: { key: `value-${i}` } },
      }),
    );
    jobs.push(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
        body: { metadata: { name: `secret-${i}` }, data: { blob: secretData } },
      }),
    );
    jobs.push(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/pods`, {
        body: {
          metadata: { name: `pod-${i}`, labels: { app: app(i) } },
          spec: {
            automountServiceAccountToken: false,
            containers: [
              { name: 'c', image: 'registry.k8s.io/pause:3.10', envFrom: [{ secretRef: { name: `secret-${i}` } }] },
            ],
            volumes: [{ name: 'config', configMap: { name: `cm-${i}` } }],
          },
        },
      }),
    );
  }
  for (let j = 0; j < DEPLOYMENTS; j++) {
    const ns = nsOf(j);
    jobs.push(() =>
      client.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
        body: {
          metadata: { name: `deploy-${j}` },
          spec: {
            selector: { matchLabels: { app: `deploy-${j}` } },
            template: {
              metadata: { labels: { app: `deploy-${j}` } },
              spec: {
                containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
                volumes: [{ name: 'config', configMap: { name: `cm-${j}` } }],
              },
            },
          },
        },
      }),
    );
  }
  for (let j = 0; j < SERVICES; j++) {
    // Service j lives where Pods of app j do: Pod i is in namespace i % 50 and has app i % 2000.
    const ns = nsOf(j);
    jobs.push(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/services`, {
        // Headless: 2,000 cluster IPs would not fit the test cluster's Service range, and refwatch reads only the selector.
        body: {
          metadata: { name: `svc-${j}` },
          spec: { clusterIP: 'None', selector: { app: app(j) }, ports: [{ port: 80 }] },
        },
      }),
    );
  }
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return jobs.length;
}

/** readyNow: /readyz 200, every referrer judged at least once, and no reference controller still priming. */
function readyNow(rt: Runtime, referrers: number): { readyz: boolean; all: boolean } {
  const readyz = getReadyz(rt).status === 200;
  if (!readyz) return { readyz, all: false };
  const judged = rt.changelog.size('referrer') >= referrers;
  const controllers = rt.changelog.snapshot({ entities: ['controller'] }).entities.controller;
  const primed = controllers.every((c) => c.state !== 'Starting' && c.state !== 'Priming');
  return { readyz, all: judged && primed };
}

const cluster = await realCluster('scale');
const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-bench-scale-'));
try {
  const client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'real' });
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  writeFileSync(kubeconfig, JSON.stringify(cluster.kubeconfig), { mode: 0o600 });
  const created0 = performance.now();
  const objects = await provision(client);
  report('scale.provision', Math.round(performance.now() - created0), 'ms');
  report('scale.objects', objects, 'objects');
  client.close();

  const started = performance.now();
  const rt = await startRuntime(
    parseConfig({
      REFWATCH_CLUSTER: 'kubeconfig',
      KUBECONFIG: kubeconfig,
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_RULE_PACKS: 'core',
      REFWATCH_LOG_LEVEL: 'warn',
    }),
  );
  try {
    let readyzMs = NaN;
    let readyMs = NaN;
    // Pods, Deployments and Services are referrers; every one is judged once before the server is ready.
    const referrers = PODS + DEPLOYMENTS + SERVICES;
    while (performance.now() - started < READY_TIMEOUT_MS) {
      const r = readyNow(rt, referrers);
      if (r.readyz && Number.isNaN(readyzMs)) readyzMs = performance.now() - started;
      if (r.all) {
        readyMs = performance.now() - started;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    report('scale.referrers', rt.changelog.size('referrer'), 'referrers');
    report('scale.references', rt.changelog.size('reference'), 'references');
    report('scale.readyz', Math.round(readyzMs), 'ms');
    report('scale.rss', Math.round(process.memoryUsage().rss / 1024 / 1024), 'MiB');
    if (FRACTION === 1) result('scale.ready', Math.round(readyMs), 'ms', '<=', READY_TARGET_MS);
    else report(`scale.ready.fraction${FRACTION}`, Math.round(readyMs), 'ms');
  } finally {
    await rt.dispose();
  }
} finally {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
