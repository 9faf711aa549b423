import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { WatchError } from '@/lib/engine/informer-source';
import { Discovery, KubeClient, Reflector } from '@/lib/kube';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { StallingProxy } from '../unit/kube/stalling-proxy';

/*
 * A watch whose connection is accepted and never answered (no TLS handshake,
 * no headers), against either cluster: the reflector reaches the server
 * through a loopback proxy that stalls every connection, and looks kinds up
 * through a client that reaches it directly.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let proxy: StallingProxy;

beforeAll(async () => {
  cluster = await getTestCluster();
  proxy = await StallingProxy.start(cluster.url, () => true);
});
afterAll(async () => {
  await proxy.stop();
});

it(`leaves Listing with a retryable error once watchOpenTimeoutMs passes (${clusterKind})`, async () => {
  const direct = KubeClient.fromKubeconfig(cluster.kubeconfig);
  const cfg = structuredClone(cluster.kubeconfig) as unknown as { clusters: { cluster: { server: string } }[] };
  cfg.clusters[0]!.cluster.server = proxy.url;
  const stalled = KubeClient.fromKubeconfig(cfg, { watchOpenTimeoutMs: 500 });
  const errors: WatchError[] = [];
  const phases: string[] = [];
  const r: Reflector = new Reflector({
    target: { group: '', kind: 'ConfigMap' },
    client: stalled,
    discovery: new Discovery(direct),
    onEvent: (e) => {
      if (e.type !== 'error') return;
      errors.push(e.error);
      phases.push(r.status().phase);
    },
    backoff: { initialMs: 100, maxMs: 200 },
  });
  r.start();
  try {
    const deadline = Date.now() + 20_000;
    // Each stalled open fails the same way: one ongoing failure, retried, its attempts counted in status().
    const failures = () => r.status().failures ?? 0;
    while (failures() < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(failures()).toBeGreaterThanOrEqual(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ reason: 'Unreachable' });
    expect(errors[0]!.message).toContain('no response headers within 500 ms');
    expect(phases[0]).toBe('Backoff');
    expect(r.isPrimed()).toBe(false);
    expect(proxy.stalled.length).toBeGreaterThanOrEqual(2);
  } finally {
    await r.stop();
    direct.close();
    stalled.close();
  }
  expect(r.status().phase).toBe('Stopped');
});
