import { parseArgs } from 'node:util';

/** ControllerArgs are the flags every node implementation of the peer benchmark takes, as the Go binary does. */
export interface ControllerArgs {
  /** The namespace that holds the Apps. */
  namespace: string;
  kubeconfig: string;
  /** Concurrent reconciles. */
  workers: number;
}

/** controllerArgs reads --namespace, --kubeconfig and --workers (default 8) from the command line. */
export function controllerArgs(): ControllerArgs {
  const { values } = parseArgs({
    options: {
      namespace: { type: 'string' },
      kubeconfig: { type: 'string' },
      workers: { type: 'string', default: '8' },
    },
  });
  const workers = Number(values.workers);
  if (!values.namespace) throw new Error('--namespace is required: the namespace that holds the Apps');
  if (!values.kubeconfig) throw new Error('--kubeconfig is required: the cluster to run against');
  if (!Number.isInteger(workers) || workers < 1)
    throw new Error(`--workers must be a whole number of at least 1, got ${values.workers}`);
  return { namespace: values.namespace, kubeconfig: values.kubeconfig, workers };
}
