import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { KubeClient } from '@/lib/kube';
import { runCli, type CliRun as Run } from '../setup/cli';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * The `refwatch` CLI run as a real process (bin/refwatch, as a user of this
 * checkout runs it) against the test cluster: standalone from a kubeconfig,
 * and through a refwatch server serving API v1 over HTTP. On the real tier,
 * also as a kubectl plugin (`kubectl refwatch …`).
 */

const clusterKind = inject('refwatchCluster').kind;
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin');
let cluster: TestCluster;
let client: KubeClient;
let dir: string;
let kubeconfig: string;
let ns: string;

/** run starts bin/refwatch with args and resolves once it exits. */
function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, { env: cliEnv(env) });
}

/** cliEnv: this checkout's bin/ first on PATH (kubectl finds kubectl-refwatch there), and no stray REFWATCH_* settings. */
function cliEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: `${BIN}:${process.env.PATH ?? ''}`, HOME: dir, KUBECONFIG: kubeconfig, ...extra };
}

/** standalone: the flags of a headless run against the test cluster's kubeconfig. */
const standalone = () => ['--kubeconfig', kubeconfig, '-n', ns];

async function create(p: string, body: object): Promise<void> {
  await client.request('POST', p, { body });
}

/** A Pod kube-apiserver accepts without a controller manager, referring to a ConfigMap, a Secret and optionally a PVC. */
function pod(name: string, configMap: string, secret: string, claim?: string): object {
  const volumes: object[] = [{ name: 'config', configMap: { name: configMap } }];
  if (claim) volumes.push({ name: 'data', persistentVolumeClaim: { claimName: claim } });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10', envFrom: [{ secretRef: { name: secret } }] }],
      volumes,
    },
  };
}

function claim(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  };
}

