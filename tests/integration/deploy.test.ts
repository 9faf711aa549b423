import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { WatchEntity } from '@/lib/changelog';
import { gatewayPack, type PackName } from '@/lib/rules';
import { grantsFor, serverRules, type PolicyRule } from '@/scripts/rbac';
import { getTestCluster, type TestCluster } from '../setup/cluster';
import { kubeRequest, type KubeEndpoint } from '../setup/kube-http';
import { copyStandalone, startStandalone, waitReady, type StandaloneCopy } from '../setup/standalone';

/*
 * The chart and the kustomize base, for real: helm lint and template, then
 * both applied to the real kube-apiserver. No kubelet runs there, so no Pod
 * starts; instead the test runs the standalone server itself in in-cluster
 * mode, with a token of the ServiceAccount each one created, and checks that
 * the ClusterRole it came with lets every watch of the enabled packs prime.
 */

const kind = inject('refwatchCluster').kind;
const root = path.resolve(import.meta.dirname, '../..');
const chart = path.join(root, 'deploy/helm/refwatch');
const fixtures = path.join(root, 'tests/fixtures/helm');
const GATEWAY = 'gateway.networking.k8s.io';

if (kind !== 'real')
  console.log(
    'deploy.test.ts: runs on the real kube-apiserver tier only (REFWATCH_TEST_CLUSTER=real); nothing to apply on the embedded server',
  );

