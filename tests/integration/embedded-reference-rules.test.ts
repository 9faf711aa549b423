import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stuck } from '@/lib/diagnose';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { kubectl, kubectlPath } from '../setup/kubectl';

/*
 * The embedded cluster of `npm start` serves the ReferenceRules CRD from boot
 * (deploy/kubernetes/base/referencerules-crd.yaml), so a platform team's
 * rules go in with kubectl apply as on a cluster with the chart installed,
 * and the admission check warns by them.
 */

const kind = inject('refwatchCluster').kind;
const found = kind === 'embedded' ? kubectlPath() : undefined;
const NS = 'rr-embedded';
const POLL = { timeout: 20_000, interval: 50 };

const rulesYaml = `apiVersion: refwatch.dev/v1alpha1
kind: ReferenceRules
metadata: {name: settings-credentials, namespace: ${NS}}
spec:
  rules:
    - referrer: {kind: ConfigMap}
      references:
        - path: data.credentials
          referent: {kind: Secret}
`;

describe.runIf(found !== undefined && 'path' in found)('ReferenceRules on the embedded cluster', () => {
  const bin = found && 'path' in found ? found.path : '';
  let rt: Runtime;
  let dir: string;
  let kubeconfig: string;
  const run = (args: string[], stdin?: string) => kubectl(bin, kubeconfig, args, stdin);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-embedded-rrules-'));
    kubeconfig = path.join(dir, 'state', 'refwatch', 'embedded.kubeconfig');
    rt = await startRuntime(parseConfig({ REFWATCH_EXAMPLE: 'none', REFWATCH_DEMO: 'off', REFWATCH_GRACE: '1s' }), {
      kubeconfigFile: kubeconfig,
    });
    const r = await run(['create', 'namespace', NS]);
    expect(r.code, r.stderr).toBe(0);
  });

  afterAll(async () => {
    await rt?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the ReferenceRules CRD from boot: kubectl apply of one makes its relation take effect, admission warnings included', async () => {
    const crd = await run(['get', 'crd', 'referencerules.refwatch.dev', '-o', 'jsonpath={.spec.versions[0].name}']);
    expect(crd.code, crd.stderr).toBe(0);
    expect(crd.stdout).toBe('v1alpha1');

    const applied = await run(['apply', '-f', '-'], rulesYaml);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('referencerules.refwatch.dev/settings-credentials created');
    await expect
      .poll(() => rt.cluster().referenceRules?.map((l) => [l.ok, l.message]), POLL)
      .toEqual([[true, expect.stringMatching(/^ReferenceRules rr-embedded\/settings-credentials: applied/)]]);

    const cm = await run(
      ['apply', '-f', '-'],
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings, namespace: ${NS}}\ndata: {credentials: db-creds}\n`,
    );
    expect(cm.code, cm.stderr).toBe(0);
    // The admission check reads the rules in force, ReferenceRules included.
    expect(cm.stderr).toContain(`Warning: data.credentials: Secret ${NS}/db-creds does not exist yet`);
    const key = `ConfigMap/${NS}/app-settings`;
    await expect
      .poll(
        () =>
          stuck(rt.manager, { olderThan: 0 })
            .filter((e) => e.key === key)
            .map((e) => [e.reason, e.referent]),
        POLL,
      )
      .toEqual([['NotFound', `Secret/${NS}/db-creds`]]);

    const secret = await run(['create', 'secret', 'generic', 'db-creds', '-n', NS, '--from-literal=password=x']);
    expect(secret.code, secret.stderr).toBe(0);
    await expect.poll(() => stuck(rt.manager, { olderThan: 0 }).filter((e) => e.key === key), POLL).toEqual([]);
  }, 60_000);
});