async function bindClaim(namespace: string, name: string): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}/status`, {
    body: { status: { phase: 'Bound' } },
    contentType: 'application/merge-patch+json',
  });
}

beforeAll(async () => {
  cluster = await getTestCluster();
  client = KubeClient.fromKubeconfig(cluster.kubeconfig, { source: `${clusterKind} test cluster` });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-cli-'));
  kubeconfig = path.join(dir, 'kubeconfig.json');
  fs.writeFileSync(kubeconfig, JSON.stringify(cluster.kubeconfig));
  ns = await cluster.newNamespace('cli');
  await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'web-config' } });
  await create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'web-secrets' }, stringData: { token: 'x' } });
  await create(`/api/v1/namespaces/${ns}/pods`, pod('web', 'web-config', 'web-secrets'));
  // A typo: web-confg for web-config.
  await create(`/api/v1/namespaces/${ns}/pods`, pod('api', 'web-confg', 'web-secrets'));
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe(`refwatch standalone on the ${clusterKind} cluster`, () => {
  it('explains a resolved Pod: exit 0, in every output format', async () => {
    const [table, wide, json, yaml, bare] = await Promise.all([
      run(['explain', 'pod/web', ...standalone()]),
      run(['explain', 'pod', 'web', ...standalone(), '-o', 'wide']),
      run(['explain', `Pod/${ns}/web`, '--kubeconfig', kubeconfig, '-o', 'json']),
      run(['explain', 'po/web', ...standalone(), '-o', 'yaml']),
      run(['explain', 'pods/web', ...standalone(), '--no-headers']),
    ]);
    for (const r of [table, wide, json, yaml, bare]) expect(r.code, r.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^Pod/${ns}/web: Resolved`, 'm'));
    expect(table.stdout).toMatch(/^REFERENT\s+STATE\s+REASON\s+FIX$/m);
    expect(table.stdout).toMatch(new RegExp(`^ConfigMap/${ns}/web-config\\s+Ready\\s+Ready$`, 'm'));
    expect(table.stdout).not.toContain('\x1b['); // not a terminal: no colour
    expect(wide.stdout).toMatch(
      new RegExp(
        `^Secret/${ns}/web-secrets\\s+spec\\.containers\\[0\\]\\.envFrom\\[0\\]\\.secretRef\\.name\\s+Ready`,
        'm',
      ),
    );
    const parsed = JSON.parse(json.stdout) as {
      object: string;
      controllers: { state: string; references: { referent: string; state: string }[] }[];
    };
    expect(parsed.object).toBe(`Pod/${ns}/web`);
    expect(parsed.controllers[0]!.references.map((r) => [r.referent, r.state]).sort()).toEqual([
      [`ConfigMap/${ns}/web-config`, 'Ready'],
      [`Secret/${ns}/web-secrets`, 'Ready'],
    ]);
    const fromYaml = parseYaml(yaml.stdout) as typeof parsed;
    expect(fromYaml.object).toBe(parsed.object);
    expect(fromYaml.controllers[0]!.references).toEqual(parsed.controllers[0]!.references);
    expect(bare.stdout).not.toContain('REFERENT');
    expect(bare.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('explains a stuck reference with its typo suggestion: exit 1', async () => {
    const [wide, json] = await Promise.all([
      run(['explain', 'pod/api', ...standalone(), '-o', 'wide']),
      run(['explain', 'pod/api', ...standalone(), '-o', 'json']),
    ]);
    expect(wide.code).toBe(1);
    expect(wide.stdout).toMatch(new RegExp(`^Pod/${ns}/api: NotFound`, 'm'));
    expect(wide.stdout).toContain(`ConfigMap/${ns}/web-confg not found; did you mean web-config?`);
    expect(wide.stdout).toContain('set spec.volumes[0].configMap.name to web-config');
    expect(json.code).toBe(1);
    const refs = (
      JSON.parse(json.stdout) as {
        controllers: { references: { referent: string; state: string; suggestions?: string[] }[] }[];
      }
    ).controllers[0]!.references;
    expect(refs.find((r) => r.referent === `ConfigMap/${ns}/web-confg`)).toMatchObject({ state: 'NotFound' });
  });

  it('says an object that does not exist is not found, with the close names: exit 1', async () => {
    const r = await run(['explain', 'pod/webb', ...standalone()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: Pod/${ns}/webb not found; did you mean Pod/${ns}/web?`);
  });

  it('lists stuck referrers oldest first, in every format; exit 1 when any, 0 when none', async () => {
    const [table, wide, json, yaml, none] = await Promise.all([
      run(['stuck', ...standalone(), '--older-than', '0s']),
      run(['stuck', ...standalone(), '--older-than', '0s', '-o', 'wide', '--kind', 'pod']),
      run(['stuck', ...standalone(), '--older-than', '0s', '-o', 'json']),
      run(['stuck', ...standalone(), '--older-than', '0s', '-o', 'yaml']),
      run(['stuck', ...standalone(), '--older-than', '1h']),
    ]);
    expect(table.code, table.stderr).toBe(1);
    expect(table.stdout).toMatch(/^REFERRER\s+AGE\s+REASON\s+REFERENT\s+FIX$/m);
    expect(table.stdout).toMatch(
      new RegExp(`^Pod/${ns}/api\\s+\\d+[smhd]\\S*\\s+NotFound\\s+ConfigMap/${ns}/web-confg\\s+set spec`, 'm'),
    );
    expect(table.stdout).not.toContain(`Pod/${ns}/web `);
    expect(wide.code).toBe(1);
    expect(wide.stdout).toMatch(/CONTROLLER\s+STATE\s+MESSAGE\s+FIX/);
    expect(wide.stdout).toContain('rules/Pod');
    const items = (JSON.parse(json.stdout) as { items: { key: string; reason: string; referent: string }[] }).items;
    expect(json.code).toBe(1);
    expect(items.map((i) => i.key)).toContain(`Pod/${ns}/api`);
    expect(items.find((i) => i.key === `Pod/${ns}/api`)).toMatchObject({
      reason: 'NotFound',
      referent: `ConfigMap/${ns}/web-confg`,
    });
    expect((parseYaml(yaml.stdout) as { items: { key: string }[] }).items.map((i) => i.key)).toEqual(
      items.map((i) => i.key),
    );
    expect(none.code, none.stdout).toBe(0);
    expect(none.stdout).toBe('');
  });

  it('draws the tree forward and reverse, in every format', async () => {
    const [table, wide, json, yaml, reverse] = await Promise.all([
      run(['tree', 'pod/api', ...standalone()]),
      run(['tree', 'pod/web', ...standalone(), '-o', 'wide']),
      run(['tree', 'pod/api', ...standalone(), '-o', 'json']),
      run(['tree', 'pod/web', ...standalone(), '-o', 'yaml']),
      run(['tree', 'secret/web-secrets', ...standalone(), '--reverse']),
    ]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(new RegExp(`^Pod/${ns}/api\\s+NotFound$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^├── ConfigMap/${ns}/web-confg\\s+NotFound$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^└── Secret/${ns}/web-secrets\\s+Ready$`, 'm'));
    expect(wide.code).toBe(0);
    expect(wide.stdout).toMatch(
      new RegExp(`ConfigMap/${ns}/web-config\\s+Ready\\s+spec\\.volumes\\[0\\]\\.configMap\\.name`),
    );
    const tree = JSON.parse(json.stdout) as { key: string; state: string; children: { key: string; state: string }[] };
    expect(tree).toMatchObject({ key: `Pod/${ns}/api`, state: 'NotFound' });
    expect(tree.children.map((c) => [c.key, c.state]).sort()).toEqual([
      [`ConfigMap/${ns}/web-confg`, 'NotFound'],
      [`Secret/${ns}/web-secrets`, 'Ready'],
    ]);
    expect(yaml.code).toBe(0);
    expect((parseYaml(yaml.stdout) as { children: unknown[] }).children).toHaveLength(2);
    expect(reverse.code).toBe(1); // one of its referrers, Pod api, is stuck
    expect(reverse.stdout).toMatch(new RegExp(`^Secret/${ns}/web-secrets\\s+Ready$`, 'm'));
    expect(reverse.stdout).toMatch(new RegExp(`── Pod/${ns}/api\\s+NotFound$`, 'm'));
    expect(reverse.stdout).toMatch(new RegExp(`── Pod/${ns}/web\\s+Resolved$`, 'm'));
  });

  it('explains a Service: the Pods its selector matches, or what would match when nothing does; tree follows the selector', async () => {
    const svcNs = await cluster.newNamespace('cli-svc');
    for (const name of ['shop-1', 'shop-2'])
      await create(`/api/v1/namespaces/${svcNs}/pods`, {
        metadata: { name, labels: { app: 'shop' } },
        spec: {
          automountServiceAccountToken: false,
          containers: [{ name: 'shop', image: 'registry.k8s.io/pause:3.10' }],
        },
      });
    await client.request('PATCH', `/api/v1/namespaces/${svcNs}/pods/shop-1/status`, {
      body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      contentType: 'application/merge-patch+json',
    });
    for (const [name, app] of [
      ['shop', 'shop'],
      ['shop-v2', 'shop-v2'],
    ])
      await create(`/api/v1/namespaces/${svcNs}/services`, {
        metadata: { name },
        spec: { selector: { app }, ports: [{ port: 80 }] },
      });
    const flags = ['--kubeconfig', kubeconfig, '-n', svcNs];
    const [matched, json, noMatch, tree] = await Promise.all([
      run(['explain', 'svc/shop', ...flags]),
      run(['explain', 'svc/shop', ...flags, '-o', 'json']),
      run(['explain', 'svc/shop-v2', ...flags]),
      run(['tree', 'svc/shop', ...flags]),
    ]);
    expect(matched.code, matched.stderr).toBe(0);
    expect(matched.stdout).toMatch(new RegExp(`^Service/${svcNs}/shop: Resolved`, 'm'));
    expect(matched.stdout).toContain(`selector spec.selector: Pod app=shop in ${svcNs}: 2 matched, 1 Ready (Ready)`);
    expect(matched.stdout).toMatch(new RegExp(`^Pod/${svcNs}/shop-1\\s+Ready\\b`, 'm'));
    expect(matched.stdout).toMatch(new RegExp(`^Pod/${svcNs}/shop-2\\s+NotReady\\b`, 'm'));
    const view = (
      JSON.parse(json.stdout) as {
        controllers: { selections: { matched: number; ready: number }[]; references: { referent: string }[] }[];
      }
    ).controllers[0]!;
    expect(view.selections).toEqual([expect.objectContaining({ state: 'Ready', matched: 2, ready: 1 })]);
    expect(view.references.map((r) => r.referent).sort()).toEqual([`Pod/${svcNs}/shop-1`, `Pod/${svcNs}/shop-2`]);

    expect(noMatch.code).toBe(1);
    expect(noMatch.stdout).toMatch(new RegExp(`^Service/${svcNs}/shop-v2: NoMatch`, 'm'));
    expect(noMatch.stdout).toContain(
      `selector spec.selector: Pod app=shop-v2 in ${svcNs}: 0 matched, 0 Ready (NoMatch)`,
    );
    expect(noMatch.stdout).toContain(
      `diagnosis: 0 Pods in ${svcNs} match app=shop-v2; 2 Pods have app=shop: did you mean app=shop?`,
    );

    expect(tree.code, tree.stderr).toBe(1); // every object in the tree counts, and Pod shop-2 is not Ready
    expect(tree.stdout).toMatch(new RegExp(`^Service/${svcNs}/shop\\s+Resolved$`, 'm'));
    expect(tree.stdout).toMatch(new RegExp(`── Pod/${svcNs}/shop-1\\s+Ready$`, 'm'));
    expect(tree.stdout).toMatch(new RegExp(`── Pod/${svcNs}/shop-2\\s+NotReady$`, 'm'));
  }, 180_000);

  it('watches only the kinds the question needs, and closes every watch when done', async () => {
    const { StandaloneBackend } = await import('@/lib/cli/standalone');
    const before = await cluster.openWatches();
    const backend = await StandaloneBackend.open({
      kubeconfig,
      namespace: ns,
      packs: ['core'],
      rules: [],
      timeoutMs: 30_000,
    });
    try {
      const e = await backend.explain(`Pod/${ns}/web`);
      expect(e.controllers[0]!.references.map((r) => r.state)).toEqual(['Ready', 'Ready']);
      const during = await cluster.openWatches();
      const opened = Object.keys(during).filter((k) => (during[k] ?? 0) > (before[k] ?? 0));
      expect(opened.sort()).toEqual(['configmaps', 'pods', 'secrets']);
    } finally {
      await backend.close();
    }
    await expect.poll(async () => (await cluster.openWatches()).pods ?? 0, { timeout: 15_000 }).toBe(before.pods ?? 0);
  });

  it('watches a referent become Ready until interrupted, then exits 0', async () => {
    await create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('data'));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('db', 'web-config', 'web-secrets', 'data'));
    const w = startWatch(['watch', 'pod/db', ...standalone(), '-o', 'json']);
    try {
      await w.waitFor((r) => r.object === `PersistentVolumeClaim/${ns}/data` && r.state === 'NotReady');
      expect(w.rows.find((r) => r.object === `Pod/${ns}/db`)).toMatchObject({ role: 'referrer', state: 'Waiting' });
      await bindClaim(ns, 'data');
      await w.waitFor((r) => r.object === `PersistentVolumeClaim/${ns}/data` && r.state === 'Ready');
      await w.waitFor((r) => r.object === `Pod/${ns}/db` && r.state === 'Resolved');
    } finally {
      w.child.kill('SIGINT');
    }
    expect(await w.exited).toBe(0);
  });
});

describe(`refwatch usage and connection errors`, () => {
  it('refuses bad flags and arguments with exit 2 and says what to type', async () => {
    const [unknown, format, object, kind, duration, both, token] = await Promise.all([
      run(['explain', 'pod/web', '--namespce', ns]),
      run(['stuck', '-o', 'xml']),
      run(['explain', 'a/b/c/d']),
      run(['explain', 'nosuchtype/web', ...standalone()]),
      run(['stuck', '--older-than', 'soon']),
      run(['explain', 'pod/web', '--server', 'http://127.0.0.1:1', '--kubeconfig', kubeconfig]),
      run(['explain', 'pod/web', '--token', 'x', ...standalone()]),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: unknown option '--namespce'");
    expect(unknown.stderr).toContain('--namespace');
    expect(format.code).toBe(2);
    expect(format.stderr).toContain(
      "option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, wide, json, yaml",
    );
    expect(object.code).toBe(2);
    expect(object.stderr).toContain('argument OBJECT "a/b/c/d"');
    expect(kind.code).toBe(2);
    expect(kind.stderr).toContain('no resource type "nosuchtype"');
    expect(duration.code).toBe(2);
    expect(duration.stderr).toContain('--older-than');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--server <url>' cannot be used with option '--kubeconfig <path>'");
    expect(token.code).toBe(2);
    expect(token.stderr).toContain('flag --token is only for --server');
    for (const r of [unknown, format, object, kind, duration, both, token]) expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('names the flag when it cannot connect', async () => {
    const closed = await closedPort();
    const dead = path.join(dir, 'dead.json');
    fs.writeFileSync(
      dead,
      JSON.stringify({
        ...cluster.kubeconfig,
        clusters: cluster.kubeconfig.clusters.map((c) => ({
          ...c,
          cluster: { ...c.cluster, server: `https://127.0.0.1:${closed}` },
        })),
      }),
    );
    const [server, missing, unreachable] = await Promise.all([
      run(['explain', 'Pod/shop/web', '--server', `http://127.0.0.1:${closed}`]),
      run(['explain', 'pod/web', '--kubeconfig', path.join(dir, 'nope.yaml')]),
      run(['explain', 'Pod/shop/web', '--kubeconfig', dead]),
    ]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(
      new RegExp(
        `^error: cannot watch Pod in namespace shop \\(--kubeconfig ${dead}, context [^)]+\\): cannot reach https://127\\.0\\.0\\.1:${closed}`,
      ),
    );
    expect(server.code).toBe(2);
    expect(server.stderr).toBe(`error: cannot reach --server http://127.0.0.1:${closed}: connection refused\n`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot use --kubeconfig ${path.join(dir, 'nope.yaml')}`);
  });

  it('lists every flag with examples in each help', async () => {
    const helps = await Promise.all(
      [[], ['explain'], ['stuck'], ['tree'], ['watch']].map((c) => run([...c, '--help'])),
    );
    for (const h of helps) {
      expect(h.code).toBe(0);
      expect(h.stdout).toContain('EXAMPLES');
    }
    for (const h of helps.slice(1))
      for (const flag of [
        '--namespace',
        '--output',
        '--no-headers',
        '--server',
        '--token',
        '--kubeconfig',
        '--context',
        '--packs',
        '--rules',
        '--timeout',
      ])
        expect(h.stdout).toContain(flag);
    expect(helps[2]!.stdout).toContain('--older-than');
    expect(helps[3]!.stdout).toContain('--reverse');
  });
});

describe(`refwatch --server on the ${clusterKind} cluster`, () => {
  let server: { url: string; stop: () => Promise<void> };

  beforeAll(async () => {
    server = await startServer(kubeconfig);
    // The server answers once its Pod cache is primed and Pod api has been reconciled.
    const deadline = Date.now() + 30_000;
    while ((await fetch(`${server.url}/api/v1/explain?object=${encodeURIComponent(`Pod/${ns}/api`)}`)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`the refwatch server did not explain Pod/${ns}/api within 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('explains, lists stuck referrers and draws trees from the server', async () => {
    const s = ['--server', server.url, '--token', 'not-checked-for-reads', '-n', ns];
    const [explained, typed, stuck, tree, missing] = await Promise.all([
      run(['explain', `Pod/${ns}/api`, '--server', server.url, '-o', 'wide']),
      run(['explain', 'pod/web', ...s, '-o', 'json']),
      run(['stuck', ...s, '--older-than', '0s', '-o', 'json']),
      run(['tree', 'pods/api', ...s]),
      run(['explain', 'pod/webb', ...s]),
    ]);
    expect(explained.code).toBe(1);
    expect(explained.stdout).toContain(`ConfigMap/${ns}/web-confg not found; did you mean web-config?`);
    expect(typed.code, typed.stderr).toBe(0);
    expect((JSON.parse(typed.stdout) as { object: string }).object).toBe(`Pod/${ns}/web`);
    expect(stuck.code).toBe(1);
    expect((JSON.parse(stuck.stdout) as { items: { key: string }[] }).items.map((i) => i.key)).toContain(
      `Pod/${ns}/api`,
    );
    expect(tree.code).toBe(1);
    expect(tree.stdout).toMatch(new RegExp(`├── ConfigMap/${ns}/web-confg\\s+NotFound`));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`did you mean Pod/${ns}/web`);
  });

  it('watches through the SSE stream until interrupted', async () => {
    await create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim('cache'));
    await create(`/api/v1/namespaces/${ns}/pods`, pod('cache', 'web-config', 'web-secrets', 'cache'));
    const w = startWatch(['watch', '-n', ns, '--server', server.url, '-o', 'json']);
    try {
      await w.waitFor((r) => r.object === `PersistentVolumeClaim/${ns}/cache` && r.state === 'NotReady');
      await bindClaim(ns, 'cache');
      await w.waitFor((r) => r.object === `PersistentVolumeClaim/${ns}/cache` && r.state === 'Ready');
      await w.waitFor((r) => r.object === `Pod/${ns}/cache` && r.state === 'Resolved');
    } finally {
      w.child.kill('SIGINT');
    }
    expect(await w.exited).toBe(0);
  });
});

