import { describe, expect, it } from 'vitest';
import { KubeClient } from '@/lib/kube';
import { fallbackNamespaces } from '@/server/runtime';

function client(namespace?: string): KubeClient {
  return KubeClient.fromKubeconfig({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
    users: [{ name: 'u', user: { token: 'token-0123456789' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', ...(namespace ? { namespace } : {}) } }],
    'current-context': 'x',
  });
}

const kubeconfig = { mode: 'kubeconfig', path: '/dev/null' } as const;

describe('where a kind forbidden cluster-wide is watched instead (fallbackNamespaces)', () => {
  it("is the context's namespace, plus --namespaces", () => {
    expect(fallbackNamespaces({ client: client('team-a') }, { cluster: kubeconfig })).toEqual([
      { namespace: 'team-a', from: 'the context' },
    ]);
    expect(
      fallbackNamespaces({ client: client('team-a') }, { cluster: kubeconfig, namespaces: ['team-a', 'team-b'] }),
    ).toEqual([
      { namespace: 'team-a', from: 'the context' },
      { namespace: 'team-a', from: '--namespaces' },
      { namespace: 'team-b', from: '--namespaces' },
    ]);
  });

  it('is "default" when the context names no namespace, as for kubectl', () => {
    expect(fallbackNamespaces({ client: client() }, { cluster: kubeconfig })).toEqual([
      { namespace: 'default', from: "kubectl's default: the context names no namespace" },
    ]);
  });
});
