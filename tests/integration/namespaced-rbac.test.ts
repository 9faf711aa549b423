import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { explain, type ReferenceExplanation } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import {
  KubeClient,
  SharedInformerPool,
  type KubeTransport,
  type Query,
  type ReadOptions,
  type WatchStream,
} from '@/lib/kube';
import { createMetrics } from '@/server/metrics';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * Namespace scope on a live cluster. On kube-apiserver the narrow identity is
 * a ServiceAccount bound by RoleBindings; the embedded server has no RBAC, so
 * there faults.forbid refuses the same requests RBAC would: Secrets at the
 * cluster scope and in the third namespace.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let admin: KubeClient;
const managers: Manager[] = [];

beforeAll(async () => {
  cluster = await getTestCluster();
  admin = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  cluster.faults?.reset();
});

function startManager(transport: KubeTransport, namespaces?: string[]): { manager: Manager; pool: SharedInformerPool } {
  const pool = new SharedInformerPool({
    client: transport,
    reflector: { backoff: { initialMs: 100, maxMs: 1_000 }, forbiddenRetryMs: 300 },
  });
  const manager = new Manager({ source: pool, grace: 500, statsIntervalMs: 0, ...(namespaces ? { namespaces } : {}) });
  managers.push(manager);
  return { manager, pool };
}

const post = (path: string, body: object) => admin.request('POST', path, { body });
const secret = (ns: string, name: string) =>
  post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name }, stringData: { v: '1' } });

/** The explanations of the referrer's references, in declaration order. */
function referencesOf(manager: Manager, key: string): ReferenceExplanation[] {
  const r = explain(manager, key);
  return r.ok ? (r.value.controllers[0]?.references ?? []) : [];
}

/** The explanation of the referrer's first reference. */
function explained(manager: Manager, key: string): ReferenceExplanation | undefined {
  return referencesOf(manager, key)[0];
}

/** CountingTransport counts the requests of each path, lists and watches alike. */
class CountingTransport implements KubeTransport {
  readonly requests = new Map<string, number>();
  constructor(private readonly inner: KubeTransport) {}
  get server(): string {
    return this.inner.server;
  }
  count(path: string): number {
    return this.requests.get(path) ?? 0;
  }
  getJSON<T>(p: string, query?: Query, signal?: AbortSignal, opts?: ReadOptions): Promise<T> {
    this.requests.set(p, this.count(p) + 1);
    return this.inner.getJSON<T>(p, query, signal, opts);
  }
  openStream(p: string, query: Query, signal: AbortSignal, opts?: ReadOptions): Promise<WatchStream> {
    this.requests.set(p, this.count(p) + 1);
    return this.inner.openStream(p, query, signal, opts);
  }
}

describe(`the namespaces option on the ${clusterKind} cluster`, () => {
  it('watches only the listed namespaces; a reference elsewhere is OutOfScope', async () => {
    const [a, b, c] = await Promise.all([
      cluster.newNamespace('scope-a'),
      cluster.newNamespace('scope-b'),
      cluster.newNamespace('scope-c'),
    ]);
    await Promise.all([secret(a, 'db'), secret(b, 'db'), secret(c, 'db')]);
    const cm = (ns: string, data: Record<string, string>) =>
      post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'app' }, data });
    await Promise.all([
      cm(a, { db: `Secret/${a}/db` }),
      cm(b, { db: `Secret/${b}/db`, other: `Secret/${c}/db` }),
      cm(c, { db: `Secret/${c}/db` }),
    ]);

    const { manager, pool } = startManager(admin, [a, b]);
    manager.addController({
      name: 'configmaps',
      for: { group: '', kind: 'ConfigMap' },
      reconcile(ctx) {
        for (const [field, referent] of Object.entries((ctx.object?.data ?? {}) as Record<string, string>))
          ctx.resolve(referent, `data.${field}`);
      },
    });
    manager.start();

    await expect.poll(() => explained(manager, `ConfigMap/${a}/app`)?.state, { timeout: 20_000 }).toBe('Ready');
    await expect
      .poll(() => referencesOf(manager, `ConfigMap/${b}/app`).map((r) => r.state), { timeout: 20_000 })
      .toEqual(['Ready', 'Forbidden']);
    const outside = referencesOf(manager, `ConfigMap/${b}/app`)[1]!;
    expect(outside).toMatchObject({ referent: `Secret/${c}/db`, state: 'Forbidden', reason: 'OutOfScope' });
    expect(outside.message).toContain(`add ${c} to the Manager's namespaces option`);
    // The third namespace's referrer is never seen: nothing watches there.
    expect(explain(manager, `ConfigMap/${c}/app`).ok).toBe(false);
    const targets = pool.watches().map((w) => `${w.target.kind}|${w.target.namespace ?? '*'}`);
    expect(targets.sort()).toEqual([`ConfigMap|${a}`, `ConfigMap|${b}`, `Secret|${a}`, `Secret|${b}`].sort());
  });
});

/**
 * secretsReaderIn returns a client allowed to read Secrets in namespaces a and
 * b only: on kube-apiserver a ServiceAccount in a bound by a Role in each, with
 * no ClusterRole at all; on the embedded server, the admin with faults that
 * refuse what RBAC would.
 */