describe.runIf(clusterKind === 'real')('kubectl refwatch on the real cluster', () => {
  it('finds the plugin on PATH and explains a Pod', async () => {
    const built = spawnSync('bash', [path.join(ROOT, 'tests/setup/build-kubectl.sh')], {
      encoding: 'utf8',
      timeout: 900_000,
    });
    const kubectl = built.stdout.trim().split('\n').at(-1) ?? '';
    if (built.status !== 0 || !fs.existsSync(kubectl)) {
      if (process.env.CI === 'true') throw new Error(`kubectl could not be built: ${built.stderr.slice(-500)}`);
      console.log(`SKIPPED: kubectl refwatch: tests/setup/build-kubectl.sh failed: ${built.stderr.slice(-200)}`);
      return;
    }
    const env = cliEnv({}) as NodeJS.ProcessEnv;
    const list = spawnSync(kubectl, ['plugin', 'list'], { env, encoding: 'utf8' });
    expect(list.stdout).toContain(path.join(BIN, 'kubectl-refwatch'));
    const r = spawnSync(
      kubectl,
      ['refwatch', 'explain', 'pod/api', '-n', ns, '--kubeconfig', kubeconfig, '-o', 'wide'],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`did you mean web-config?`);
    const help = spawnSync(kubectl, ['refwatch', '--help'], { env, encoding: 'utf8' });
    expect(help.stdout).toContain('Usage: kubectl refwatch');
  }, 900_000);
});

