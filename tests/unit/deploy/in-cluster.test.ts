import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeClient } from '@/lib/kube';
import { parseConfig } from '@/server/config';

// REFWATCH_IN_CLUSTER_ROOT lets a test (or a person debugging) stand a folder in for / when in-cluster mode reads the service account.
describe('in-cluster mode with REFWATCH_IN_CLUSTER_ROOT', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('is carried into the config only in in-cluster mode', () => {
    expect(parseConfig({ REFWATCH_CLUSTER: 'in-cluster', REFWATCH_IN_CLUSTER_ROOT: '/tmp/pod' }).cluster).toEqual({
      mode: 'in-cluster',
      root: '/tmp/pod',
    });
    expect(parseConfig({ REFWATCH_CLUSTER: 'in-cluster' }).cluster).toEqual({ mode: 'in-cluster' });
    expect(parseConfig({ REFWATCH_IN_CLUSTER_ROOT: '/tmp/pod' }).cluster).toEqual({ mode: 'embedded' });
  });

  it('reads the token and CA under that folder and talks to KUBERNETES_SERVICE_HOST:PORT', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'refwatch-pod-'));
    dirs.push(root);
    const sa = path.join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(path.join(sa, 'token'), 'service-account-token-0123456789');
    writeFileSync(path.join(sa, 'ca.crt'), 'not used until a request is made');
    writeFileSync(path.join(sa, 'namespace'), 'tools');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '127.0.0.1');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '6443');
    const client = KubeClient.inCluster({ pathPrefix: root });
    expect(client.describe()).toMatchObject({
      server: 'https://127.0.0.1:6443',
      source: 'in-cluster',
      namespace: 'tools',
    });
    expect(client.redact('Bearer service-account-token-0123456789')).not.toContain('service-account-token-0123456789');
  });

  it('names the token file it could not read', () => {
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '127.0.0.1');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '6443');
    expect(() => KubeClient.inCluster({ pathPrefix: '/nonexistent/pod' })).toThrow(
      '/nonexistent/pod/var/run/secrets/kubernetes.io/serviceaccount/token',
    );
  });
});
