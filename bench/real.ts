import type { RealCluster } from '../tests/setup/real-cluster';

/**
 * realCluster starts kube-apiserver and etcd for a bench's real part, which
 * runs only under REFWATCH_BENCH_REAL=1. That flag asks for the real cluster,
 * so one that cannot start fails the bench, saying what to do, instead of
 * being skipped. Imported on demand: the embedded runs never load it.
 */
export async function realCluster(bench: string): Promise<RealCluster> {
  const { startRealCluster } = await import('../tests/setup/real-cluster');
  try {
    return await startRealCluster();
  } catch (e) {
    throw new Error(
      `bench ${bench}: REFWATCH_BENCH_REAL=1 asks for a real kube-apiserver, which cannot start (${e instanceof Error ? e.message : String(e)}); build it with bash tests/setup/build-real-cluster.sh, or unset REFWATCH_BENCH_REAL`,
      { cause: e },
    );
  }
}