// ------------------------------------------------------------------ helpers

/** closedPort is a loopback port nothing listens on: one just bound and released. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

interface WatchLine {
  object: string;
  role: string;
  state: string;
}

/** startWatch runs `refwatch watch … -o json` and collects its lines. */
function startWatch(args: string[]): {
  child: ChildProcess;
  rows: WatchLine[];
  waitFor: (pred: (r: WatchLine) => boolean) => Promise<void>;
  exited: Promise<number | null>;
} {
  const child = spawn(path.join(BIN, 'refwatch'), args, {
    env: cliEnv({}) as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const rows: WatchLine[] = [];
  let buf = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) if (l.trim()) rows.push(JSON.parse(l) as WatchLine);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    rows,
    exited,
    waitFor: (pred) =>
      expect
        .poll(() => rows.some(pred), {
          timeout: 30_000,
          interval: 50,
          message: `watch ${args.join(' ')} printed ${JSON.stringify(rows)}; stderr: ${stderr}`,
        })
        .toBe(true)
        .then(() => undefined),
  };
}

/** startServer runs refwatch's API v1 (the route handlers' functions) over HTTP on a runtime observing the test cluster. */
async function startServer(kubeconfigPath: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const { startRuntime } = await import('@/server/runtime');
  const api = await import('@/server/api');
  const { handle } = await import('@/server/http/errors');
  const rt = await startRuntime({
    cluster: { mode: 'kubeconfig', path: kubeconfigPath },
    host: '127.0.0.1',
    port: 0,
    allowedHosts: [],
    readsNeedToken: false,
    insecureAllowAnonymous: false,
    graceMs: 30_000,
    stuckThresholdMs: 30_000,
    mutationRate: 5,
    streamsPerClient: 16,
    streamsTotal: 256,
    rulesFiles: [],
    rulePacks: ['core'],
    demo: false,
  });
  type Fn = (rt: Parameters<typeof api.getExplain>[0], req: Request) => Response | Promise<Response>;
  const routes: Record<string, Fn> = {
    '/api/v1/snapshot': api.getSnapshot,
    '/api/v1/stream': api.getStream,
    '/api/v1/explain': api.getExplain,
    '/api/v1/stuck': api.getStuck,
  };
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    void (async () => {
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const fn = routes[url.pathname];
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(url, { headers, signal: abort.signal });
      const response = fn
        ? await handle((r: Request) => fn(rt, r))(request)
        : Response.json({ error: { code: 'NotFound', message: `no route ${url.pathname}` } }, { status: 404 });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      try {
        const reader = response.body?.getReader();
        for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) res.write(r.value);
      } catch {
        // the client went away
      }
      res.end();
    })();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rt.dispose();
    },
  };
}
