import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeClient } from '@/lib/kube';
import { runCli, type CliRun as Run } from '../setup/cli';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * `refwatch check -f` as a process against the test cluster: a set whose
 * Deployment names a ConfigMap defined in a later file passes, a typo fails
 * with exit 1 and the fix, --offline judges the set alone, and a cluster the
 * user cannot read (or reach) is exit 2 with a clear error.
 */

let cluster: TestCluster;
let client: KubeClient;
let dir: string;
let kubeconfig: string;
let ns: string;

function run(args: string[], stdin?: string): Promise<Run> {
  return runCli(args, { env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: kubeconfig }, stdin: stdin ?? '' });
}

const deployment = (configMap: string, secret: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: web
          image: nginx
          envFrom:
            - configMapRef: { name: ${configMap} }
      volumes:
        - name: db
          secret: { secretName: ${secret} }
`;

const CONFIG = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data: { a: b }
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{ port: 80 }]
`;

function writeSet(name: string, files: Record<string, string>): string {
  const d = path.join(dir, name);
  fs.mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(d, f)), { recursive: true });
    fs.writeFileSync(path.join(d, f), text);
  }
  return d;
}

beforeAll(async () => {
  cluster = await getTestCluster();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-check-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, stringify(cluster.kubeconfig), { mode: 0o600 });
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'test' });
  ns = await cluster.newNamespace('check');
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password' }, stringData: { p: 'x' } },
  });
}, 60_000);

afterAll(() => {
  client?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('refwatch check', () => {
  it('passes a directory whose Deployment names a ConfigMap of a later file, and a Secret in the cluster', async () => {
    // 10-app.yaml sorts before 20-config.yaml: kubectl would send the Deployment first.
    const set = writeSet('ordered', {
      '10-app.yaml': deployment('web-config', 'db-password'),
      '20-config.yaml': CONFIG,
    });
    const r = await run(['check', '-f', set, '-n', ns]);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^note: ReferenceRules: [^\n]+\n3 objects in 2 files checked against the cluster: no dangling reference\n$/,
    );
    expect(r.code).toBe(0);
  }, 60_000);

  it('fails a typo with exit 1, the file, document, object and fix', async () => {
    const set = writeSet('typo', { 'app.yaml': `${CONFIG}---\n${deployment('web-config', 'db-pasword')}` });
    const r = await run(['check', '-f', set, '-n', ns]);
    console.log(`refwatch check -f ${set} -n ${ns}:\n${r.stdout}${r.stderr}(exit ${r.code})`);
    expect(r.stdout).toBe(
      `${set}/app.yaml#3: Deployment.apps/${ns}/web: dangling: spec.template.spec.volumes[0].secret.secretName: Secret ${ns}/db-pasword does not exist; did you mean db-password?; fix: set spec.template.spec.volumes[0].secret.secretName to db-password, or create Secret ${ns}/db-pasword\n`,
    );
    expect(r.code).toBe(1);
    const json = await run(['check', '-f', '-', '-n', ns, '-o', 'json'], deployment('web-confg', 'db-password'));
    expect(json.code).toBe(1);
    const out = JSON.parse(json.stdout) as { findings: { file: string; document: number; referent: string }[] };
    expect(out.findings).toEqual([
      expect.objectContaining({ file: '-', document: 1, referent: `ConfigMap/${ns}/web-confg` }),
    ]);
  }, 60_000);

  it('--offline judges the set alone: what the cluster holds counts as missing', async () => {
    const set = writeSet('offline', { 'a/app.yaml': deployment('web-config', 'db-password'), 'b/config.yaml': CONFIG });
    // Without -R the subdirectories are not read.
    const flat = await run(['check', '-f', set, '--offline']);
    expect(flat.code).toBe(2);
    expect(flat.stderr).toContain('no Kubernetes objects in');
    const r = await run(['check', '-f', set, '-R', '--offline', '-n', 'prod']);
    expect(r.stdout).toContain(
      `${set}/a/app.yaml#1: Deployment.apps/prod/web: dangling: spec.template.spec.volumes[0].secret.secretName: Secret prod/db-password does not exist; fix:`,
    );
    expect(r.stdout).not.toContain('web-config');
    expect(r.code).toBe(1);
  }, 60_000);

  it('says why with exit 2 when the cluster cannot be read', async () => {
    const set = writeSet('denied', { 'app.yaml': deployment('web-config', 'db-password') });
    let other: string;
    if (cluster.restrictedKubeconfig) {
      other = path.join(dir, 'restricted');
      fs.writeFileSync(other, stringify(cluster.restrictedKubeconfig), { mode: 0o600 });
    } else {
      // The embedded cluster has no RBAC: a server that is not there stands in.
      const doc = structuredClone(cluster.kubeconfig);
      doc.clusters[0]!.cluster.server = 'https://127.0.0.1:9';
      other = path.join(dir, 'gone');
      fs.writeFileSync(other, stringify(doc), { mode: 0o600 });
    }
    const r = await run(['check', '-f', set, '-n', ns, '--kubeconfig', other, '--timeout', '20s']);
    console.log(`refwatch check (cluster not readable):\n${r.stdout}${r.stderr}(exit ${r.code})`);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      cluster.restrictedKubeconfig
        ? /^error: cannot read (ConfigMap|Secret) \(--kubeconfig .*\): .*forbidden/i
        : /^error: cannot read (ConfigMap|Secret) \(--kubeconfig .*\): .*(refused|unreachable)/i,
    );
  }, 60_000);
});
