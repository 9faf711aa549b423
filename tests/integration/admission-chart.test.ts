import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { rulesFor } from '@/scripts/admission-rules';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * The webhook's install on the real kube-apiserver: the chart's
 * ValidatingWebhookConfiguration (failurePolicy Ignore, sideEffects None,
 * timeoutSeconds 2, kube-system and the release's namespace skipped, a
 * matchConditions CEL expression) is accepted by a server-side dry run, the
 * generated certificate survives helm upgrade, and the kustomize overlay
 * renders the same webhook.
 */

const kind = inject('refwatchCluster').kind;
const root = path.resolve(import.meta.dirname, '../..');
const chart = path.join(root, 'deploy/helm/refwatch');

function tool(script: string): string {
  const r = spawnSync('bash', [path.join(root, 'tests/setup', script)], { encoding: 'utf8' });
  const bin = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !bin) throw new Error(`tests/setup/${script} failed (exit ${r.status ?? r.signal})`);
  return bin;
}

function ok(bin: string, args: string[], input?: string): string {
  const r = spawnSync(bin, args, { encoding: 'utf8', input, maxBuffer: 32 << 20 });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return r.stdout;
}

type Obj = { kind: string; metadata: { name: string }; [k: string]: unknown };
const docs = (yaml: string) =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);

interface Webhook {
  failurePolicy: string;
  sideEffects: string;
  timeoutSeconds: number;
  clientConfig: { service: { name: string; namespace: string; path: string; port: number }; caBundle?: string };
  namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
  matchConditions: { name: string; expression: string }[];
  rules: unknown[];
}

describe.skipIf(kind !== 'real')('the admission webhook in the chart and the kustomize overlay', () => {
  let cluster: TestCluster;
  let helm: string;
  let kubectl: string;
  let work: string;
  let kubeconfig: string;

  beforeAll(async () => {
    cluster = await getTestCluster();
    helm = tool('build-helm.sh');
    kubectl = tool('build-kubectl.sh');
    work = mkdtempSync(path.join(os.tmpdir(), 'refwatch-admission-chart-'));
    kubeconfig = path.join(work, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, stringify(cluster.kubeconfig), { mode: 0o600 });
  }, 600_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('renders nothing of the webhook by default, and a webhook that cannot get in the way when enabled', async () => {
    expect(ok(helm, ['template', 'rw', chart, '--namespace', 'rw'])).not.toContain('ValidatingWebhookConfiguration');
    const ns = await cluster.newNamespace('adm-chart');
    const rendered = ok(helm, ['template', 'rw', chart, '--namespace', ns, '--set', 'admission.enabled=true']);
    const out = docs(rendered);
    const vwc = out.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: Webhook[] };
    const w = vwc.webhooks[0]!;
    expect([w.failurePolicy, w.sideEffects, w.timeoutSeconds]).toEqual(['Ignore', 'None', 2]);
    expect(w.clientConfig.service).toEqual({
      name: 'rw-refwatch-admission',
      namespace: ns,
      path: '/admission/v1/validate',
      port: 443,
    });
    expect(w.namespaceSelector.matchExpressions[0]!.values).toEqual(['kube-system', ns]);
    const secret = out.find((o) => o.metadata.name === 'rw-refwatch-admission-tls') as unknown as {
      data: Record<string, string>;
    };
    expect(w.clientConfig.caBundle).toBe(secret.data['ca.crt']);
    // kube-apiserver 1.35 validates every object, the CEL of matchConditions included, without storing it.
    const dry = spawnSync(kubectl, ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-n', ns, '-f', '-'], {
      input: rendered,
      encoding: 'utf8',
    });
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('validatingwebhookconfiguration.admissionregistration.k8s.io/rw-refwatch-');
  });

  it('renders the webhook rules of the enabled packs, which kube-apiserver accepts', async () => {
    const ns = await cluster.newNamespace('adm-rules');
    const render = (packs: string) =>
      ok(helm, [
        'template',
        'rw',
        chart,
        '--namespace',
        ns,
        '--set',
        'admission.enabled=true',
        '--set',
        `rulePacks={${packs}}`,
      ]);
    const webhookOf = (yaml: string) =>
      (docs(yaml).find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: Webhook[] })
        .webhooks[0]!;
    expect(webhookOf(render('core')).rules).toEqual(rulesFor(['core']));
    const all = render('core,gateway,cert-manager,external-secrets,flux,argocd,keda,prometheus');
    expect(webhookOf(all).rules).toEqual(
      rulesFor(['core', 'gateway', 'cert-manager', 'external-secrets', 'flux', 'argocd', 'keda', 'prometheus']),
    );
    const dry = spawnSync(kubectl, ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-n', ns, '-f', '-'], {
      input: all,
      encoding: 'utf8',
    });
    expect(dry.status, dry.stderr).toBe(0);
  });

  it('keeps the generated certificate across helm upgrade', async () => {
    const ns = await cluster.newNamespace('adm-upgrade');
    const release = `adm${process.pid}`;
    const args = ['--kubeconfig', kubeconfig, '--namespace', ns];
    const caOf = () =>
      JSON.parse(ok(kubectl, [...args, 'get', 'secret', `${release}-refwatch-admission-tls`, '-o', 'json'])) as {
        data: Record<string, string>;
      };
    // The installed webhook has no Pod behind it: with failurePolicy Ignore, other tests' requests pass meanwhile.
    ok(helm, ['install', release, chart, ...args, '--set', 'admission.enabled=true']);
    try {
      const before = caOf().data;
      ok(helm, ['upgrade', release, chart, ...args, '--set', 'admission.enabled=true', '--set', 'grace=1m']);
      const after = caOf().data;
      expect(after['ca.crt']).toBe(before['ca.crt']);
      expect(after['tls.crt']).toBe(before['tls.crt']);
      const vwc = JSON.parse(
        ok(kubectl, [...args, 'get', 'validatingwebhookconfiguration', `${release}-refwatch-${ns}`, '-o', 'json']),
      ) as { webhooks: Webhook[] };
      expect(vwc.webhooks[0]!.clientConfig.caBundle).toBe(before['ca.crt']);
    } finally {
      ok(helm, ['uninstall', release, ...args, '--wait=false']);
    }
  }, 120_000);

  it('the kustomize overlay renders the same webhook, with cert-manager injecting its CA', () => {
    const out = docs(ok(kubectl, ['kustomize', path.join(root, 'deploy/kubernetes/overlays/admission')]));
    const vwc = out.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as {
      metadata: { annotations: Record<string, string> };
      webhooks: Webhook[];
    };
    expect(vwc.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('refwatch/refwatch-admission');
    const w = vwc.webhooks[0]!;
    expect([w.failurePolicy, w.sideEffects, w.timeoutSeconds]).toEqual(['Ignore', 'None', 2]);
    expect(w.namespaceSelector.matchExpressions[0]!.values).toEqual(['kube-system', 'refwatch']);
    const dep = out.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    const env = dep.spec.template.spec.containers[0]!.env;
    expect(env.find((e) => e.name === 'REFWATCH_ADMISSION_LISTEN')?.value).toBe('0.0.0.0:8443');
    expect(out.map((o) => o.kind)).toEqual(expect.arrayContaining(['Certificate', 'Issuer', 'Service']));
  });
});
