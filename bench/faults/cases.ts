import { explain, type ReferenceExplanation } from '../../lib/diagnose';
import type { WatchError } from '../../lib/engine';
import { KubeClient, sleep } from '../../lib/kube';
import { ensureDemoKinds } from '../../server/demo/kinds';
import { startRealCluster, type RealCluster } from '../../tests/setup/real-cluster';
import { kubeRequest } from '../../tests/setup/kube-http';
import { FaultProxy } from './tcp-proxy';
import { runFaultWorkload, type FaultOutcome, type FaultWorkloadOptions, type RunningWorkload } from './workload';

/*
 * The fault cases, each on a kube-apiserver and etcd of its own (started
 * here, stopped at the end), during the workload of ./workload.ts:
 *
 *   gone              --watch-cache=false and a 2 s etcd compaction; refwatch reaches
 *                     the server through a proxy that stalls for 5 s (writes go on
 *                     directly) and then resets every connection, three times: each
 *                     watch resumes from a compacted revision and gets 410 Gone.
 *   apiserverRestart  kube-apiserver stopped and started mid-run (same etcd).
 *   etcdRestart       etcd stopped and started mid-run (kube-apiserver stays up).
 *   throttled         API Priority and Fairness gives refwatch's ServiceAccount one
 *                     seat and rejects the rest (429 with Retry-After) for 10 s.
 *   rbac              the ClusterRoleBinding that lets refwatch's ServiceAccount
 *                     list and watch Databases is deleted, and restored once refwatch
 *                     reports Forbidden with the missing rule.
 *
 * The fault clears when the proxy resumes for good, the restarted process is
 * ready again, the FlowSchema is deleted, or the binding is restored.
 */

export const FAULT_CASES = ['gone', 'apiserverRestart', 'etcdRestart', 'throttled', 'rbac'] as const;
export type FaultCase = (typeof FAULT_CASES)[number];

export interface CaseOptions {
  apps: number;
  seed?: number;
}

export interface CaseResult {
  name: FaultCase;
  outcome: FaultOutcome;
  /** Where the case's cluster ran: stopped, with its directory removed, once runCase returns. */
  cluster: { url: string; dir: string };
  /** What the case itself observed of its fault. */
  observed: {
    /** gone: relists with reason Expired, over all kinds. */
    expiredRelists?: number;
    /** gone: connections the proxy reset. */
    resets?: number;
    /** throttled: requests APF rejected in refwatch's priority level (apiserver_flowcontrol_rejected_requests_total). */
    rejected?: number;
    /** rbac: the Database reference of an App while forbidden, as explain told it. */
    forbidden?: ReferenceExplanation;
    /** rbac: the Database referent's state in the change log while forbidden. */
    referentState?: string;
    /** rbac: the Forbidden errors of the Database reference controllers in the change log while forbidden. */
    controllerErrors?: WatchError[];
  };
}

const NAMESPACE = 'faults';
const SERVICE_ACCOUNT = 'refwatch';
/** The readiness spread: the fault starts a quarter of the way in. */
const READY_AFTER = { minMs: 1_000, maxMs: 24_000 };
const FAULT_AFTER_MS = 6_000;
const SETTLE_TIMEOUT_MS = 60_000;

