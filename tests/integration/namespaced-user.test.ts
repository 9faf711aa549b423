import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeClient } from '@/lib/kube';
import { getReadyz } from '@/server/api';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import type { KubeconfigFile } from '../setup/kube-http';

/*
 * A user whose RBAC allows two namespaces, as people run refwatch: Roles in
 * team-a and team-b that read Pods, Secrets, ConfigMaps and ServiceAccounts,
 * and a kubeconfig context whose namespace is team-a. Everything else the
 * core pack watches (Ingresses, RoleBindings, ClusterRoleBindings, HPAs...)
 * is forbidden. Only kube-apiserver has RBAC: the embedded tier has none.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let admin: KubeClient;
let dir: string;
let teamA: string;
let teamB: string;
let rt: Runtime | undefined;

const RBAC = 'rbac.authorization.k8s.io';
const CLUSTER_SCOPED = ['ClusterRoleBinding', 'ClusterRole', 'StorageClass', 'Namespace', 'PersistentVolume'];

async function grantReadInNamespace(
  ns: string,
  name = 'team-reader',
  rule = { apiGroups: [''], resources: ['pods', 'secrets', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims'] },
): Promise<void> {
  const rbac = `/apis/${RBAC}/v1/namespaces/${ns}`;
  await admin.request('POST', `${rbac}/roles`, {
    body: { metadata: { name }, rules: [{ ...rule, verbs: ['get', 'list', 'watch'] }] },
  });
  await admin.request('POST', `${rbac}/rolebindings`, {
    body: {
      metadata: { name },
      roleRef: { apiGroup: RBAC, kind: 'Role', name },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'restricted' }],
    },
  });
}

async function podWithSecret(ns: string): Promise<void> {
  await admin.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name: 'api-token' }, stringData: { token: 'x' } },
  });
  await admin.request('POST', `/api/v1/namespaces/${ns}/pods`, {
    body: {
      metadata: { name: 'app' },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'registry.invalid/app:1',
            env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'api-token', key: 'token' } } }],
          },
        ],
      },
    },
  });
}

/** start runs the server as the namespaced user, with its context in team-a. */
async function start(namespaces?: string[]): Promise<Runtime> {
  const kubeconfig = structuredClone(cluster.restrictedKubeconfig!) as KubeconfigFile & {
    contexts: { context: { namespace?: string } }[];
  };
  for (const c of kubeconfig.contexts) c.context.namespace = teamA;
  const file = path.join(dir, `kubeconfig-${namespaces ? 'namespaces' : 'context'}.yaml`);
  writeFileSync(file, stringify(kubeconfig), { mode: 0o600 });
  rt = await startRuntime(
    parseConfig({
      REFWATCH_CLUSTER: 'kubeconfig',
      KUBECONFIG: file,
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_LOG_LEVEL: 'warn',
      ...(namespaces ? { REFWATCH_NAMESPACES: namespaces.join(',') } : {}),
    }),
  );
  return rt;
}

async function readyz(r: Runtime): Promise<{ status: number; body: { status: string; warnings: string[] } }> {
  const res = getReadyz(r);
  return { status: res.status, body: (await res.json()) as { status: string; warnings: string[] } };
}

function referrerState(r: Runtime, key: string): string | undefined {
  return r.changelog.get('referrer', `rules/Pod|${key}`)?.state;
}

/** splitClusterScoped lists the watches of a cluster-scoped kind narrowed to a namespace (there must be none). */
async function splitClusterScoped(r: Runtime): Promise<string[]> {
  const split: string[] = [];
  for (const w of r.pool.watches()) {
    if (w.target.namespace === undefined) continue;
    if ((await r.pool.namespaced(w.target)) === false || CLUSTER_SCOPED.includes(w.target.kind))
      split.push(`${w.target.kind} in ${w.target.namespace}`);
  }
  return split;
}

