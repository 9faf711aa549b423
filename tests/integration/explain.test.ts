import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { explain, type ReferenceExplanation } from '@/lib/diagnose';
import { Manager } from '@/lib/engine';
import {
  KubeClient,
  KubeRequestError,
  SharedInformerPool,
  type KubeTransport,
  type Query,
  type WatchStream,
} from '@/lib/kube';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import type { KubeconfigFile } from '../setup/kube-http';

/*
 * Every reason GET /api/v1/explain gives, provoked on a live cluster: the
 * embedded server and kube-apiserver run the same file. Referrers are
 * ConfigMaps whose data entries name their referents by key; a data entry
 * `db: Secret/shop/db-password` is the reference at field path `data.db`.
 */

const clusterKind = inject('refwatchCluster').kind;
let cluster: TestCluster;
let client: KubeClient;
const managers: Manager[] = [];
/** A kind defined per file, so its CRD neither leaks into nor collides with other files. */
let gadgets: { group: string; kind: string; crd: string };

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  const group = `explain${randomBytes(4).toString('hex')}.refwatch.dev`;
  gadgets = { group, kind: 'Gadget', crd: `gadgets.${group}` };
  await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: gadgets.crd },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
  });
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  cluster.faults?.reset();
});
afterAll(async () => {
  await client
    ?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${gadgets.crd}`)
    .catch(() => undefined);
});

/** startManager runs a Manager with short retry delays, so a failing watch reports within a test. */
function startManager(transport: KubeTransport = client): Manager {
  const pool = new SharedInformerPool({
    client: transport,
    reflector: { backoff: { initialMs: 100, maxMs: 1_000 }, forbiddenRetryMs: 500 },
  });
  const manager = new Manager({ source: pool, grace: 1_000, statsIntervalMs: 0 });
  managers.push(manager);
  return manager;
}

/** watchConfigMaps adds the controller that reconciles the namespace's ConfigMaps as referrers. */
function watchConfigMaps(manager: Manager, namespace: string): void {
  manager.addController({
    name: 'configmaps',
    for: { group: '', kind: 'ConfigMap', namespace },
    reconcile(ctx) {
      const data = (ctx.object?.data ?? {}) as Record<string, string>;
      for (const [field, referent] of Object.entries(data)) ctx.resolve(referent, `data.${field}`);
    },
  });
  manager.start();
}

async function create(path: string, body: object): Promise<void> {
  await client.request('POST', path, { body });
}
const referrerCM = (ns: string, name: string, data: Record<string, string>) =>
  create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name }, data });
const secret = (ns: string, name: string) =>
  create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name }, stringData: { v: '1' } });

/** The explanation of the referrer's only reference (first controller). */
function explained(manager: Manager, key: string): ReferenceExplanation | undefined {
  const r = explain(manager, key);
  return r.ok ? r.value.controllers[0]?.references[0] : undefined;
}

async function createGadget(ns: string, name: string): Promise<void> {
  // A new CRD may take a moment to be served.
  await expect
    .poll(
      () =>
        create(`/apis/${gadgets.group}/v1/namespaces/${ns}/gadgets`, {
          apiVersion: `${gadgets.group}/v1`,
          kind: 'Gadget',
          metadata: { name },
        }).then(
          () => true,
          (e: unknown) => (e instanceof KubeRequestError && e.status === 404 ? false : Promise.reject(e)),
        ),
      { timeout: 20_000 },
    )
    .toBe(true);
}

async function setReady(ns: string, name: string, condition: object): Promise<void> {
  await client.request('PATCH', `/apis/${gadgets.group}/v1/namespaces/${ns}/gadgets/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        conditions: [
          { type: 'Ready', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), ...condition },
        ],
      },
    },
  });
}

/**
 * HeldList holds back the list and watch requests of one resource path until
 * released, as a slow API server or network would: neither cluster has a
 * knob to delay one resource's list while serving the rest.
 */
class HeldList implements KubeTransport {
  private released!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.released = resolve));
  constructor(
    private readonly inner: KubeTransport,
    private readonly path: string,
  ) {}
  get server(): string {
    return this.inner.server;
  }
  release(): void {
    this.released();
  }
  async getJSON<T>(p: string, query?: Query, signal?: AbortSignal): Promise<T> {
    if (p === this.path) await this.gate;
    return this.inner.getJSON<T>(p, query, signal);
  }
  async openStream(p: string, query: Query, signal: AbortSignal): Promise<WatchStream> {
    if (p === this.path) await this.gate;
    return this.inner.openStream(p, query, signal);
  }
}

