import fs from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { embeddedKubectlBin, useEmbeddedKubectl } from '../setup/embedded-kubectl';

/*
 * The embedded API server runs the admission check on create, update and
 * patch and sends its warnings as Warning headers: kubectl 1.35 applying the
 * README's typo'd Pod, and applying it again changed, prints them, as it
 * would a webhook's on a real cluster.
 */

const kind = inject('refwatchCluster').kind;
const bin = embeddedKubectlBin(kind);

describe.runIf(bin !== undefined)('admission warnings from the embedded cluster', () => {
  const cluster = useEmbeddedKubectl(bin ?? '', 'refwatch-admission-embedded-');
  const { run } = cluster;

  it("prints the warning for the README's typo'd Pod, and creates it", async () => {
    for (const f of ['00-namespaces.yaml', '10-config.yaml']) {
      const r = await run(['apply', '-f', `deploy/example/${f}`]);
      expect(r.code, r.stderr).toBe(0);
    }
    const admission = cluster.rt.admission!.admission;
    const deadline = Date.now() + 30_000;
    while (admission.caches.lookup('Secret/refwatch-example/db-password').state !== 'found') {
      if (Date.now() > deadline) throw new Error('the Secret cache never held db-password');
      await new Promise((r) => setTimeout(r, 20));
    }
    const pods = await run(['apply', '-f', 'deploy/example/20-pods.yaml']);
    console.log(`kubectl apply -f deploy/example/20-pods.yaml (embedded):\n${pods.stderr}${pods.stdout}`);
    expect(pods.code).toBe(0);
    expect(pods.stderr).toContain(
      'Warning: spec.volumes[0].secret.secretName: Secret refwatch-example/db-pasword does not exist; did you mean db-password?',
    );
    expect(pods.stdout).toContain('pod/worker created');
    // web's references all resolve: the only other warning is reporter's ConfigMap, which lives in another namespace.
    expect(pods.stderr.split('\n').filter((l) => l.startsWith('Warning:'))).toHaveLength(2);
    expect(pods.stderr).toContain('configMap.name: ConfigMap refwatch-example/feature-flags does not exist yet');
  });

  it('records on the dashboard that a warning resolved itself when its referent appears within the grace', async () => {
    const r = await run(
      ['apply', '-f', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: feature-flags, namespace: refwatch-example}\n',
    );
    expect(r.code, r.stderr).toBe(0);
    const deadline = Date.now() + 30_000;
    const resolved = () =>
      cluster.rt.changelog
        .snapshot({ entities: ['event'] })
        .entities.event.filter((e) => e.type === 'AdmissionWarningResolved');
    while (resolved().length === 0) {
      if (Date.now() > deadline) throw new Error('no AdmissionWarningResolved event');
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(resolved()[0]!.message).toMatch(
      /^admission warning resolved itself: ConfigMap refwatch-example\/feature-flags appeared [\d.]+s after Pod\/refwatch-example\/reporter named it in spec\.volumes\[0\]\.configMap\.name$/,
    );
  });

  it("warns again when kubectl apply patches the typo'd Pod it created", async () => {
    const worker = fs
      .readFileSync('deploy/example/20-pods.yaml', 'utf8')
      .split(/^---$/m)
      .find((doc) => /^\s*name: worker$/m.test(doc))!
      .replace(/^( {2}namespace: refwatch-example)$/m, '$1\n  labels: {tier: batch}');
    const patches = () => cluster.rt.connection.embedded!.requestCount()['patch pods'] ?? 0;
    const before = patches();
    const r = await run(['apply', '-f', '-'], worker);
    console.log(`kubectl apply -f - (worker, relabelled; embedded):\n${r.stderr}${r.stdout}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pod/worker configured');
    // An apply of an object that exists is a strategic merge PATCH, checked as kube-apiserver checks an UPDATE.
    expect(patches()).toBe(before + 1);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('Warning:'))).toEqual([
      'Warning: spec.volumes[0].secret.secretName: Secret refwatch-example/db-pasword does not exist; did you mean db-password?',
    ]);
  });

  it('warns nothing once the runtime stopped checking', async () => {
    cluster.rt.connection.embedded!.setAdmission(undefined);
    const r = await run(
      ['apply', '-f', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: refwatch-example}\n',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
