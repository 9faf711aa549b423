import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ClusterInfo } from '../lib/changelog';
import { KubeClient } from '../lib/kube';
import { startEmbeddedServer, type EmbeddedServer } from './embedded';
import type { Config } from './config';

export interface ClusterConnection {
  client: KubeClient;
  embedded?: EmbeddedServer;
  info: ClusterInfo;
  stop(): Promise<void>;
}

/** demoManifests reads deploy/demo/crds.yaml: the embedded cluster installs the demo's kinds at start. */
export function demoManifests(root = process.cwd()): object[] {
  const file = path.join(root, 'deploy', 'demo', 'crds.yaml');
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  return docs.map((d) => d.toJS() as object).filter(Boolean);
}

/** connectCluster starts the embedded API server or loads a kubeconfig / in-cluster config. */
export async function connectCluster(config: Config): Promise<ClusterConnection> {
  if (config.cluster.mode === 'embedded') {
    // A fresh token per process: even on loopback, the API server takes no anonymous requests.
    const embedded = await startEmbeddedServer({ objects: demoManifests(), bookmarkIntervalMs: 30_000, token: randomBytes(24).toString('hex') });
    const client = KubeClient.fromKubeconfig(embedded.kubeconfig(), { source: 'embedded' });
    return { client, embedded, info: { mode: 'embedded', server: embedded.url, context: 'embedded', reachable: true }, stop: () => embedded.stop() };
  }
  const client =
    config.cluster.mode === 'kubeconfig' ? KubeClient.fromFile(config.cluster.path, { context: config.cluster.context }) : KubeClient.inCluster({ pathPrefix: config.cluster.root });
  const d = client.describe();
  return { client, info: { mode: config.cluster.mode, server: d.server, context: d.context, reachable: false }, stop: async () => {} };
}

/**
 * probeCluster asks the API server for /version; the answer says whether the
 * cluster is reachable and which version it runs. Credentials never appear in
 * the message: the client redacts them.
 */
export async function probeCluster(client: KubeClient, info: ClusterInfo, signal?: AbortSignal): Promise<ClusterInfo> {
  try {
    const v = await client.getJSON<{ gitVersion?: string }>('/version', {}, signal);
    const next: ClusterInfo = { ...info, reachable: true };
    if (v.gitVersion) next.version = v.gitVersion;
    delete next.message;
    return next;
  } catch (e) {
    return { ...info, reachable: false, message: client.redact(`cannot reach ${info.server}: ${e instanceof Error ? e.message : String(e)}`) };
  }
}
