import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { KubeClient, KubeRequestError } from '@/lib/kube';
import { runCli, type CliRun } from '../setup/cli';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * The CLI's headless modes read the cluster's ReferenceRules: a platform
 * team's rule gives a `refwatch check` finding and an `explain` answer, a
 * bad ReferenceRules is reported with its field and skipped, and --offline
 * reads none.
 */

const clusterKind = inject('refwatchCluster').kind;
const ROOT = path.resolve(import.meta.dirname, '../..');
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD = parse(fs.readFileSync(path.join(ROOT, 'deploy/kubernetes/base/referencerules-crd.yaml'), 'utf8')) as {
  metadata: { name: string };
};
let cluster: TestCluster;
let client: KubeClient;
let dir: string;
let kubeconfig: string;
let ns: string;
let createdCrd = false;

function run(args: string[], stdin?: string): Promise<CliRun> {
  return runCli(args, { env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: kubeconfig }, stdin: stdin ?? '' });
}

const rulesPath = (name = '') => `/apis/refwatch.dev/v1alpha1/namespaces/${ns}/referencerules${name ? `/${name}` : ''}`;
const rules = (name: string, path: string) => ({
  apiVersion: 'refwatch.dev/v1alpha1',
  kind: 'ReferenceRules',
  metadata: { name },
  spec: { rules: [{ referrer: { kind: 'ConfigMap' }, references: [{ path, referent: { kind: 'Secret' } }] }] },
});
const settings = (secret: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\ndata: {credentialsSecret: ${secret}}\n`;

beforeAll(async () => {
  cluster = await getTestCluster();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-check-rrules-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, stringify(cluster.kubeconfig), { mode: 0o600 });
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'test' });
  // The real tier shares one cluster between files: a CRD another file installed is left to it.
  createdCrd = await client.request('POST', CRDS, { body: CRD }).then(
    () => true,
    (e: unknown) => {
      if (e instanceof KubeRequestError && e.status === 409) return false;
      throw e;
    },
  );
  for (let served = false; !served;) {
    const list = (await client.request('GET', '/apis/refwatch.dev/v1alpha1').catch(() => undefined)) as
      { resources?: { name: string }[] } | undefined;
    served = list?.resources?.some((r) => r.name === 'referencerules') ?? false;
    if (!served) await new Promise((r) => setTimeout(r, 100));
  }
  ns = await cluster.newNamespace('check-rrules');
  await client.request('POST', rulesPath(), { body: rules('settings-credentials', 'data.credentialsSecret') });
  await client.request('POST', rulesPath(), { body: rules('broken', 'data..credentialsSecret') });
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-creds' }, stringData: { p: 'x' } },
  });
}, 120_000);

afterAll(async () => {
  for (const name of ['settings-credentials', 'broken'])
    await client?.request('DELETE', rulesPath(name)).catch(() => undefined);
  if (createdCrd) await client?.request('DELETE', `${CRDS}/${CRD.metadata.name}`).catch(() => undefined);
  client?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe(`the CLI reads the cluster's ReferenceRules (${clusterKind})`, () => {
  it('check: a ReferenceRules relation gives a finding, a bad ReferenceRules is a warning naming its field, never fatal', async () => {
    const r = await run(['check', '-f', '-', '-n', ns], settings('db-cred'));
    console.log(`refwatch check (ReferenceRules):\n${r.stdout}${r.stderr}(exit ${r.code})`);
    expect(r.stdout).toBe(
      `-#1: ConfigMap/${ns}/app-settings: dangling: data.credentialsSecret: Secret ${ns}/db-cred does not exist; did you mean db-creds?; fix: set data.credentialsSecret to db-creds, or create Secret ${ns}/db-cred\n`,
    );
    expect(r.stderr).toMatch(
      new RegExp(
        `^warning: ReferenceRules ${ns}/broken spec\\.rules\\[0\\]\\.references\\[0\\]\\.path: "data\\.\\.credentialsSecret": [^\\n]+\\n`,
      ),
    );
    expect(r.stderr).toMatch(
      /\nnote: ReferenceRules: \d+ read from the cluster, \d+ applied, \d+ rejected \(see the warnings\)\n/,
    );
    expect(r.code).toBe(1);

    const fixed = await run(['check', '-f', '-', '-n', ns], settings('db-creds'));
    expect(fixed.stdout).toBe('');
    expect(fixed.code).toBe(0);
  }, 60_000);

  it('check --offline reads no ReferenceRules', async () => {
    const r = await run(['check', '-f', '-', '-n', ns, '--offline'], settings('db-cred'));
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('1 object in 1 file checked against the set alone (--offline): no dangling reference\n');
    expect(r.code).toBe(0);
  }, 60_000);

  it('explain, headless: a referrer kind only a ReferenceRules names is explained', async () => {
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: parse(settings('db-cred')) as object,
    });
    const r = await run(['explain', `ConfigMap/${ns}/app-settings`, '-o', 'json']);
    console.log(`refwatch explain (ReferenceRules):\n${r.stdout}${r.stderr}(exit ${r.code})`);
    expect(r.stderr).toContain(`warning: ReferenceRules ${ns}/broken spec.rules[0].references[0].path:`);
    const out = JSON.parse(r.stdout) as {
      controllers: { controller: string; references: { referent: string; fieldPath: string; state: string }[] }[];
    };
    expect(out.controllers.map((c) => c.controller)).toEqual(['rules/ConfigMap']);
    expect(out.controllers[0]!.references).toEqual([
      expect.objectContaining({
        referent: `Secret/${ns}/db-cred`,
        fieldPath: 'data.credentialsSecret',
        state: 'NotFound',
      }),
    ]);
    expect(r.code).toBe(1);
  }, 60_000);
});