describe(`explain on the ${clusterKind} cluster`, () => {
  it('NotFound: a typo in the name suggests the existing object', async () => {
    const ns = await cluster.newNamespace('explain-typo');
    await secret(ns, 'db-password');
    const manager = startManager();
    watchConfigMaps(manager, ns);
    await referrerCM(ns, 'orders', { db: `Secret/${ns}/db-pasword` });

    const key = `ConfigMap/${ns}/orders`;
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('NotFound');
    const ref = explained(manager, key)!;
    expect(ref.fieldPath).toBe('data.db');
    expect(ref.suggestions).toEqual([`Secret/${ns}/db-password`]);
    expect(ref.message).toContain('did you mean db-password?');
    expect(ref.fix).toBe(`set data.db to db-password, or create Secret/${ns}/db-pasword`);
  });

  it('NotFound: the same name in another namespace', async () => {
    const [ns, other] = await Promise.all([
      cluster.newNamespace('explain-here'),
      cluster.newNamespace('explain-there'),
    ]);
    await secret(other!, 'ledger');
    const manager = startManager();
    watchConfigMaps(manager, ns!);
    await referrerCM(ns!, 'billing', { ledger: `Secret/${ns}/ledger` });

    const key = `ConfigMap/${ns}/billing`;
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('NotFound');
    const ref = explained(manager, key)!;
    expect(ref.message).toContain(`ledger exists in namespace ${other}`);
    expect(ref.suggestions).toContain(`Secret/${other}/ledger`);
    expect(ref.fix).toContain(`set data.ledger.namespace to ${other}`);
  });

  it("NotReady: the Ready condition's reason and message, until it turns True", async () => {
    const ns = await cluster.newNamespace('explain-notready');
    await createGadget(ns, 'primary');
    await setReady(ns, 'primary', { status: 'False', reason: 'Provisioning', message: 'creating volume data-0' });
    const manager = startManager();
    watchConfigMaps(manager, ns);
    const referent = `Gadget.${gadgets.group}/${ns}/primary`;
    await referrerCM(ns, 'app', { gadget: referent });

    const key = `ConfigMap/${ns}/app`;
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('NotReady');
    const ref = explained(manager, key)!;
    expect(ref.reason).toBe('Provisioning');
    expect(ref.message).toContain('creating volume data-0');
    expect(ref.fix).toContain(`kubectl describe gadgets.${gadgets.group} -n ${ns} primary`);

    await setReady(ns, 'primary', { status: 'True', reason: 'Provisioned' });
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('Ready');
    expect(manager.changelog.get('referrer', `configmaps|${key}`)?.state).toBe('Resolved');
  });

  it('KindUnknown: no CRD serves the kind', async () => {
    const ns = await cluster.newNamespace('explain-kind');
    const manager = startManager();
    watchConfigMaps(manager, ns);
    await referrerCM(ns, 'app', { widget: `Widget.nowhere.refwatch.dev/${ns}/x` });

    const key = `ConfigMap/${ns}/app`;
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('KindUnknown');
    const ref = explained(manager, key)!;
    expect(ref.fix).toBe(
      'install the CustomResourceDefinition for widgets.nowhere.refwatch.dev, or correct the kind data.widget refers to',
    );
    expect(manager.changelog.get('referent', `Widget.nowhere.refwatch.dev/${ns}/x`)?.state).toBe('KindUnknown');
  });

  it('Forbidden: names the RBAC rule that is missing', async () => {
    const ns = await cluster.newNamespace('explain-forbidden');
    let transport: KubeTransport = client;
    if (cluster.faults) {
      cluster.faults.forbid('', 'secrets');
    } else {
      // kube-apiserver refuses the `restricted` user every list: RBAC binds it to nothing.
      transport = KubeClient.fromKubeconfig(cluster.restrictedKubeconfig as KubeconfigFile, {
        source: 'restricted user',
      });
    }
    const manager = startManager(transport);
    // The restricted identity cannot list its referrers either, so this controller is fed keys, not a watch.
    const key = `ConfigMap/${ns}/app`;
    const declared = new Map([[key, `Secret/${ns}/db-password`]]);
    const controller = manager.addController({
      name: 'declared',
      reconcile(ctx) {
        const referent = declared.get(ctx.key);
        if (referent) ctx.resolve(referent, 'data.db');
      },
    });
    manager.start();
    controller.enqueue(key);

    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('Forbidden');
    const ref = explained(manager, key)!;
    // Forbidden in all namespaces, then in the referent's own: the fix names the narrowest grant, a Role there.
    expect(ref.fix).toBe(
      `grant the controller's service account this rule in a Role in namespace ${ns}: apiGroups: [""], resources: ["secrets"], verbs: ["list","watch"]`,
    );
    expect(manager.referenceControllers.inspect('Secret')?.failing?.missingRule).toEqual({
      apiGroup: '',
      resource: 'secrets',
      verbs: ['list', 'watch'],
    });
    expect(manager.referenceControllers.inspect('Secret', ns)?.failing?.missingRule).toEqual({
      apiGroup: '',
      resource: 'secrets',
      verbs: ['list', 'watch'],
      namespace: ns,
    });
    expect(manager.changelog.get('referent', `Secret/${ns}/db-password`)?.state).toBe('Forbidden');
  });

  it('NotPrimed: nothing is judged missing while the initial list is held back', async () => {
    const ns = await cluster.newNamespace('explain-priming');
    const held = new HeldList(client, '/api/v1/secrets');
    const manager = startManager(held);
    const key = `ConfigMap/${ns}/app`;
    const controller = manager.addController({
      name: 'declared',
      reconcile: (ctx) => void ctx.resolve(`Secret/${ns}/db-password`, 'data.db'),
    });
    manager.start();
    controller.enqueue(key);

    await expect.poll(() => explained(manager, key)?.state, { timeout: 10_000 }).toBe('NotPrimed');
    const ref = explained(manager, key)!;
    expect(ref.reason).toBe('Priming');
    expect(ref.message).toMatch(/^the Secret cache has been loading its initial snapshot for /);
    // Reconciled again against the unprimed cache: still waiting, never NotFound.
    const reconciles = manager.changelog.get('referrer', `declared|${key}`)!.reconciles;
    controller.enqueue(key);
    await expect
      .poll(() => manager.changelog.get('referrer', `declared|${key}`)?.reconciles, { timeout: 10_000 })
      .toBeGreaterThan(reconciles);
    expect(manager.changelog.get('referrer', `declared|${key}`)?.state).toBe('Waiting');
    expect(explained(manager, key)?.state).toBe('NotPrimed');

    // Once primed, the same reference is judged: the Secret does not exist.
    held.release();
    await expect.poll(() => explained(manager, key)?.state, { timeout: 20_000 }).toBe('NotFound');
    expect(manager.changelog.get('referrer', `declared|${key}`)?.state).toBe('NotFound');
  });
});
