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
  it('loads child_process only when a kubeconfig exec plugin runs, not with the kube client and engine', async () => {
    const entry = path.join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import { KubeClient, SharedInformerPool } from ${JSON.stringify(path.join(root, 'lib/kube'))};
import { Manager } from ${JSON.stringify(path.join(root, 'lib/engine'))};
console.log(JSON.stringify({ loaded: [KubeClient, SharedInformerPool, Manager].map((f) => typeof f), builtins: process.moduleLoadList }));`,
    );
    const out = path.join(dir, 'entry.mjs');
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
    ) as {
      loaded: string[];
      builtins: string[];
    };
    expect(printed.loaded).toEqual(['function', 'function', 'function']);
    expect(printed.builtins).toContain('NativeModule https');
    expect(printed.builtins.filter((m) => m.includes('child_process'))).toEqual([]);
  }, 30_000);
});