/** runCase starts a cluster for the case, runs the workload with its fault, and stops everything it started. */
export async function runCase(name: FaultCase, o: CaseOptions): Promise<CaseResult> {
  const flags =
    name === 'gone'
      ? ['--watch-cache=false', '--etcd-compaction-interval=2s']
      : name === 'throttled'
        ? ['--max-requests-inflight=10', '--max-mutating-requests-inflight=5']
        : [];
  const cluster = await startRealCluster({ apiserverFlags: flags });
  const where = { url: cluster.url, dir: cluster.dir };
  const admin = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'fault cluster (admin)' });
  const stops: (() => Promise<void> | void)[] = [() => admin.close()];
  try {
    await ensureDemoKinds(admin, { install: true });
    await admin.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    });
    const base = {
      admin,
      namespace: NAMESPACE,
      apps: o.apps,
      readyAfter: READY_AFTER,
      seed: o.seed ?? 13,
      faultAfterMs: FAULT_AFTER_MS,
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
    };
    const observed: CaseResult['observed'] = {};
    let run: Omit<FaultWorkloadOptions, keyof typeof base>;
    switch (name) {
      case 'gone': {
        const port = Number(new URL(cluster.url).port);
        const proxy = await FaultProxy.start({ host: '127.0.0.1', port });
        stops.push(() => proxy.stop());
        const refwatch = clientAt(
          cluster,
          `https://${proxy.address}`,
          cluster.token,
          'refwatch through the fault proxy',
        );
        stops.push(() => refwatch.close());
        run = {
          refwatch,
          fault: async (w) => {
            for (let i = 0; i < 3; i++) {
              proxy.stall();
              await sleep(5_000, w.signal);
              proxy.reset();
              proxy.resume();
              if (i < 2) await sleep(2_000, w.signal);
            }
          },
        };
        const outcome = await runFaultWorkload({ ...base, ...run });
        observed.expiredRelists = outcome.relists
          .filter((r) => r.reason === 'Expired')
          .reduce((n, r) => n + r.count, 0);
        observed.resets = proxy.resets;
        return { name, outcome, observed, cluster: where };
      }
      case 'apiserverRestart':
      case 'etcdRestart': {
        const refwatch = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'refwatch' });
        stops.push(() => refwatch.close());
        run = {
          refwatch,
          fault: async () => {
            await (name === 'etcdRestart' ? cluster.restartEtcd() : cluster.restart());
            await servingAgain(cluster);
          },
        };
        return { name, outcome: await runFaultWorkload({ ...base, ...run }), observed, cluster: where };
      }
      case 'throttled': {
        const refwatch = await serviceAccountClient(cluster, admin, [
          { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        ]);
        stops.push(() => refwatch.close());
        run = {
          refwatch,
          fault: async (w) => {
            await applyFlowControl(admin);
            await sleep(10_000, w.signal);
            // Read while the priority level exists: its series may go with it.
            observed.rejected = await rejectedRequests(cluster);
            await removeFlowControl(admin);
          },
        };
        return { name, outcome: await runFaultWorkload({ ...base, ...run }), observed, cluster: where };
      }
      case 'rbac': {
        const refwatch = await serviceAccountClient(cluster, admin, [
          { apiGroups: ['demo.refwatch.dev'], resources: ['apps', 'caches'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['demo.refwatch.dev'], resources: ['apps/status'], verbs: ['patch', 'update'] },
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
        ]);
        stops.push(() => refwatch.close());
        await bindDatabases(admin);
        run = {
          refwatch,
          // Watches end every few seconds, as --min-request-timeout makes them: the next one meets the RBAC change.
          reflector: { watchTimeoutSeconds: { min: 3, max: 5 } },
          fault: async (w) => {
            await admin.request(
              'DELETE',
              `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${DATABASES_BINDING}`,
              { signal: w.signal },
            );
            const seen = await forbiddenSeen(w);
            observed.forbidden = seen.explanation;
            observed.referentState = seen.referentState;
            observed.controllerErrors = seen.controllerErrors;
            // Forbidden for a while, so that Databases turn Ready unseen.
            await sleep(8_000, w.signal);
            await bindDatabases(admin);
          },
        };
        return { name, outcome: await runFaultWorkload({ ...base, ...run }), observed, cluster: where };
      }
      default: {
        const unknown: never = name;
        throw new Error(`no fault case named ${String(unknown)}; choose from ${FAULT_CASES.join(', ')}`);
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
    await cluster.stop();
  }
}

/** servingAgain waits until kube-apiserver says it is ready, which after an etcd restart takes it a moment longer. */
async function servingAgain(cluster: RealCluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (
    (
      await kubeRequest({ url: cluster.url, token: cluster.token, ca: cluster.ca }, 'GET', '/readyz').catch(() => ({
        status: 0,
      }))
    ).status !== 200
  ) {
    if (Date.now() > deadline) throw new Error('kube-apiserver not ready within 60 s of the restart');
    await sleep(100);
  }
}

function clientAt(cluster: RealCluster, server: string, token: string, source: string): KubeClient {
  const kubeconfig = structuredClone(cluster.kubeconfig);
  kubeconfig.clusters[0]!.cluster.server = server;
  kubeconfig.users[0]!.user.token = token;
  return KubeClient.fromKubeconfig(kubeconfig, { source });
}

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** serviceAccountClient makes ServiceAccount faults/refwatch, grants it rules cluster-wide, and returns a client with its token. */
async function serviceAccountClient(cluster: RealCluster, admin: KubeClient, rules: PolicyRule[]): Promise<KubeClient> {
  await admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
    body: { metadata: { name: SERVICE_ACCOUNT } },
  });
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    body: { metadata: { name: 'refwatch-faults' }, rules },
  });
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      metadata: { name: 'refwatch-faults' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'refwatch-faults' },
      subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: NAMESPACE }],
    },
  });
  const issued = (await admin.request(
    'POST',
    `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${SERVICE_ACCOUNT}/token`,
    {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    },
  )) as { status: { token: string } };
  return clientAt(cluster, cluster.url, issued.status.token, `ServiceAccount ${NAMESPACE}/${SERVICE_ACCOUNT}`);
}

