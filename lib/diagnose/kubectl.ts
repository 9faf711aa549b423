import { kindOfKey, nameOfKey, namespaceOfKey, parseKindKey, type ObjectKey } from '../model';
import { resourceOf, type ReferenceState } from './reference-diagnosis';

/** The part of a reference's diagnosis a command is made from. */
export interface CommandSubject {
  referent: ObjectKey;
  state: ReferenceState;
}

/**
 * kubectlCommands turns a reference's diagnosis into kubectl commands a
 * person can paste: create a missing Secret, ConfigMap or ServiceAccount, look
 * at a referent that is not ready, find a CRD that is not installed, check a
 * permission. resource is the referent's `resource.group` as discovery knows
 * it; by default it is guessed from the kind, as kubectl does. Empty when
 * nothing a command could do applies (Ready, or a cache still priming).
 */
export function kubectlCommands(subject: CommandSubject, resource = resourceOf(kindOfKey(subject.referent))): string[] {
  const kind = kindOfKey(subject.referent);
  const namespace = namespaceOfKey(subject.referent);
  const name = nameOfKey(subject.referent);
  const ns = namespace ? `-n ${namespace} ` : '';
  switch (subject.state) {
    case 'NotFound':
      switch (kind) {
        case 'Secret':
          return [`kubectl ${ns}create secret generic ${name} --from-literal=KEY=VALUE`];
        case 'ConfigMap':
          return [`kubectl ${ns}create configmap ${name} --from-literal=KEY=VALUE`];
        case 'ServiceAccount':
          return [`kubectl ${ns}create serviceaccount ${name}`];
        case 'Namespace':
          return [`kubectl create namespace ${name}`];
        default:
          return [`kubectl ${ns}get ${resource}`];
      }
    case 'NotReady':
      return [`kubectl ${ns}describe ${resource} ${name}`, `kubectl ${ns}get ${resource} ${name} -o yaml`];
    case 'KindUnknown': {
      const parsed = parseKindKey(kind);
      const group = parsed.ok ? parsed.value.group : '';
      return group === ''
        ? ['kubectl api-resources --api-group=""']
        : [`kubectl get crd ${resource}`, `kubectl api-resources --api-group=${group}`];
    }
    case 'Forbidden':
      return [`kubectl auth can-i watch ${resource} ${namespace ? `-n ${namespace}` : '-A'}`];
    case 'WatchError':
      return [`kubectl get ${resource} ${namespace ? `-n ${namespace}` : '-A'} --request-timeout=10s`];
    case 'RefNotPermitted':
      return [`kubectl ${ns}get referencegrants.gateway.networking.k8s.io -o yaml`];
    case 'Ready':
    case 'NotPrimed':
      return [];
  }
}
