import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * kubectlPath returns the kubectl that tests/setup/build-kubectl.sh builds
 * from the Go module proxy and caches per machine (built on first use, which
 * takes minutes; .ci/run builds it beforehand). Without a Go toolchain it
 * returns a reason to skip, which under CI=true is a failure instead.
 */
export function kubectlPath(): { path: string } | { skipped: string } {
  const script = path.resolve(import.meta.dirname, 'build-kubectl.sh');
  const r = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30 * 60_000 });
  const bin = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status === 0 && bin !== '') return { path: bin };
  const why =
    /SKIPPED: kubectl: (.*)/.exec(r.stderr)?.[1] ??
    `build-kubectl.sh exited ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`;
  if (process.env.CI === 'true') throw new Error(`kubectl is required under CI=true: ${why}`);
  console.warn(`SKIPPED: kubectl: ${why}`);
  return { skipped: why };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl runs kubectl as a process with KUBECONFIG set and no other kubeconfig in reach; stdin is optional. */
export function kubectl(bin: string, kubeconfig: string, args: string[], stdin?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      args,
      { env: { ...process.env, HOME: path.dirname(kubeconfig), KUBECONFIG: kubeconfig }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}
