import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { kubectl, kubectlPath, type KubectlResult } from './kubectl';

/** embeddedKubectlBin is the kubectl to run against the embedded cluster: none on another tier, or when it cannot be built. */
export function embeddedKubectlBin(clusterKind: string): string | undefined {
  const found = clusterKind === 'embedded' ? kubectlPath() : undefined;
  return found && 'path' in found ? found.path : undefined;
}

export interface EmbeddedKubectl {
  /** The runtime, once the suite's beforeAll has started it. */
  readonly rt: Runtime;
  /** run runs kubectl through the kubeconfig file the runtime wrote. */
  run(args: string[], stdin?: string): Promise<KubectlResult>;
}

/**
 * useEmbeddedKubectl starts, in the calling suite's beforeAll, the embedded
 * runtime as `npm start` does (no example, no demo) with its kubeconfig in a
 * temporary state home, and disposes of both in its afterAll.
 */
export function useEmbeddedKubectl(bin: string, tmpPrefix: string): EmbeddedKubectl {
  let rt: Runtime | undefined;
  let dir: string | undefined;
  let kubeconfig = '';

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    kubeconfig = path.join(dir, 'state', 'refwatch', 'embedded.kubeconfig');
    rt = await startRuntime(parseConfig({ REFWATCH_EXAMPLE: 'none', REFWATCH_DEMO: 'off', REFWATCH_GRACE: '1s' }), {
      kubeconfigFile: kubeconfig,
    });
  });

  afterAll(async () => {
    await rt?.dispose();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  return {
    get rt(): Runtime {
      if (!rt) throw new Error('useEmbeddedKubectl: the runtime is read before the suite started it');
      return rt;
    },
    run: (args, stdin) => kubectl(bin, kubeconfig, args, stdin),
  };
}