async function secretsReaderIn(a: string, b: string, c: string): Promise<KubeTransport> {
  if (cluster.faults) {
    cluster.faults.forbid('', 'secrets', '');
    cluster.faults.forbid('', 'secrets', c);
    return admin;
  }
  await post(`/api/v1/namespaces/${a}/serviceaccounts`, { metadata: { name: 'controller' } });
  for (const ns of [a, b]) {
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'read-secrets' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    });
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'controller-reads-secrets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-secrets' },
      subjects: [{ kind: 'ServiceAccount', name: 'controller', namespace: a }],
    });
  }
  const issued = (await admin.request('POST', `/api/v1/namespaces/${a}/serviceaccounts/controller/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  })) as { status: { token: string } };
  const token = issued.status.token;
  const kubeconfig = { ...cluster.kubeconfig, users: cluster.kubeconfig.users.map((u) => ({ ...u, user: { token } })) };
  return KubeClient.fromKubeconfig(kubeconfig, { source: 'ServiceAccount controller' });
}

describe(`a controller allowed Secrets in two namespaces only, on the ${clusterKind} cluster`, () => {
  it('watches per namespace; a third namespace is Forbidden with the missing Role rule; the cluster-wide list is tried once', async () => {
    const [a, b, c] = await Promise.all([
      cluster.newNamespace('rbac-a'),
      cluster.newNamespace('rbac-b'),
      cluster.newNamespace('rbac-c'),
    ]);
    await Promise.all([secret(a, 'db'), secret(b, 'db'), secret(c, 'db')]);
    const transport = new CountingTransport(await secretsReaderIn(a, b, c));

    const { manager, pool } = startManager(transport);
    const metrics = createMetrics();
    metrics.attach(manager, pool);
    // The ServiceAccount may not list ConfigMaps: this controller is fed its referrers' keys.
    const declared = new Map([
      [`ConfigMap/${a}/app`, `Secret/${a}/db`],
      [`ConfigMap/${b}/app`, `Secret/${b}/db`],
      [`ConfigMap/${c}/app`, `Secret/${c}/db`],
    ]);
    const controller = manager.addController({
      name: 'declared',
      reconcile(ctx) {
        const referent = declared.get(ctx.key);
        if (referent) ctx.resolve(referent, 'data.db');
      },
    });
    manager.start();
    for (const key of declared.keys()) controller.enqueue(key);

    await expect.poll(() => explained(manager, `ConfigMap/${a}/app`)?.state, { timeout: 20_000 }).toBe('Ready');
    await expect.poll(() => explained(manager, `ConfigMap/${b}/app`)?.state, { timeout: 20_000 }).toBe('Ready');
    await expect.poll(() => explained(manager, `ConfigMap/${c}/app`)?.state, { timeout: 20_000 }).toBe('Forbidden');
    const forbidden = explained(manager, `ConfigMap/${c}/app`)!;
    expect(forbidden.fix).toBe(
      `grant the controller's service account this rule in a Role in namespace ${c}: apiGroups: [""], resources: ["secrets"], verbs: ["list","watch"]`,
    );
    expect(manager.changelog.get('referent', `Secret/${c}/db`)?.state).toBe('Forbidden');

    expect(manager.referenceControllers.state('Secret')).toBe('Cancelled');
    expect(manager.changelog.get('controller', 'Secret')?.reason).toBe(
      'listing Secret in all namespaces is forbidden: watching each namespace its referents live in instead',
    );
    expect(manager.changelog.get('controller', `Secret/${a}`)).toMatchObject({
      kind: 'Secret',
      namespace: a,
      state: 'Active',
    });
    expect(manager.changelog.get('controller', `Secret/${b}`)).toMatchObject({
      kind: 'Secret',
      namespace: b,
      state: 'Active',
    });
    const exposition = await metrics.registry.metrics();
    expect(exposition).toContain(`refwatch_watches{kind="Secret",namespace="${a}",primed="true"} 1`);
    expect(exposition).toContain(`refwatch_watches{kind="Secret",namespace="${b}",primed="true"} 1`);
    expect(exposition).toContain(`refwatch_watches{kind="Secret",namespace="${c}",primed="false"} 1`);
    expect(exposition).not.toContain('refwatch_watches{kind="Secret",namespace=""');
    metrics.detach();

    // The forbidden namespace retries on its backoff (300 ms here); the cluster-wide list is never tried again.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(transport.count(`/api/v1/namespaces/${c}/secrets`)).toBeGreaterThan(1);
    expect(transport.count('/api/v1/secrets')).toBe(1);

    // The last reference into b goes: its watch is cancelled after grace, a's stays.
    declared.delete(`ConfigMap/${b}/app`);
    controller.enqueue(`ConfigMap/${b}/app`);
    await expect.poll(() => manager.referenceControllers.state('Secret', b), { timeout: 10_000 }).toBe('Cancelled');
    expect(manager.referenceControllers.state('Secret', a)).toBe('Active');
    expect(transport.count('/api/v1/secrets')).toBe(1);
  });
});
