import { describe, expect, it } from 'vitest';
import type { ClusterInfo } from '@/lib/changelog';
import type { ReflectorStatus } from '@/lib/kube';
import { judgeReadiness } from '@/server/readiness';

const NOW = 1_000_000;
const up: ClusterInfo = { mode: 'kubeconfig', server: 'https://127.0.0.1:6443', reachable: true };
const down: ClusterInfo = {
  ...up,
  reachable: false,
  message: 'cluster https://127.0.0.1:6443 is not reachable: connect ECONNREFUSED',
};

function watch(kind: string, over: Partial<ReflectorStatus> = {}): ReflectorStatus {
  return {
    target: { group: '', kind },
    phase: 'Watching',
    primed: true,
    startedAt: 0,
    objects: 1,
    subscribers: 1,
    watchesOpened: 1,
    lists: 1,
    syncMode: 'WatchList',
    metadataOnly: false,
    ...over,
  };
}
const failing = (since: number) => ({
  phase: 'Backoff' as const,
  failingSince: since,
  lastError: { reason: 'Unreachable' as const, message: 'connect ECONNREFUSED 127.0.0.1:6443', at: NOW - 1000 },
});

describe('/readyz semantics (judgeReadiness)', () => {
  it('is ready once the cluster answered and every cache is primed', () => {
    expect(
      judgeReadiness({ cluster: up, everReachable: true, watches: [watch('Pod'), watch('Secret')], now: NOW }),
    ).toEqual({ ready: true, status: 'ready', reasons: [], warnings: [] });
  });

  it('is not ready while a cache is not primed, or before the cluster ever answered', () => {
    const priming = judgeReadiness({
      cluster: up,
      everReachable: true,
      watches: [watch('Pod', { primed: false, phase: 'Listing' })],
      now: NOW,
    });
    expect(priming).toMatchObject({ ready: false, status: 'not ready', reasons: ['Pod cache is not primed yet'] });
    const never = judgeReadiness({ cluster: down, everReachable: false, watches: [], now: NOW });
    expect(never).toMatchObject({ ready: false, reasons: [down.message] });
  });

  it('stays ready, degraded with warnings, while a primed cache’s watch fails or the cluster is down', () => {
    const r = judgeReadiness({
      cluster: down,
      everReachable: true,
      watches: [watch('Pod', failing(NOW - 42_000)), watch('Secret')],
      now: NOW,
    });
    expect(r).toEqual({
      ready: true,
      status: 'degraded',
      reasons: [],
      warnings: [
        `${down.message}; serving the last known state`,
        'watch of Pod failing for 42 s (Unreachable): connect ECONNREFUSED 127.0.0.1:6443; serving the last known state',
      ],
    });
  });

  it('does not wait for a kind the cluster does not serve', () => {
    const r = judgeReadiness({
      cluster: up,
      everReachable: true,
      watches: [
        watch('Widget', {
          primed: false,
          lastError: { reason: 'KindUnknown', message: 'no resource serves kind Widget', at: NOW },
        }),
      ],
      now: NOW,
    });
    expect(r.ready).toBe(true);
  });

  it('does not wait for a kind the user may not read: degraded, naming the missing rule', () => {
    const message =
      'forbidden to list and watch Ingress.networking.k8s.io: grant the rule {verbs: [list, watch], apiGroups: ["networking.k8s.io"], resources: [ingresses]} in namespace team-a';
    const r = judgeReadiness({
      cluster: up,
      everReachable: true,
      watches: [
        watch('Pod'),
        watch('Ingress', {
          target: { group: 'networking.k8s.io', kind: 'Ingress', namespace: 'team-a' },
          primed: false,
          phase: 'Backoff',
          lastError: {
            reason: 'Forbidden',
            message,
            missingRule: { verbs: ['list', 'watch'], apiGroup: 'networking.k8s.io', resource: 'ingresses' },
            at: NOW,
          },
        }),
      ],
      now: NOW,
    });
    expect(r).toEqual({
      ready: true,
      status: 'degraded',
      reasons: [],
      warnings: [`Ingress.networking.k8s.io in team-a is not watched: ${message}`],
    });
  });

  it('still waits on rejected credentials (401: no rule to grant)', () => {
    const r = judgeReadiness({
      cluster: up,
      everReachable: true,
      watches: [
        watch('Pod', {
          primed: false,
          lastError: { reason: 'Forbidden', message: 'the API server rejected the credentials', at: NOW },
        }),
      ],
      now: NOW,
    });
    expect(r.ready).toBe(false);
    expect(r.reasons[0]).toContain('rejected the credentials');
  });

  it('warns of each kind watched in fewer namespaces than asked', () => {
    const note = 'Pod: cluster-wide list forbidden; watching namespace team-a (from the context)';
    const r = judgeReadiness({
      cluster: up,
      everReachable: true,
      watches: [watch('Pod')],
      now: NOW,
      scopeFallbacks: [note],
    });
    expect(r).toMatchObject({ ready: true, status: 'degraded', warnings: [note] });
  });
});
