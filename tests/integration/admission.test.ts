import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { Admission, generateAdmissionCertificate, startAdmissionServer, type AdmissionServer } from '@/lib/admission';
import { KubeClient, SharedInformerPool, createLogger } from '@/lib/kube';
import { builtinRuleSet, observeRuleSet } from '@/lib/rules';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { kubectl, kubectlPath } from '../setup/kubectl';

/*
 * The real tier: kube-apiserver v1.35 calls refwatch's webhook on 127.0.0.1
 * through a ValidatingWebhookConfiguration with the generated CA, and kubectl
 * v1.35 runs as a process. The webhook selects only this file's namespaces
 * (a label of its own), so parallel test files never meet it.
 */

const kind = inject('refwatchCluster').kind;
const found = kind === 'real' ? kubectlPath() : undefined;

const TYPO_POD = (ns: string, name = 'worker', secret = 'db-pasword') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  containers:
    - name: worker
      image: busybox
  volumes:
    - name: db
      secret:
        secretName: ${secret}
`;

const TYPO_DEPLOYMENT = (ns: string, secret = 'db-pasword') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx
      volumes:
        - name: db
          secret:
            secretName: ${secret}
`;

describe.runIf(found !== undefined && 'path' in found)('admission webhook on the real kube-apiserver', () => {
  const bin = found && 'path' in found ? found.path : '';
  const selector = `refwatch-admission-${process.pid}`;
  let cluster: TestCluster;
  let dir: string;
  let kubeconfig: string;
  let client: KubeClient;
  let pool: SharedInformerPool;
  let admission: Admission;
  let server: AdmissionServer;
  let port: number;
  let ca: { cert: string; key: string; ca: string };
  const webhookName = `refwatch-test-${process.pid}`;
  const run = (args: string[], stdin?: string) => kubectl(bin, kubeconfig, args, stdin);

  const startWebhook = async () => {
    server = await startAdmissionServer({
      host: '127.0.0.1',
      port,
      cert: ca.cert,
      key: ca.key,
      review: (body) => admission.review(body),
    });
    port = server.port;
  };

  /** A namespace the webhook selects; `deny` adds refwatch.dev/enforce=deny. The cache must see its labels. */
  const namespace = async (prefix: string, deny = false) => {
    const ns = await cluster.newNamespace(prefix);
    const labels = [`${selector}=on`, ...(deny ? ['refwatch.dev/enforce=deny'] : [])];
    const r = await run(['label', 'namespace', ns, ...labels]);
    expect(r.code, r.stderr).toBe(0);
    await until(() => admission.caches.namespaceLabels(ns)?.[selector] === 'on');
    const secret = await run(['create', 'secret', 'generic', 'db-password', '-n', ns, '--from-literal=p=x']);
    expect(secret.code, secret.stderr).toBe(0);
    await until(() => admission.caches.lookup(`Secret/${ns}/db-password`).state === 'found');
    return ns;
  };

  beforeAll(async () => {
    cluster = await getTestCluster();
    dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-admission-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, stringify(cluster.kubeconfig), { mode: 0o600 });
    client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: 'test' });
    pool = new SharedInformerPool({ client, logger: createLogger({ level: 'silent' }) });
    const rules = builtinRuleSet(['core']);
    const observer = observeRuleSet(rules);
    admission = new Admission({ source: pool, ruleSet: rules, readiness: (k) => observer.readiness(k) });
    void admission.prime();
    ca = await generateAdmissionCertificate(['127.0.0.1']);
    port = 0;
    await startWebhook();
    const vwc = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhookName },
      webhooks: [
        {
          name: 'references.refwatch.dev',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          timeoutSeconds: 2,
          clientConfig: { url: server.url, caBundle: Buffer.from(ca.ca).toString('base64') },
          namespaceSelector: { matchLabels: { [selector]: 'on' } },
          rules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] },
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
          ],
        },
      ],
    };
    const r = await run(['apply', '-f', '-'], JSON.stringify(vwc));
    expect(r.code, r.stderr).toBe(0);
    await until(() => admission.caches.isPrimed('Secret') && admission.caches.isPrimed('Namespace'));
  }, 120_000);

  afterAll(async () => {
    if (dir) await run(['delete', 'validatingwebhookconfiguration', webhookName, '--ignore-not-found']);
    await server?.stop();
    await admission?.stop();
    await pool?.stop();
    client?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('warns on kubectl apply of a Pod and a Deployment with a Secret typo, and still creates them', async () => {
    const ns = await namespace('adm-warn');
    // The apiserver reads a new webhook configuration within a second or so; retry until the warning shows.
    let pod = await run(['apply', '-f', '-'], TYPO_POD(ns));
    for (let i = 0; i < 20 && !pod.stderr.includes('Warning'); i++) {
      await run(['delete', 'pod', 'worker', '-n', ns, '--wait=false']);
      await new Promise((r) => setTimeout(r, 500));
      pod = await run(['apply', '-f', '-'], TYPO_POD(ns));
    }
    console.log(`kubectl apply (Pod):\n${pod.stderr}${pod.stdout}`);
    expect(pod.code).toBe(0);
    expect(pod.stderr).toContain(
      `Warning: spec.volumes[0].secret.secretName: Secret ${ns}/db-pasword does not exist; did you mean db-password?`,
    );
    expect(pod.stdout).toContain('pod/worker created');
    const dep = await run(['apply', '-f', '-'], TYPO_DEPLOYMENT(ns));
    console.log(`kubectl apply (Deployment):\n${dep.stderr}${dep.stdout}`);
    expect(dep.code).toBe(0);
    expect(dep.stderr).toContain(
      `Warning: spec.template.spec.volumes[0].secret.secretName: Secret ${ns}/db-pasword does not exist; did you mean db-password?`,
    );
    expect(dep.stdout).toContain('deployment.apps/web created');
  });

  it('gives the same warning with --dry-run=server, and none for a correct object', async () => {
    const ns = await namespace('adm-dry');
    let dry = await run(['apply', '--dry-run=server', '-f', '-'], TYPO_POD(ns));
    for (let i = 0; i < 20 && !dry.stderr.includes('Warning'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      dry = await run(['apply', '--dry-run=server', '-f', '-'], TYPO_POD(ns));
    }
    console.log(`kubectl apply --dry-run=server:\n${dry.stderr}${dry.stdout}`);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain(
      `Warning: spec.volumes[0].secret.secretName: Secret ${ns}/db-pasword does not exist; did you mean db-password?`,
    );
    expect(dry.stdout).toContain('(server dry run)');
    const clean = await run(['apply', '-f', '-'], TYPO_POD(ns, 'clean', 'db-password'));
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain('pod/clean created');
  });

  it('denies in a refwatch.dev/enforce=deny namespace, listing the warnings', async () => {
    const ns = await namespace('adm-deny', true);
    await until(() => admission.caches.namespaceLabels(ns)?.['refwatch.dev/enforce'] === 'deny');
    let denied = await run(['apply', '-f', '-'], TYPO_POD(ns));
    for (let i = 0; i < 20 && denied.code === 0; i++) {
      await run(['delete', 'pod', 'worker', '-n', ns, '--wait=false']);
      await new Promise((r) => setTimeout(r, 500));
      denied = await run(['apply', '-f', '-'], TYPO_POD(ns));
    }
    console.log(`kubectl apply (deny namespace):\n${denied.stderr}${denied.stdout}`);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('admission webhook "references.refwatch.dev" denied the request');
    expect(denied.stderr).toContain(
      `spec.volumes[0].secret.secretName: Secret ${ns}/db-pasword does not exist; did you mean db-password?`,
    );
    const get = await run(['get', 'pod', 'worker', '-n', ns]);
    expect(get.code).not.toBe(0);
    // A correct object passes even there.
    const clean = await run(['apply', '-f', '-'], TYPO_POD(ns, 'clean', 'db-password'));
    expect(clean.code, clean.stderr).toBe(0);
  });

  it('applies normally while refwatch is stopped (failurePolicy Ignore)', async () => {
    const ns = await namespace('adm-stopped', true);
    await server.stop();
    try {
      const r = await run(['apply', '-f', '-'], TYPO_POD(ns));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('pod/worker created');
      expect(r.stderr).not.toContain('did you mean');
    } finally {
      await startWebhook();
    }
  });
});

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