const DATABASES_ROLE = 'refwatch-faults-databases';
const DATABASES_BINDING = 'refwatch-faults-databases';

/** bindDatabases lets refwatch's ServiceAccount list and watch Databases, creating the ClusterRole the first time. */
async function bindDatabases(admin: KubeClient): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const role = {
    metadata: { name: DATABASES_ROLE },
    rules: [{ apiGroups: ['demo.refwatch.dev'], resources: ['databases'], verbs: ['get', 'list', 'watch'] }],
  };
  await admin.request('POST', `${rbac}/clusterroles`, { body: role }).catch(ignoreConflict);
  await admin.request('POST', `${rbac}/clusterrolebindings`, {
    body: {
      metadata: { name: DATABASES_BINDING },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: DATABASES_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: NAMESPACE }],
    },
  });
}

function ignoreConflict(e: unknown): void {
  if ((e as { status?: number }).status !== 409) throw e;
}

/**
 * forbiddenSeen waits until refwatch tells that it may not watch Databases:
 * explain on an App says its Database reference is Forbidden; it returns
 * that, with what the change log's referent and reference controllers say.
 */
async function forbiddenSeen(
  w: RunningWorkload,
): Promise<{ explanation: ReferenceExplanation; referentState: string; controllerErrors: WatchError[] }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (const e of w.manager.changelog.snapshot({ entities: ['referrer'] }).entities.referrer) {
      const explained = explain(w.manager, e.key);
      if (!explained.ok) continue;
      const ref = explained.value.controllers
        .flatMap((c) => c.references)
        .find((r) => r.referent.startsWith('Database.') && r.state === 'Forbidden');
      if (!ref) continue;
      const referentState = w.manager.changelog.get('referent', ref.referent)?.state ?? 'absent';
      const controllers = w.manager.changelog
        .snapshot({ entities: ['controller'] })
        .entities.controller.filter((c) => c.kind === 'Database.demo.refwatch.dev');
      return {
        explanation: ref,
        referentState,
        controllerErrors: controllers.flatMap((c) => c.errors.filter((x) => x.reason === 'Forbidden')),
      };
    }
    if (Date.now() > deadline)
      throw new Error(
        'refwatch did not report the Databases forbidden within 60 s of the ClusterRoleBinding being deleted',
      );
    await sleep(200, w.signal);
  }
}

const FLOW_CONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';
const PRIORITY_LEVEL = 'refwatch-faults';

/** applyFlowControl gives refwatch's ServiceAccount one seat and has APF reject (429) what does not fit. */
async function applyFlowControl(admin: KubeClient): Promise<void> {
  await admin.request('POST', `${FLOW_CONTROL}/prioritylevelconfigurations`, {
    body: {
      metadata: { name: PRIORITY_LEVEL },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 1,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    },
  });
  await admin.request('POST', `${FLOW_CONTROL}/flowschemas`, {
    body: {
      metadata: { name: PRIORITY_LEVEL },
      spec: {
        priorityLevelConfiguration: { name: PRIORITY_LEVEL },
        matchingPrecedence: 100,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: SERVICE_ACCOUNT, namespace: NAMESPACE } }],
            resourceRules: [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] },
            ],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          },
        ],
      },
    },
  });
}

async function removeFlowControl(admin: KubeClient): Promise<void> {
  await admin.request('DELETE', `${FLOW_CONTROL}/flowschemas/${PRIORITY_LEVEL}`);
  await admin.request('DELETE', `${FLOW_CONTROL}/prioritylevelconfigurations/${PRIORITY_LEVEL}`);
}

/** rejectedRequests reads how many requests APF rejected in refwatch's priority level from kube-apiserver's /metrics. */
async function rejectedRequests(cluster: RealCluster): Promise<number> {
  const res = await kubeRequest({ url: cluster.url, token: cluster.token, ca: cluster.ca }, 'GET', '/metrics', {
    timeoutMs: 30_000,
  });
  if (res.status !== 200) throw new Error(`GET /metrics returned ${res.status}`);
  let n = 0;
  for (const line of res.body.split('\n')) {
    if (
      line.startsWith('apiserver_flowcontrol_rejected_requests_total{') &&
      line.includes(`priority_level="${PRIORITY_LEVEL}"`)
    )
      n += Number(line.split(' ').pop());
  }
  return n;
}
