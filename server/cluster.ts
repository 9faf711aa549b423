import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ClusterInfo } from '../lib/changelog';
import { KubeClient } from '../lib/kube';
import { RefwatchError } from '../lib/model';
import { startEmbeddedServer, type EmbeddedServer } from '../lib/embedded';
import type { Config } from './config';

/** exampleManifests reads the example's directory, naming the setting when it cannot. */
export function exampleManifests(dir: string): object[] {
  try {
    return readManifests(path.resolve(dir));
  } catch (e) {
    throw new RefwatchError(
      'InvalidConfig',
      `REFWATCH_EXAMPLE (flag --example) ${dir}: ${e instanceof Error ? e.message : String(e)}; use --example none to start bare`,
      { field: 'REFWATCH_EXAMPLE' },
    );
  }
}

export interface ClusterConnection {
  client: KubeClient;
  embedded?: EmbeddedServer;
  /** The example's manifests, applied to the embedded cluster at its start. */
  example?: object[];
  info: ClusterInfo;
  stop(): Promise<void>;
}

/** demoManifests reads deploy/demo/crds.yaml: the embedded cluster installs the demo's kinds at start. */
export function demoManifests(root = process.cwd()): object[] {
  return readManifests(path.join(root, 'deploy', 'demo', 'crds.yaml'));
}

/**
 * referenceRulesCrdManifests reads the ReferenceRules CRD that the kustomize base ships (the Helm chart's copy is
 * kept equal to it): the embedded cluster serves ReferenceRules like a cluster with the chart installed.
 */
export function referenceRulesCrdManifests(root = process.cwd()): object[] {
  return readManifests(path.join(root, 'deploy', 'kubernetes', 'base', 'referencerules-crd.yaml'));
}

/**
 * readManifests reads the YAML documents of a file, or of a directory's
 * .yaml/.yml files in name order, as `kubectl apply -f DIR` does.
 */
export function readManifests(fileOrDir: string): object[] {
  const files = fs.statSync(fileOrDir).isDirectory()
    ? fs
        .readdirSync(fileOrDir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => path.join(fileOrDir, f))
    : [fileOrDir];
  const out: object[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const obj = doc.toJS() as object | null;
      if (obj) out.push(obj);
    }
  }
  return out;
}

/** connectCluster starts the embedded API server or loads a kubeconfig / in-cluster config. */
export async function connectCluster(config: Config): Promise<ClusterConnection> {
  if (config.cluster.mode === 'embedded') {
    // A fresh token per process: even on loopback, the API server takes no anonymous requests.
    const example = config.example ? exampleManifests(config.example) : undefined;
    // TLS so that kubectl, which sends a token over HTTPS only, can use the kubeconfig npm start writes.
    const embedded = await startEmbeddedServer({
      objects: [...demoManifests(), ...referenceRulesCrdManifests(), ...(example ?? [])],
      bookmarkIntervalMs: 30_000,
      token: randomBytes(24).toString('hex'),
      tls: true,
    });
    const client = KubeClient.fromKubeconfig(embedded.kubeconfig(), { source: 'embedded' });
    return {
      client,
      embedded,
      ...(example ? { example } : {}),
      info: { mode: 'embedded', server: embedded.url, context: 'embedded', reachable: true },
      stop: () => embedded.stop(),
    };
  }
  const client =
    config.cluster.mode === 'kubeconfig'
      ? KubeClient.fromFile(config.cluster.path, { context: config.cluster.context })
      : KubeClient.inCluster({ pathPrefix: config.cluster.root });
  const d = client.describe();
  return {
    client,
    info: { mode: config.cluster.mode, server: d.server, context: d.context, reachable: false },
    stop: async () => {},
  };
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
    return {
      ...info,
      reachable: false,
      message: client.redact(`cannot reach ${info.server}: ${e instanceof Error ? e.message : String(e)}`),
    };
  }
}
