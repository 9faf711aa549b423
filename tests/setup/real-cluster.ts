import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  ETCD_VERSION,
  KUBE_VERSION,
  RealClusterUnavailable,
  cachedBinariesDir,
  hasBinaries,
  startRealCluster as startWithBinaries,
  type RealCluster,
  type RealClusterOptions,
} from '../../lib/testing/real-cluster';

export { ETCD_VERSION, KUBE_VERSION, RealClusterUnavailable, type RealCluster, type RealClusterOptions };

const BUILD_SCRIPT = path.join(import.meta.dirname, 'build-real-cluster.sh');

/** binariesDir returns the directory with both binaries (REFWATCH_KUBE_ASSETS, else the cache), building them first if needed. */
export function binariesDir(): string {
  const assets = process.env.REFWATCH_KUBE_ASSETS;
  if (assets) return assets;
  if (hasBinaries(cachedBinariesDir())) return cachedBinariesDir();
  const build = spawnSync('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const built = build.stdout?.trim().split('\n').pop() ?? '';
  if (build.status === 0 && hasBinaries(built)) return built;
  const why =
    build.status === 3
      ? 'no Go toolchain on PATH'
      : `build-real-cluster.sh exited with ${build.status ?? build.signal}`;
  throw new RealClusterUnavailable(`kube-apiserver ${KUBE_VERSION} and etcd ${ETCD_VERSION} unavailable: ${why}`);
}

/** startRealCluster starts the library's real cluster, building its binaries first when the cache lacks them. */
export function startRealCluster(opts: RealClusterOptions = {}): Promise<RealCluster> {
  return startWithBinaries({ ...opts, binDir: opts.binDir ?? binariesDir() });
}
