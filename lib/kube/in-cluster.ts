import fs from 'node:fs';
import { RefwatchError } from '../model';
import type { ClusterConnection, Connection, UserCredentials } from './credentials';

/**
 * inClusterConnection reads a pod's service account (its token, CA and
 * namespace under pathPrefix/var/run/secrets) and the API server's address
 * from the environment kubelet sets.
 */
export function inClusterConnection(pathPrefix = ''): Connection {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new RefwatchError(
      'NotInCluster',
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset; pass a kubeconfig instead',
      {
        field: 'KUBERNETES_SERVICE_HOST',
      },
    );
  }
  const dir = `${pathPrefix}/var/run/secrets/kubernetes.io/serviceaccount`;
  const tokenFile = `${dir}/token`;
  let token: string;
  try {
    token = fs.readFileSync(tokenFile, 'utf8').trim();
  } catch {
    throw new RefwatchError(
      'NotInCluster',
      `service account token ${tokenFile} cannot be read: mount the service account token or pass a kubeconfig`,
      { field: 'serviceAccountToken' },
    );
  }
  let namespace: string | undefined;
  try {
    namespace = fs.readFileSync(`${dir}/namespace`, 'utf8').trim() || undefined;
  } catch {
    // No namespace file: the client has no default namespace, as with a kubeconfig context without one.
  }
  const cluster: ClusterConnection = {
    name: 'inCluster',
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    caFile: `${dir}/ca.crt`,
    skipTLSVerify: false,
  };
  const user: UserCredentials = { name: 'inClusterUser', tokenFile };
  return { cluster, user, context: 'inClusterContext', namespace, source: 'in-cluster', secrets: [token] };
}
