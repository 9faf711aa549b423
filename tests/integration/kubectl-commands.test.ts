import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlCommands, type CommandSubject } from '@/lib/diagnose/kubectl';
import { readManifests, startTestCluster, type TestCluster } from '@/lib/testing';
import { kubectl, kubectlPath } from '../setup/kubectl';

/*
 * kubectl 1.35 against a cluster of refwatch/testing in the mode REFWATCH_TEST_CLUSTER selects: every
 * command lib/diagnose/kubectl.ts suggests, then the list of commands docs/embedded.md keeps, each with the
 * exit code and output shape expected of kube-apiserver. Run on both tiers, the same expectations compare
 * the embedded cluster with the real one; where docs/embedded.md says they differ, `embedded` says how.
 */

const root = path.resolve(import.meta.dirname, '../..');
const mode = process.env.REFWATCH_TEST_CLUSTER === 'real' ? 'real' : 'embedded';
const found = kubectlPath();
const bin = 'path' in found ? found.path : '';

let cluster: TestCluster;
const run = (args: string[], stdin?: string) => kubectl(bin, cluster.kubeconfigPath, args, stdin);

/** args splits a suggested command line as a shell would: on spaces, `""` an empty word. */
const args = (command: string) =>
  command
    .replace(/^kubectl /, '')
    .split(' ')
    .map((a) => a.replace(/""/g, ''));

describe.runIf(bin !== '')(`kubectl 1.35 against the ${mode} cluster`, () => {
  beforeAll(async () => {
    cluster = await startTestCluster({
      crds: readManifests(path.join(root, 'deploy/demo/crds.yaml')),
      namespaces: ['shop'],
      objects: [
        { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'Database', metadata: { name: 'orders', namespace: 'shop' } },
      ],
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const subjects: CommandSubject[] = [
    { referent: 'Secret/shop/db-pasword', state: 'NotFound' },
    { referent: 'ConfigMap/shop/web-config', state: 'NotFound' },
    { referent: 'ServiceAccount/shop/robot', state: 'NotFound' },
    { referent: 'Namespace//billing', state: 'NotFound' },
    { referent: 'Database.demo.refwatch.dev/shop/missing', state: 'NotFound' },
    { referent: 'Database.demo.refwatch.dev/shop/orders', state: 'NotReady' },
    { referent: 'Widget/shop/w', state: 'KindUnknown' },
    { referent: 'Database.demo.refwatch.dev/shop/orders', state: 'KindUnknown' },
    { referent: 'Secret/shop/db-password', state: 'Forbidden' },
    { referent: 'ClusterRole.rbac.authorization.k8s.io//view', state: 'Forbidden' },
    { referent: 'Secret/shop/db-password', state: 'WatchError' },
  ];
  const suggested = [...new Set(subjects.flatMap((s) => kubectlCommands(s)))];

  it('suggests a command for every state that has one', () => {
    expect(suggested.length).toBeGreaterThanOrEqual(12);
    expect(suggested).toContain('kubectl -n shop create secret generic db-pasword --from-literal=KEY=VALUE');
  });

  it.each(suggested)('runs the suggested `%s`', async (command) => {
    const r = await run(args(command));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toBe('');
  });

  /** The list docs/embedded.md keeps: command, exit code, output shape; `embedded` where that tier differs. */
  const list: {
    args: string[];
    code: number;
    shape: RegExp;
    stdin?: string;
    embedded?: { code: number; shape: RegExp };
  }[] = [
    { args: ['version', '-o', 'json'], code: 0, shape: /"serverVersion"/ },
    { args: ['api-resources', '--api-group=authorization.k8s.io'], code: 0, shape: /selfsubjectaccessreviews/ },
    {
      args: ['-n', 'shop', 'create', 'secret', 'generic', 'pw', '--from-literal=K=V'],
      code: 0,
      shape: /^secret\/pw created$/m,
    },
    {
      args: ['-n', 'shop', 'create', 'configmap', 'cm', '--from-literal=K=V'],
      code: 0,
      shape: /^configmap\/cm created$/m,
    },
    { args: ['create', 'namespace', 'tools'], code: 0, shape: /^namespace\/tools created$/m },
    { args: ['-n', 'shop', 'create', 'serviceaccount', 'bot'], code: 0, shape: /^serviceaccount\/bot created$/m },
    { args: ['-n', 'shop', 'get', 'secret', 'pw', '-o', 'jsonpath={.data.K}'], code: 0, shape: /^Vg==$/ },
    { args: ['-n', 'shop', 'get', 'configmaps', 'cm', '-o', 'name'], code: 0, shape: /^configmap\/cm$/m },
    { args: ['-n', 'shop', 'label', 'configmap', 'cm', 'tier=web'], code: 0, shape: /^configmap\/cm labeled$/m },
    {
      args: ['-n', 'shop', 'patch', 'configmap', 'cm', '--type', 'merge', '-p', '{"data":{"K":"W"}}'],
      code: 0,
      shape: /^configmap\/cm patched$/m,
    },
    {
      args: ['apply', '-f', '-'],
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\ndata:\n  a: b\n',
      code: 0,
      shape: /^configmap\/applied created$/m,
    },
    { args: ['auth', 'can-i', 'create', 'pods', '-n', 'shop'], code: 0, shape: /^yes$/m },
    { args: ['auth', 'can-i', '--list', '-n', 'shop'], code: 0, shape: /^Resources\s+Non-Resource URLs/m },
    { args: ['-n', 'shop', 'get', 'databases'], code: 0, shape: /^NAME\s+READY\s+AGE\n/ },
    { args: ['explain', 'databases.spec'], code: 0, shape: /^GROUP:\s+demo\.refwatch\.dev/m },
    {
      args: ['explain', 'pod.spec.volumes'],
      code: 0,
      shape: /^FIELD:\s+volumes/m,
    },
    {
      args: ['apply', '--server-side', '-f', '-'],
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: shop\n',
      code: 0,
      shape: /^configmap\/ssa serverside-applied$/m,
    },
    {
      // kubectl moves the client-side applier's fields to its server-side manager first: no conflict.
      args: ['apply', '--server-side', '-f', '-'],
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\ndata:\n  a: c\n',
      code: 0,
      shape: /^configmap\/applied serverside-applied$/m,
    },
    {
      args: ['-n', 'shop', 'get', 'configmap', 'applied', '-o', 'jsonpath={.metadata.managedFields[*].manager}'],
      code: 0,
      shape: /^(kubectl-last-applied kubectl|kubectl kubectl-last-applied)$/,
    },
    {
      // cm's data.K was last set by `kubectl patch` above: another value conflicts with that manager.
      args: ['apply', '--server-side', '-f', '-'],
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: shop\ndata:\n  K: X\n',
      code: 1,
      shape: /Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: \.data\.K/,
    },
    {
      args: ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: shop\ndata:\n  K: X\n',
      code: 0,
      shape: /^configmap\/cm serverside-applied$/m,
    },
    { args: ['-n', 'shop', 'delete', 'configmap', 'cm'], code: 0, shape: /^configmap "cm" deleted/m },
  ];

  it.each(list.map((c) => [c.args.join(' '), c] as const))('`kubectl %s`', async (_name, c) => {
    const want = mode === 'embedded' && c.embedded ? c.embedded : c;
    const r = await run(c.args, c.stdin);
    expect({ code: r.code, out: r.stdout + r.stderr }).toEqual({
      code: want.code,
      out: expect.stringMatching(want.shape),
    });
  });
});