/** tool builds (or finds cached) a Go tool with its tests/setup script and returns the binary's path. */
function tool(script: string): string {
  const r = spawnSync('bash', [path.join(root, 'tests/setup', script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bin = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !bin)
    throw new Error(`tests/setup/${script} failed (exit ${r.status ?? r.signal}): the deploy tests need it`);
  return bin;
}

function run(bin: string, args: string[], input?: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(bin, args, { encoding: 'utf8', input, maxBuffer: 32 << 20 });
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function ok(bin: string, args: string[], input?: string): string {
  const r = run(bin, args, input);
  if (r.status !== 0)
    throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.status}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

interface PodSpec {
  containers: { env: { name: string; value?: string; valueFrom?: unknown }[] }[];
  volumes: { name: string }[];
}

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: PolicyRule[] | null;
  [k: string]: unknown;
};

function docs(yaml: string): Obj[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

/** grants flattens PolicyRules to `group/resource verbs` strings, whatever their grouping. */
function grants(rules: PolicyRule[] | null | undefined): string[] {
  return (rules ?? [])
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res} ${r.verbs.join(',')}`)))
    .sort();
}

/** The Gateway API kinds, as bare CRDs: enough for refwatch to discover and watch them. */
function gatewayCrds(): Obj[] {
  const kinds: [string, string, 'Namespaced' | 'Cluster'][] = [
    ['GatewayClass', 'gatewayclasses', 'Cluster'],
    ['Gateway', 'gateways', 'Namespaced'],
    ['HTTPRoute', 'httproutes', 'Namespaced'],
    ['GRPCRoute', 'grpcroutes', 'Namespaced'],
    ['TCPRoute', 'tcproutes', 'Namespaced'],
    ['TLSRoute', 'tlsroutes', 'Namespaced'],
    ['UDPRoute', 'udproutes', 'Namespaced'],
    ['ReferenceGrant', 'referencegrants', 'Namespaced'],
  ];
  // ReferenceGrant is served as v1beta1, as the Gateway API's own CRD serves it (and as other test files install it
  // on the shared real cluster, whose stored version must stay listed).
  const versionOf = (kind: string) => (kind === 'ReferenceGrant' ? 'v1beta1' : 'v1');
  return kinds.map(([k, plural, scope]) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // *.k8s.io groups are protected: the Gateway API's own CRDs carry this approval.
    metadata: {
      name: `${plural}.${GATEWAY}`,
      annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/gateway-api/pull/1538' },
    },
    spec: {
      group: GATEWAY,
      scope,
      names: { kind: k, plural, singular: k.toLowerCase(), listKind: `${k}List` },
      versions: [
        {
          name: versionOf(k),
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  }));
}

/** Referrers whose references name every referent kind the core and gateway packs watch. */
function referrers(ns: string): Obj[] {
  const meta = (name: string) => ({ name, namespace: ns });
  return [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('web'),
      spec: {
        serviceAccountName: 'web',
        // Bound to a node by hand: kube-apiserver does not check that it exists.
        nodeName: 'node-a',
        containers: [
          {
            name: 'web',
            image: 'example.invalid/web:1',
            envFrom: [{ configMapRef: { name: 'web-config' } }, { secretRef: { name: 'web-secret' } }],
          },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'web-data' } }],
      },
    },
    {
      // A Pod naming a missing PriorityClass or RuntimeClass is refused by admission; a template is not.
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('web'),
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            priorityClassName: 'high',
            runtimeClassName: 'gvisor',
            containers: [{ name: 'web', image: 'example.invalid/web:1' }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta('web-data'),
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'fast',
        volumeName: 'pv-web',
        resources: { requests: { storage: '1Gi' } },
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta('web'),
      spec: {
        ingressClassName: 'public',
        tls: [{ secretName: 'web-tls' }],
        defaultBackend: { service: { name: 'web', port: { number: 80 } } },
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta('web'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'web' },
      subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: ns }],
    },
    {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: meta('web'),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 2,
      },
    },
    {
      apiVersion: `${GATEWAY}/v1`,
      kind: 'Gateway',
      metadata: meta('edge'),
      spec: {
        gatewayClassName: 'public',
        listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'edge-tls' }] } }],
      },
    },
    {
      apiVersion: `${GATEWAY}/v1`,
      kind: 'HTTPRoute',
      metadata: meta('web'),
      spec: { parentRefs: [{ name: 'edge' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    },
  ];
}

describe.skipIf(kind !== 'real')('chart and manifests on the real kube-apiserver', () => {
  let cluster: TestCluster;
  let endpoint: KubeEndpoint;
  let helm: string;
  let kubectl: string;
  let work: string;
  let kubeconfig: string;
  let copy: StandaloneCopy;
  const cleanups: (() => unknown)[] = [];

  beforeAll(async () => {
    cluster = await getTestCluster();
    const provided = inject('refwatchCluster');
    if (provided.kind !== 'real') throw new Error('deploy.test.ts needs the real cluster');
    endpoint = { url: provided.url, token: provided.token, ca: provided.ca };
    helm = tool('build-helm.sh');
    kubectl = tool('build-kubectl.sh');
    work = mkdtempSync(path.join(os.tmpdir(), 'refwatch-deploy-'));
    chmodSync(work, 0o755);
    kubeconfig = path.join(work, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, stringify(cluster.kubeconfig), { mode: 0o600 });
    copy = copyStandalone();
    const crds = gatewayCrds();
    apply(crds);
    cleanups.push(() =>
      run(
        kubectl,
        ['--kubeconfig', kubeconfig, 'delete', '--ignore-not-found', '-f', '-'],
        crds.map((o) => stringify(o)).join('---\n'),
      ),
    );
    k('wait', '--for=condition=Established', '--timeout=60s', ...crds.map((c) => `crd/${c.metadata.name}`));
  }, 900_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    copy?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  const k = (...args: string[]) => ok(kubectl, ['--kubeconfig', kubeconfig, ...args]);
  const apply = (objs: Obj[] | string) =>
    ok(
      kubectl,
      ['--kubeconfig', kubeconfig, 'apply', '-f', '-'],
      typeof objs === 'string' ? objs : objs.map((o) => stringify(o)).join('---\n'),
    );

  it('helm lint accepts the chart with its defaults and with every option on', () => {
    ok(helm, ['lint', chart, '--strict']);
    ok(helm, ['lint', chart, '--strict', '-f', path.join(fixtures, 'all-options.yaml')]);
  });

  it.each([
    ['defaults', [] as string[], ['core'] as PackName[]],
    ['every option', ['-f', path.join(fixtures, 'all-options.yaml')], ['core', 'gateway', 'crossplane'] as PackName[]],
    ['no packs', ['-f', path.join(fixtures, 'no-packs.yaml')], [] as PackName[]],
    ['gateway only', ['--set', 'rulePacks={gateway}'], ['gateway'] as PackName[]],
  ])("helm template (%s): the ClusterRole is the packs' read-only rules", (_name, args, packs) => {
    const out = docs(ok(helm, ['template', 'rw', chart, '--namespace', 'rw', ...args]));
    const role = out.find((o) => o.kind === 'ClusterRole')!;
    const extra =
      _name === 'every option' ? ['example.com/apps get,list,watch', 'example.com/databases get,list,watch'] : [];
    expect(grants(role.rules)).toEqual([...grants(serverRules(packs)), ...extra].sort());
    const deploy = out.find((o) => o.kind === 'Deployment') as unknown as {
      spec: {
        template: {
          spec: { containers: { env: { name: string; value?: string }[]; securityContext: Record<string, unknown> }[] };
        };
      };
    };
    const c = deploy.spec.template.spec.containers[0]!;
    expect(c.env.find((e) => e.name === 'REFWATCH_RULE_PACKS')?.value).toBe(packs.length ? packs.join(',') : 'none');
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(out.some((o) => o.kind === 'Ingress')).toBe(_name === 'every option');
  });

  it('helm template with every option: rules files, existing token Secret, hosts, Ingress and NetworkPolicy; the API server accepts it all', async () => {
    const ns = await cluster.newNamespace('refwatch-options');
    const rendered = ok(helm, [
      'template',
      'rw',
      chart,
      '--namespace',
      ns,
      '-f',
      path.join(fixtures, 'all-options.yaml'),
    ]);
    const out = docs(rendered);
    expect(out.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
      'Ingress',
      'NetworkPolicy',
      'Service',
      'ServiceAccount',
    ]);
    const pod = (
      out.find((o) => o.kind === 'Deployment') as unknown as { spec: { replicas: number; template: { spec: PodSpec } } }
    ).spec;
    expect(pod.replicas).toBe(2);
    const env = Object.fromEntries(pod.template.spec.containers[0]!.env.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.REFWATCH_RULES).toBe('/etc/refwatch/rules/apps.yaml');
    expect(env.REFWATCH_TOKEN).toEqual({ secretKeyRef: { name: 'team-refwatch-token', key: 'bearer' } });
    expect(env.REFWATCH_ALLOWED_HOSTS).toBe(
      `rw-refwatch,rw-refwatch.${ns},rw-refwatch.${ns}.svc,rw-refwatch.${ns}.svc.cluster.local,refwatch.example.com,*.internal.example`,
    );
    expect(env.REFWATCH_INSECURE_ALLOW_ANONYMOUS).toBeUndefined();
    expect(env.REFWATCH_GRACE).toBe('2m');
    const rulesFile = (out.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> }).data[
      'apps.yaml'
    ];
    expect(rulesFile).toContain('referent: {group: example.com, kind: Database}');
    expect(pod.template.spec.volumes.find((v) => v.name === 'rules')).toEqual({
      name: 'rules',
      configMap: { name: 'rw-refwatch-rules' },
    });
    // Server-side dry run: every object is valid for kube-apiserver 1.35, admission included.
    const dry = run(kubectl, ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-n', ns, '-f', '-'], rendered);
    expect(dry.status, dry.stderr).toBe(0);
  });

  it('helm template with insecureAllowAnonymous sets no token, since refwatch refuses a token with that flag', () => {
    const out = docs(ok(helm, ['template', 'rw', chart, '--namespace', 'rw', '--set', 'insecureAllowAnonymous=true']));
    const pod = (out.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec;
    const env = Object.fromEntries(pod.template.spec.containers[0]!.env.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.REFWATCH_INSECURE_ALLOW_ANONYMOUS).toBe('true');
    expect(env.REFWATCH_TOKEN).toBeUndefined();
  });

  it('the network-policy overlay adds a NetworkPolicy to the base, valid for the API server', async () => {
    const rendered = ok(kubectl, ['kustomize', path.join(root, 'deploy/kubernetes/overlays/network-policy')]);
    const objs = docs(rendered);
    expect(objs.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Deployment',
      'Namespace',
      'NetworkPolicy',
      'Service',
      'ServiceAccount',
    ]);
    const policy = objs.find((o) => o.kind === 'NetworkPolicy') as unknown as Obj & {
      spec: { podSelector: { matchLabels: Record<string, string> } };
    };
    expect(policy.metadata.namespace).toBe('refwatch');
    expect(policy.spec.podSelector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'refwatch',
      'app.kubernetes.io/component': 'server',
    });
    // A server-side dry run of the policy, in a namespace that exists (a dry run creates no namespace).
    const ns = await cluster.newNamespace('refwatch-netpol');
    const dry = run(
      kubectl,
      ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-f', '-'],
      stringify({ ...policy, metadata: { ...policy.metadata, namespace: ns } }),
    );
    expect(dry.status, dry.stderr).toBe(0);
  });

  it.each([
    ['bad-pack.yaml', '/rulePacks/1'],
    ['write-verb.yaml', '/rbac/extraRules/0/verbs/1'],
  ])('helm template refuses %s, naming the field %s', (file, field) => {
    const r = run(helm, ['template', 'rw', chart, '-f', path.join(fixtures, file)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`at '${field}'`);
  });

  /** startInCluster runs the standalone server as the ServiceAccount, with its token and the cluster's CA. */
  async function startInCluster(namespace: string, serviceAccount: string, packs: string) {
    const res = await kubeRequest(
      endpoint,
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
      {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
      },
    );
    expect(res.status, res.body).toBe(201);
    const token = (JSON.parse(res.body) as { status: { token: string } }).status.token;
    // What a kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount, under a root of our own.
    const fsRoot = mkdtempSync(path.join(work, 'pod-'));
    const sa = path.join(fsRoot, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true, mode: 0o755 });
    spawnSync('chmod', ['-R', 'a+rX', fsRoot]);
    writeFileSync(path.join(sa, 'token'), token, { mode: 0o644 });
    writeFileSync(path.join(sa, 'ca.crt'), endpoint.ca!, { mode: 0o644 });
    writeFileSync(path.join(sa, 'namespace'), namespace, { mode: 0o644 });
    const url = new URL(cluster.url);
    return startStandalone(copy.dir, {
      REFWATCH_CLUSTER: 'in-cluster',
      REFWATCH_IN_CLUSTER_ROOT: fsRoot,
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      REFWATCH_RULE_PACKS: packs,
    });
  }

  /** primedWatches waits until a watch of every expected kind holds its snapshot and none is failing, and returns all watches. */
  async function primedWatches(url: string, kinds: string[]): Promise<WatchEntity[]> {
    let watches: WatchEntity[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      watches = ((await (await fetch(`${url}/api/v1/snapshot`)).json()) as { watches: WatchEntity[] }).watches;
      const primed = new Set(watches.filter((w) => w.primed).map((w) => w.kind));
      // A throttled start (429) ends once its watch has stayed up for the reflector's healthy period.
      if (kinds.every((kd) => primed.has(kd)) && !watches.some((w) => w.lastError)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    return watches;
  }

  async function expectEveryWatchPrimed(namespace: string, serviceAccount: string, packs: PackName[]) {
    const server = await startInCluster(namespace, serviceAccount, packs.join(','));
    try {
      // The chart and the kustomize base install the ReferenceRules CRD, so refwatch watches its objects too.
      const expected = [
        ...grantsFor(packs).map((g) => (g.apiGroup === '' ? g.kind : `${g.kind}.${g.apiGroup}`)),
        'ReferenceRules.refwatch.dev',
      ].sort();
      const watches = await primedWatches(server.url, expected);
      const summary = watches.map(
        (w) =>
          `${w.kind}: ${w.primed ? 'primed' : w.phase}${w.lastError ? ` (${w.lastError.reason}: ${w.lastError.message})` : ''}`,
      );
      expect(
        watches.filter((w) => w.lastError),
        summary.join('\n'),
      ).toEqual([]);
      expect([...new Set(watches.filter((w) => w.primed).map((w) => w.kind))].sort(), summary.join('\n')).toEqual(
        expected,
      );
      const ready = await waitReady(server.url);
      expect(ready.status, ready.body).toBe(200);
      const snap = (await (await fetch(`${server.url}/api/v1/snapshot`)).json()) as {
        cluster: { mode: string; reachable: boolean };
      };
      expect(snap.cluster).toMatchObject({ mode: 'in-cluster', reachable: true });
    } finally {
      await server.stop();
    }
  }

  it('helm install applies the chart; its ServiceAccount primes every watch of core and gateway, and writes nothing', async () => {
    const ns = await cluster.newNamespace('refwatch-helm');
    ok(helm, [
      'install',
      'rw',
      chart,
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      ns,
      '--set',
      'rulePacks={core,gateway}',
    ]);
    cleanups.push(() => run(helm, ['uninstall', 'rw', '--kubeconfig', kubeconfig, '--namespace', ns]));
    const installed = k('get', 'deployment,service,serviceaccount,secret', '-n', ns, '-o', 'name');
    expect(installed).toContain('deployment.apps/rw-refwatch');
    expect(installed).toContain('serviceaccount/rw-refwatch');
    expect(installed).toContain('secret/rw-refwatch-token');
    expect(k('get', 'clusterrole/rw-refwatch-read', '-o', 'name').trim()).toBe(
      'clusterrole.rbac.authorization.k8s.io/rw-refwatch-read',
    );

    apply(referrers(ns));
    await expectEveryWatchPrimed(ns, 'rw-refwatch', ['core', 'gateway']);

    // Read-only for real: the ServiceAccount may list but not change anything.
    const as = `--as=system:serviceaccount:${ns}:rw-refwatch`;
    expect(k('auth', 'can-i', 'list', 'secrets', '--all-namespaces', as).trim()).toBe('yes');
    // The details panel lists an object's Events.
    expect(k('auth', 'can-i', 'list', 'events', '--all-namespaces', as).trim()).toBe('yes');
    for (const verb of ['create', 'update', 'patch', 'delete']) {
      expect(
        run(kubectl, ['--kubeconfig', kubeconfig, 'auth', 'can-i', verb, 'configmaps', '-n', ns, as]).stdout.trim(),
        verb,
      ).toBe('no');
    }
  }, 180_000);

  it('kubectl apply -k deploy/kubernetes creates the base; its ServiceAccount primes every watch of the core pack', async () => {
    const rendered = ok(kubectl, ['kustomize', path.join(root, 'deploy/kubernetes')]);
    const objs = docs(rendered);
    expect(objs.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Deployment',
      'Namespace',
      'Service',
      'ServiceAccount',
    ]);
    const out = run(kubectl, ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], rendered);
    expect(out.status, out.stderr).toBe(0);
    // The Namespace enforces the restricted Pod Security Standard; the Pod template meets it.
    expect(out.stderr).not.toMatch(/violate PodSecurity/);
    cleanups.push(() =>
      run(kubectl, ['--kubeconfig', kubeconfig, 'delete', '--ignore-not-found', '--wait=false', '-f', '-'], rendered),
    );
    k('-n', 'refwatch', 'create', 'secret', 'generic', 'refwatch-token', '--from-literal=token=0123456789abcdef0123');
    expect(
      k('-n', 'refwatch', 'get', 'deployment/refwatch', 'serviceaccount/refwatch', 'service/refwatch', '-o', 'name')
        .trim()
        .split('\n'),
    ).toHaveLength(3);

    const ns = await cluster.newNamespace('refwatch-kustomize');
    apply(referrers(ns));
    await expectEveryWatchPrimed('refwatch', 'refwatch', ['core']);
  }, 180_000);

  it('a pack the ClusterRole was not generated for shows as Forbidden, and refwatch is ready but degraded, naming the rules', async () => {
    // The kustomize base (applied by the test above) grants the core pack only: with gateway on too, its kinds must be refused, visibly.
    const server = await startInCluster('refwatch', 'refwatch', 'core,gateway');
    try {
      // Its referrer kinds are watched from the start; their referents never get a reference to watch.
      // ReferenceGrants too: the rules observer watches them to judge cross-namespace references.
      const gatewayKinds = [
        ...gatewayPack.rules.map((r) => `${r.referrer.kind}.${r.referrer.group}`),
        `ReferenceGrant.${GATEWAY}`,
      ].sort();
      let refused: string[] = [];
      const deadline = Date.now() + 30_000;
      while (refused.length < gatewayKinds.length && Date.now() < deadline) {
        const watches = ((await (await fetch(`${server.url}/api/v1/snapshot`)).json()) as { watches: WatchEntity[] })
          .watches;
        refused = watches
          .filter((w) => w.lastError?.reason === 'Forbidden')
          .map((w) => w.kind)
          .sort();
        if (refused.length < gatewayKinds.length) await new Promise((r) => setTimeout(r, 500));
      }
      expect(refused).toEqual(gatewayKinds);
      // A kind the ServiceAccount may not read is an answer, not a wait: ready, degraded, with the rule to grant.
      const ready = await waitReady(server.url);
      expect(ready.status, ready.body).toBe(200);
      const body = JSON.parse(ready.body) as { status: string; warnings: string[] };
      expect(body.status).toBe('degraded');
      for (const kind of gatewayKinds)
        expect(body.warnings.some((w) => w.startsWith(`${kind} `) && w.includes('grant the rule'))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('a Deployment with namespaced RBAC (a Role in its own namespace, no ClusterRole) becomes Ready', async () => {
    const ns = await cluster.newNamespace('refwatch-role');
    const rbac = 'rbac.authorization.k8s.io';
    apply([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'refwatch', namespace: ns } },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'Role',
        metadata: { name: 'refwatch-read', namespace: ns },
        rules: [
          {
            apiGroups: [''],
            resources: ['pods', 'secrets', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims'],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'refwatch-read', namespace: ns },
        roleRef: { apiGroup: rbac, kind: 'Role', name: 'refwatch-read' },
        subjects: [{ kind: 'ServiceAccount', name: 'refwatch', namespace: ns }],
      },
    ]);
    const server = await startInCluster(ns, 'refwatch', 'core');
    try {
      const fallback = `Pod: cluster-wide list forbidden; watching namespace ${ns} (from the Pod's namespace)`;
      let ready = await waitReady(server.url);
      for (const deadline = Date.now() + 30_000; !ready.body.includes(fallback) && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 250));
        ready = await waitReady(server.url);
      }
      expect(ready.status, ready.body).toBe(200);
      const body = JSON.parse(ready.body) as { status: string; warnings: string[] };
      expect(body.status).toBe('degraded');
      expect(body.warnings).toContain(fallback);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
