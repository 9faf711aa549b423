import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
// Inside the repository, so that the bundle's imports of yaml and the like resolve from its node_modules.
const cache = path.join(root, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(path.join(cache, 'refwatch-builtins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what a controller process loads', () => {
  // Each Node built-in a process loads stays resident for its life: its source and code cache in the node binary,
  // and its compiled code in the heap (docs/library.md, Footprint).
  // Bundled with its npm packages left as imports, as the packed library runs: what the process loads is what the
  // library's entry points import eagerly.
  async function runEntry(
    name: string,
    extra = '',
  ): Promise<{ loaded: string[]; builtins: string[]; packages: string[] }> {
    const entry = path.join(dir, `${name}.ts`);
    writeFileSync(
      entry,
      `import { createRequire } from 'node:module';
import { KubeClient, SharedInformerPool } from ${JSON.stringify(path.join(root, 'lib/kube'))};
import { Manager } from ${JSON.stringify(path.join(root, 'lib/engine'))};
${extra}
const modules = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({ loaded: [KubeClient, SharedInformerPool, Manager].map((f) => typeof f), builtins: process.moduleLoadList, modules }));`,
    );
    const out = path.join(dir, `${name}.mjs`);
    await build({
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'error',
    });
    const printed = JSON.parse(
      execFileSync(process.execPath, [out], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }),
    ) as { loaded: string[]; builtins: string[]; modules: string[] };
    expect(printed.loaded).toEqual(['function', 'function', 'function']);
    // The npm packages loaded, by the folder under node_modules that each module file lies in.
    const packages = printed.modules.flatMap(
      (f) => /[/\\]node_modules[/\\]((?:@[^/\\]+[/\\])?[^/\\]+)/.exec(f)?.[1] ?? [],
    );
    return { ...printed, packages: [...new Set(packages)] };
  }

  it('loads child_process only when a kubeconfig exec plugin runs, not with the kube client and engine', async () => {
    const { builtins } = await runEntry('entry');
    expect(builtins).toContain('NativeModule https');
    expect(builtins.filter((m) => m.includes('child_process'))).toEqual([]);
  }, 30_000);

  it('loads yaml only when a kubeconfig file is read, not with the kube client and engine', async () => {
    const before = await runEntry('no-kubeconfig');
    expect(before.packages).not.toContain('yaml');

    // The same process with a kubeconfig read: yaml shows up in the list, so its absence above is not an accident.
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const after = await runEntry('kubeconfig', `KubeClient.fromFile(${JSON.stringify(kubeconfig)});`);
    expect(after.packages).toContain('yaml');
  }, 30_000);
});
