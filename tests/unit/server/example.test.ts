import type { Snapshot } from '@/lib/changelog';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getReadyz, getSnapshot, getStuck } from '@/server/api';
import { flagsToEnv, parseConfig } from '@/server/config';
import { embeddedKubeconfigPath } from '@/server/kubeconfig-file';
import { startRuntime, type Runtime } from '@/server/runtime';
import { callHandler } from './call';

describe('the example setting', () => {
  it('loads deploy/example on the embedded cluster by default, and nothing with none', () => {
    expect(parseConfig({}).example).toBe('deploy/example');
    expect(parseConfig({ REFWATCH_EXAMPLE: 'none' }).example).toBeUndefined();
    expect(parseConfig(flagsToEnv(['--example', 'none'])).example).toBeUndefined();
    expect(parseConfig({ REFWATCH_EXAMPLE: '/srv/mine' }).example).toBe('/srv/mine');
  });

  it('never creates anything on a real cluster: off by default, refused when asked', () => {
    expect(parseConfig({ REFWATCH_CLUSTER: 'kubeconfig', KUBECONFIG: '/k/config' }).example).toBeUndefined();
    expect(() =>
      parseConfig({ REFWATCH_CLUSTER: 'kubeconfig', KUBECONFIG: '/k/config', REFWATCH_EXAMPLE: 'deploy/example' }),
    ).toThrow(/REFWATCH_EXAMPLE \(flag --example\).*embedded cluster only.*kubectl apply -f deploy\/example/);
  });

  it('refuses a directory that does not exist, naming the setting', async () => {
    await expect(
      startRuntime(parseConfig({ REFWATCH_EXAMPLE: '/nonexistent/example', REFWATCH_DEMO: 'off' })),
    ).rejects.toThrow(/REFWATCH_EXAMPLE \(flag --example\) \/nonexistent\/example.*--example none/);
  });

  it('puts the kubeconfig in the state directory, never in the repository', () => {
    expect(embeddedKubeconfigPath({ XDG_STATE_HOME: '/x/state', HOME: '/home/u' })).toBe(
      '/x/state/refwatch/embedded.kubeconfig',
    );
    expect(embeddedKubeconfigPath({ HOME: '/home/u' })).toBe('/home/u/.local/state/refwatch/embedded.kubeconfig');
  });
});

it('removes the kubeconfig when the process exits without disposing (next start on SIGTERM)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-exit-'));
  const file = path.join(dir, 'embedded.kubeconfig');
  const script = `import { writeKubeconfigFile } from ${JSON.stringify(path.resolve('server/kubeconfig-file.ts'))};
await writeKubeconfigFile(${JSON.stringify(file)}, { kind: 'Config' });
console.log(fs.existsSync(${JSON.stringify(file)}));
process.exit(0);`;
  const entry = path.join(dir, 'exit.mts');
  fs.writeFileSync(entry, `import fs from 'node:fs';\n${script}`);
  const r = spawnSync(process.execPath, [path.resolve('node_modules/tsx/dist/cli.mjs'), entry], { encoding: 'utf8' });
  expect(r.stdout.trim(), r.stderr).toBe('true');
  expect(fs.existsSync(file)).toBe(false);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('starts even where the kubeconfig cannot be written, and says why', async () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const blocker = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-ro-'));
  fs.writeFileSync(path.join(blocker, 'refwatch'), 'a file where a directory should be');
  const rt = await startRuntime(parseConfig({ REFWATCH_DEMO: 'off', REFWATCH_EXAMPLE: 'none' }), {
    kubeconfigFile: path.join(blocker, 'refwatch', 'embedded.kubeconfig'),
  });
  try {
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/could not write the embedded cluster's kubeconfig.*XDG_STATE_HOME/),
    );
  } finally {
    await rt.dispose();
    warn.mockRestore();
    fs.rmSync(blocker, { recursive: true, force: true });
  }
});

describe('npm start on the embedded cluster', () => {
  let rt: Runtime;
  let dir: string;
  let kubeconfigFile: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-state-'));
    kubeconfigFile = path.join(dir, 'refwatch', 'embedded.kubeconfig');
    rt = await startRuntime(parseConfig({ REFWATCH_DEMO: 'off' }), { kubeconfigFile });
  });

  afterAll(async () => {
    await rt?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the three dangling references within 5 s of /readyz', async () => {
    await vi.waitFor(async () => expect((await callHandler(rt, getReadyz, '/readyz')).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    const snapshot = await callHandler(rt, getSnapshot, '/api/v1/snapshot');
    expect((snapshot.body as Snapshot).references.length).toBeGreaterThan(0);
    await vi.waitFor(
      async () => {
        const res = await callHandler(rt, getStuck, '/api/v1/stuck?olderThan=0s');
        const reasons = Object.fromEntries(
          (res.body.items as { key: string; reason: string }[]).map((s) => [s.key.split('|').pop(), s.reason]),
        );
        expect(reasons).toMatchObject({
          'Pod/refwatch-example/worker': 'NotFound',
          'Pod/refwatch-example/reporter': 'NotFound',
          'App.demo.refwatch.dev/refwatch-example/analytics': 'KindUnknown',
        });
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  it('writes a kubeconfig for kubectl readable by its owner only, and removes it at stop', async () => {
    expect(fs.statSync(kubeconfigFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(kubeconfigFile, 'utf8')).toContain(rt.connection.embedded!.url);
    await rt.dispose();
    expect(fs.existsSync(kubeconfigFile)).toBe(false);
  });
});
