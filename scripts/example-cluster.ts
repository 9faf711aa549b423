// node --import tsx scripts/example-cluster.ts embedded|real
// Starts a cluster with the demo's kinds and namespace shop (tests/setup/example-cluster.ts), prints
// KUBECONFIG=<path>, then plays the cluster's side of the shop scenario until SIGTERM stops it.
import { driveShop, seedShop, startExampleCluster } from '../tests/setup/example-cluster';

const kind = process.argv[2];
if (kind !== 'embedded' && kind !== 'real') {
  console.error('usage: example-cluster.ts embedded|real');
  process.exit(2);
}
const cluster = await startExampleCluster(kind);
const stopped = new AbortController();
const stop = async (): Promise<void> => {
  stopped.abort();
  await cluster.stop();
  console.log(`fixture: ${kind} cluster stopped`);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
try {
  await seedShop(cluster.client);
  console.log(`KUBECONFIG=${cluster.kubeconfigPath}`);
  await driveShop(cluster.client, stopped.signal, (line) => console.log(`fixture: ${line}`));
} catch (e) {
  if (!stopped.signal.aborted) {
    console.error(`fixture: ${e instanceof Error ? e.message : String(e)}`);
    await stop();
    process.exitCode = 1;
  }
}
