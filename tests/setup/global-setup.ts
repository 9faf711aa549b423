import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startRealCluster } from './real-cluster';

/** What the integration project's globalSetup hands to every test file. */
export type ProvidedCluster =
  | { kind: 'embedded' }
  | {
      kind: 'real';
      url: string;
      token: string;
      restrictedToken: string;
      ca: string;
      version: string;
      /** POST here restarts kube-apiserver; the path carries a per-run secret. */
      restartUrl: string;
    };

declare module 'vitest' {
  interface ProvidedContext {
    refwatchCluster: ProvidedCluster;
  }
}

export type ClusterKind = ProvidedCluster['kind'];

export function selectedClusterKind(): ClusterKind {
  const kind = process.env.REFWATCH_TEST_CLUSTER ?? 'embedded';
  if (kind === 'embedded' || kind === 'real') return kind;
  throw new Error(`REFWATCH_TEST_CLUSTER=${kind} is not a cluster kind; use embedded or real`);
}

/**
 * The real cluster runs here, once per run, in the vitest main process; the
 * embedded server runs inside each test file's worker (see tests/setup/cluster.ts),
 * because tests drive its fault hooks in-process.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (selectedClusterKind() === 'embedded') {
    project.provide('refwatchCluster', { kind: 'embedded' });
    return async () => {};
  }

  const cluster = await startRealCluster();
  console.log(`[refwatch] real cluster: kube-apiserver ${cluster.version} at ${cluster.url} (logs in ${cluster.dir})`);
  const secret = randomBytes(16).toString('hex');
  const control = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== `/${secret}/restart`) {
      res.writeHead(404).end();
      return;
    }
    cluster.restart().then(
      () => res.writeHead(204).end(),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e)),
    );
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const { port } = control.address() as AddressInfo;

  project.provide('refwatchCluster', {
    kind: 'real',
    url: cluster.url,
    token: cluster.token,
    restrictedToken: cluster.restrictedToken,
    ca: cluster.ca,
    version: cluster.version,
    restartUrl: `http://127.0.0.1:${port}/${secret}/restart`,
  });

  return async () => {
    control.closeAllConnections();
    await new Promise((resolve) => control.close(resolve));
    await cluster.stop();
  };
}
