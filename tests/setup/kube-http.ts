export {
  kubeconfigFor,
  kubeRequest,
  type KubeconfigFile,
  type KubeEndpoint,
  type KubeResponse,
} from '../../lib/testing/kube-http';
