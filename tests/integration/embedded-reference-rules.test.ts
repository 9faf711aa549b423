import { beforeAll, describe, expect, inject, it } from 'vitest';
import { stuck } from '@/lib/diagnose';
import { embeddedKubectlBin, useEmbeddedKubectl } from '../setup/embedded-kubectl';

/*
 * The embedded cluster of `npm start` serves the ReferenceRules CRD from boot
 * (deploy/kubernetes/base/referencerules-crd.yaml), so a platform team's
 * rules go in with kubectl apply as on a cluster with the chart installed,
 * and the admission check warns by them.
 */

const kind = inject('refwatchCluster').kind;
const bin = embeddedKubectlBin(kind);
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

describe.runIf(bin !== undefined)('ReferenceRules on the embedded cluster', () => {
  const cluster = useEmbeddedKubectl(bin ?? '', 'refwatch-embedded-rrules-');
  const { run } = cluster;

  beforeAll(async () => {
    const r = await run(['create', 'namespace', NS]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('serves the ReferenceRules CRD from boot: kubectl apply of one makes its relation take effect, admission warnings included', async () => {
    const crd = await run(['get', 'crd', 'referencerules.refwatch.dev', '-o', 'jsonpath={.spec.versions[0].name}']);
    expect(crd.code, crd.stderr).toBe(0);
    expect(crd.stdout).toBe('v1alpha1');

    const applied = await run(['apply', '-f', '-'], rulesYaml);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('referencerules.refwatch.dev/settings-credentials created');
    await expect
      .poll(() => cluster.rt.cluster().referenceRules?.map((l) => [l.ok, l.message]), POLL)
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
          stuck(cluster.rt.manager, { olderThan: 0 })
            .filter((e) => e.key === key)
            .map((e) => [e.reason, e.referent]),
        POLL,
      )
      .toEqual([['NotFound', `Secret/${NS}/db-creds`]]);

    const secret = await run(['create', 'secret', 'generic', 'db-creds', '-n', NS, '--from-literal=password=x']);
    expect(secret.code, secret.stderr).toBe(0);
    await expect.poll(() => stuck(cluster.rt.manager, { olderThan: 0 }).filter((e) => e.key === key), POLL).toEqual([]);
  }, 60_000);
});
