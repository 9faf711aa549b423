import { describe, expect, inject, it, vi } from 'vitest';
import { getStuck } from '@/server/api';
import { callHandler } from '../unit/server/call';
import { embeddedKubectlBin, useEmbeddedKubectl } from '../setup/embedded-kubectl';

/*
 * kubectl 1.35 (built from the Go module proxy) against the embedded cluster
 * as `npm start` runs it: through the kubeconfig file it writes, apply the
 * example, then fix its typo the way refwatch's fix text says, with kubectl apply.
 */

const kind = inject('refwatchCluster').kind;
const bin = embeddedKubectlBin(kind);

describe.runIf(bin !== undefined)('kubectl against the embedded cluster', () => {
  const cluster = useEmbeddedKubectl(bin ?? '', 'refwatch-kubectl-');
  const { run } = cluster;

  it('applies the demo CRDs and the example without --validate=false', async () => {
    const crds = await run(['apply', '-f', 'deploy/demo/crds.yaml']);
    expect(crds.stderr).not.toMatch(/error/i);
    expect(crds.code).toBe(0);
    // The cert-manager and External Secrets scene's CRDs go first, as the demo's do: kubectl validates each object against a served kind.
    const sceneCrds = await run(['apply', '-f', 'deploy/example/05-crds.yaml']);
    expect(sceneCrds.stderr).toBe('');
    expect(sceneCrds.code).toBe(0);
    const applied = await run(['apply', '-f', 'deploy/example/']);
    // The embedded server's admission check warns of the example's deliberate dangling references, and of nothing else.
    const warnings = applied.stderr.split('\n').filter(Boolean);
    expect(warnings.filter((l) => !l.startsWith('Warning: '))).toEqual([]);
    expect(warnings).toContain(
      'Warning: spec.volumes[0].secret.secretName: Secret refwatch-example/db-pasword does not exist; did you mean db-password?',
    );
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('pod/worker created');
    expect(applied.stdout).toContain('app.demo.refwatch.dev/analytics created');
    // Applying again patches nothing.
    const again = await run(['apply', '-f', 'deploy/example/']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('pod/worker unchanged');

    const pods = await run(['get', 'pods', '-n', 'refwatch-example', '-o', 'name']);
    expect(pods.stdout.split('\n').filter(Boolean).sort()).toEqual(['pod/reporter', 'pod/web', 'pod/worker']);
    // Server-side printing: kubectl's own columns for Pods, and the CRD's additionalPrinterColumns.
    const table = await run(['get', 'pods', '-n', 'refwatch-example']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    expect(table.stdout).toMatch(/\nworker\s+0\/1\s+Pending\s+0\s+\d+s/);
    const databases = await run(['get', 'databases', '-n', 'refwatch-example']);
    expect(databases.stdout.split('\n')[0]).toMatch(/^NAME\s+READY\s+AGE$/);
  });

  it("fixes the worker Pod's typo with kubectl apply, and the stuck Pod resolves", async () => {
    const worker = 'Pod/refwatch-example/worker';
    await vi.waitFor(
      async () => {
        const res = await callHandler(cluster.rt, getStuck, '/api/v1/stuck?olderThan=0s&namespace=refwatch-example');
        const item = (res.body.items as { key: string; reason: string; fix: string }[]).find((s) => s.key === worker);
        expect(item?.reason).toBe('NotFound');
        expect(item?.fix).toContain('db-password');
      },
      { timeout: 15_000, interval: 200 },
    );

    const secret =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-pasword\n  namespace: refwatch-example\nstringData:\n  password: example\n';
    const fixed = await run(['apply', '-f', '-'], secret);
    expect(fixed.stderr).toBe('');
    expect(fixed.stdout).toContain('secret/db-pasword created');
    await vi.waitFor(
      () => expect(cluster.rt.changelog.get('referrer', `rules/Pod|${worker}`)?.state).toBe('Resolved'),
      {
        timeout: 10_000,
        interval: 100,
      },
    );
  });
});
