import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { stuck } from '@/lib/diagnose';
import { KubeClient } from '@/lib/kube';
import { getReadyz } from '@/server/api';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { installCrds } from '../setup/crds';
import type { KubeconfigFile } from '../setup/kube-http';

/*
 * ReferenceRules objects while the server runs, on the embedded server and
 * kube-apiserver alike: the CRD this project ships, and a test CRD (Widget)
 * that only a ReferenceRules object teaches refwatch about.
 */

const clusterKind = inject('refwatchCluster').kind;
const ROOT = path.resolve(import.meta.dirname, '../..');
const GROUP = 'rrtest.refwatch.dev';
const WIDGET_KIND = `Widget.${GROUP}`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const referenceRulesCrd = parse(
  readFileSync(path.join(ROOT, 'deploy/kubernetes/base/referencerules-crd.yaml'), 'utf8'),
);
const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

let cluster: TestCluster;
let client: KubeClient;
let dir: string;
let rt: Runtime | undefined;
const created: string[] = [];

async function start(kubeconfig: KubeconfigFile, name: string): Promise<Runtime> {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(kubeconfig), { mode: 0o600 });
  rt = await startRuntime(
    parseConfig({
      REFWATCH_CLUSTER: 'kubeconfig',
      KUBECONFIG: file,
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_RULE_PACKS: 'core',
      REFWATCH_LOG_LEVEL: 'error',
    }),
  );
  return rt;
}

async function readyz(r: Runtime): Promise<{ status: number; body: { status: string; warnings: string[] } }> {
  const res = getReadyz(r);
  return { status: res.status, body: (await res.json()) as { status: string; warnings: string[] } };
}

const rulesPath = (ns: string, name = '') =>
  `/apis/refwatch.dev/v1alpha1/namespaces/${ns}/referencerules${name ? `/${name}` : ''}`;

const widgetRules = (path: string, referent: string) => ({
  rules: [{ referrer: { group: GROUP, kind: 'Widget' }, references: [{ path, referent: { kind: referent } }] }],
});

const POLL = { timeout: 20_000, interval: 100 };

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  dir = mkdtempSync(path.join(tmpdir(), 'refwatch-reference-rules-'));
  // The real tier shares one cluster between files: a CRD another file installed is left to it.
  created.push(...(await installCrds(client, [referenceRulesCrd, widgetCrd])));
}, 120_000);
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});
afterAll(async () => {
  for (const name of created.splice(0).reverse())
    await client?.request('DELETE', `${CRDS}/${name}`).catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe(`ReferenceRules objects on the ${clusterKind} cluster`, () => {
  it('a good one applies live, a bad one is reported naming the field while the good one works, an edit takes effect, a delete removes its relations', async () => {
    const ns = await cluster.newNamespace('rrules');
    const r = await start(cluster.kubeconfig, 'admin');
    const w1 = `${WIDGET_KIND}/${ns}/w1`;
    const controller = `rules/${WIDGET_KIND}`;
    const stuckOf = () =>
      stuck(r.manager, { olderThan: 0 })
        .filter((e) => e.key === w1)
        .map((e) => [e.reason, e.referent]);

    await client.request('POST', rulesPath(ns), {
      body: {
        apiVersion: 'refwatch.dev/v1alpha1',
        kind: 'ReferenceRules',
        metadata: { name: 'widgets' },
        spec: widgetRules('spec.configRef.name', 'ConfigMap'),
      },
    });
    await client.request('POST', `/apis/${GROUP}/v1/namespaces/${ns}/widgets`, {
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { configRef: { name: 'settings' }, secretRef: { name: 'creds' } },
      },
    });
    // A referrer of a kind only the object names, with its referent missing: stuck, diagnosed.
    await expect.poll(stuckOf, POLL).toEqual([['NotFound', `ConfigMap/${ns}/settings`]]);
    expect(r.cluster().referenceRules).toEqual([
      {
        message: expect.stringMatching(
          new RegExp(`^ReferenceRules ${ns}/widgets: applied( \\(generation 1\\))?: 1 rule for ${WIDGET_KIND}$`),
        ),
        ok: true,
        problems: [],
      },
    ]);

    // A bad one: reported in /readyz, the Cluster panel and the log, naming the field; the good one keeps working.
    await client.request('POST', rulesPath(ns), {
      body: {
        apiVersion: 'refwatch.dev/v1alpha1',
        kind: 'ReferenceRules',
        metadata: { name: 'broken' },
        spec: widgetRules('spec..name', 'Secret'),
      },
    });
    const field = `ReferenceRules ${ns}/broken spec.rules[0].references[0].path: `;
    await expect
      .poll(async () => (await readyz(r)).body.warnings.filter((w) => w.startsWith(field)), POLL)
      .toHaveLength(1);
    const { status, body } = await readyz(r);
    expect(status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(r.cluster().referenceRules?.find((x) => !x.ok)).toMatchObject({
      message: `ReferenceRules ${ns}/broken: rejected, nothing of it applies`,
      problems: [expect.stringMatching(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}.+`))],
    });
    expect(stuckOf()).toEqual([['NotFound', `ConfigMap/${ns}/settings`]]);

    // An edit of the good one: the new path replaces the old one.
    await client.request('PATCH', rulesPath(ns, 'widgets'), {
      body: { spec: widgetRules('spec.secretRef.name', 'Secret') },
      contentType: 'application/merge-patch+json',
    });
    await expect.poll(stuckOf, POLL).toEqual([['NotFound', `Secret/${ns}/creds`]]);
    expect(r.manager.registry.referencesOf(controller, w1).map((x) => x.referent)).toEqual([`Secret/${ns}/creds`]);

    // Fixing the bad one clears its warning.
    await client.request('PATCH', rulesPath(ns, 'broken'), {
      body: { spec: widgetRules('spec.secretRef.name', 'Secret') },
      contentType: 'application/merge-patch+json',
    });
    await expect
      .poll(async () => (await readyz(r)).body.warnings.filter((w) => w.includes('ReferenceRules')), POLL)
      .toEqual([]);

    // Delete both: the Widget kind is no longer watched and its relations are gone.
    await client.request('DELETE', rulesPath(ns, 'broken'));
    await client.request('DELETE', rulesPath(ns, 'widgets'));
    await expect.poll(() => r.manager.controllerNames().includes(controller), POLL).toBe(false);
    await expect.poll(() => r.manager.registry.referencesOf(controller, w1), POLL).toEqual([]);
    expect(stuckOf()).toEqual([]);
    expect(r.pool.watches().some((w) => w.target.kind === 'Widget' && w.target.group === GROUP)).toBe(false);
  }, 120_000);

  it.runIf(clusterKind === 'real')(
    'a user RBAC forbids to read ReferenceRules gets a Forbidden warning with the rule to grant, never a crash or a readiness outage',
    async () => {
      const r = await start(cluster.restrictedKubeconfig!, 'restricted');
      await expect.poll(async () => (await readyz(r)).status, { timeout: 20_000, interval: 200 }).toBe(200);
      const line = r.cluster().referenceRules?.[0];
      expect(line).toMatchObject({ ok: false, problems: [] });
      expect(line?.message).toMatch(
        /^ReferenceRules: not watched \(Forbidden\): .*; grant apiGroups: \["refwatch.dev"\], resources: \["referencerules"\], verbs: \["list","watch"\]; the rules files and packs stay in force$/,
      );
      expect((await readyz(r)).body.warnings.filter((w) => w.startsWith('ReferenceRules.refwatch.dev'))).toEqual([
        expect.stringContaining('referencerules'),
      ]);
    },
    60_000,
  );
});