beforeAll(async () => {
  cluster = await getTestCluster();
  if (clusterKind !== 'real') return;
  admin = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'real test cluster' });
  dir = mkdtempSync(path.join(tmpdir(), 'refwatch-namespaced-'));
  [teamA, teamB] = await Promise.all([cluster.newNamespace('team-a'), cluster.newNamespace('team-b')]);
  await Promise.all([grantReadInNamespace(teamA), grantReadInNamespace(teamB)]);
  await Promise.all([podWithSecret(teamA), podWithSecret(teamB)]);
});
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(clusterKind === 'real')('a user whose RBAC allows two namespaces, on kube-apiserver', () => {
  it('without --namespaces: watches the context namespace, resolves there, and /readyz is 200 within 10 s', async () => {
    const r = await start();
    await expect.poll(async () => (await readyz(r)).status, { timeout: 10_000, interval: 200 }).toBe(200);
    await expect.poll(() => referrerState(r, `Pod/${teamA}/app`), { timeout: 10_000 }).toBe('Resolved');
    const { status, body } = await readyz(r);
    console.log(`READYZ without --namespaces: ${status} ${JSON.stringify(body)}`);
    expect(body.status).toBe('degraded');
    expect(body.warnings).toContain(`Pod: cluster-wide list forbidden; watching namespace ${teamA} (from the context)`);
    expect(body.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^ClusterRoleBinding\.rbac\.authorization\.k8s\.io is not watched: .*grant the rule \{verbs: \[list, watch\], apiGroups: \["rbac\.authorization\.k8s\.io"\], resources: \[clusterrolebindings\]\} cluster-wide$/,
        ),
        expect.stringMatching(
          new RegExp(
            `^Ingress\\.networking\\.k8s\\.io in ${teamA} is not watched: .*resources: \\[ingresses\\]\\} in namespace ${teamA}$`,
          ),
        ),
      ]),
    );
    expect(r.cluster().scopeFallbacks).toContain(
      `Pod: cluster-wide list forbidden; watching namespace ${teamA} (from the context)`,
    );
    // --packs auto without RBAC on CRDs: a warning naming the rule, the other packs off and saying why, still ready.
    expect(body.warnings).toContainEqual(
      expect.stringMatching(
        /^CustomResourceDefinition\.apiextensions\.k8s\.io is not watched: .*resources: \[customresourcedefinitions\]\} cluster-wide$/,
      ),
    );
    await expect
      .poll(() => r.cluster().packs?.find((p) => p.startsWith('cert-manager:')), { timeout: 10_000 })
      .toMatch(
        /^cert-manager: off, undecided: the CustomResourceDefinition watch fails with Forbidden: .*grant apiGroups: \["apiextensions\.k8s\.io"\], resources: \["customresourcedefinitions"\]/,
      );
    expect(r.cluster().packs?.[0]).toBe('core: on, always');
    // team-b is not the context's namespace: nothing there is seen without --namespaces.
    expect(referrerState(r, `Pod/${teamB}/app`)).toBeUndefined();
    expect(await splitClusterScoped(r)).toEqual([]);
    expect(r.pool.watches().some((w) => w.target.kind === 'Pod' && w.target.namespace === undefined)).toBe(false);
  });

  it('with --namespaces team-a,team-b: resolves in both, /readyz is 200 within 10 s, forbidden kinds are warnings', async () => {
    const r = await start([teamA, teamB]);
    await expect.poll(async () => (await readyz(r)).status, { timeout: 10_000, interval: 200 }).toBe(200);
    await expect.poll(() => referrerState(r, `Pod/${teamA}/app`), { timeout: 10_000 }).toBe('Resolved');
    await expect.poll(() => referrerState(r, `Pod/${teamB}/app`), { timeout: 10_000 }).toBe('Resolved');
    const { status, body } = await readyz(r);
    console.log(`READYZ with --namespaces ${teamA},${teamB}: ${status} ${JSON.stringify(body)}`);
    expect(body.status).toBe('degraded');
    for (const ns of [teamA, teamB])
      expect(body.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            new RegExp(
              `^Ingress\\.networking\\.k8s\\.io in ${ns} is not watched: .*grant the rule .* in namespace ${ns}$`,
            ),
          ),
          expect.stringMatching(
            new RegExp(
              `^HorizontalPodAutoscaler\\.autoscaling in ${ns} is not watched: .*grant the rule .* in namespace ${ns}$`,
            ),
          ),
        ]),
      );
    const crb = body.warnings.filter((w) => w.startsWith('ClusterRoleBinding.'));
    expect(crb).toHaveLength(1);
    expect(crb[0]).toMatch(/^ClusterRoleBinding\.rbac\.authorization\.k8s\.io is not watched: .* cluster-wide$/);
    expect(await splitClusterScoped(r)).toEqual([]);
  });

  it('a grant is picked up when its RoleBinding appears, not at the end of the 403 backoff', async () => {
    const teamC = await cluster.newNamespace('team-c');
    await grantReadInNamespace(teamC);
    // This user may read RoleBindings in team-c: refwatch sees the grant happen.
    await grantReadInNamespace(teamC, 'rbac-reader', { apiGroups: [RBAC], resources: ['rolebindings'] });
    const r = await start([teamC]);
    const ingress = () => r.pool.watches().find((w) => w.target.kind === 'Ingress' && w.target.namespace === teamC);
    // Wait for the third 403: its retry is about 4 s away.
    await expect
      .poll(
        () => {
          const e = ingress()?.lastError;
          return e?.retryAt !== undefined && e.retryAt - e.at >= 4_000;
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    const retryAt = ingress()!.lastError!.retryAt!;
    await grantReadInNamespace(teamC, 'ingress-reader', { apiGroups: ['networking.k8s.io'], resources: ['ingresses'] });
    await expect.poll(() => ingress()?.primed, { timeout: 10_000, interval: 50 }).toBe(true);
    expect(Date.now()).toBeLessThan(retryAt);
  });
});
