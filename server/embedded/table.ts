import type { ResourceType } from './resources';
import type { StoredObject } from './store';

/**
 * Server-side printing for kubectl: a meta.k8s.io Table with the default
 * columns (Name, Created At), as kube-apiserver's default table convertor
 * prints resources that declare no columns of their own.
 */

const COLUMNS = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
    priority: 0,
  },
  {
    name: 'Created At',
    type: 'date',
    format: '',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    priority: 0,
  },
];

export function toTable(_rt: ResourceType, items: StoredObject[], resourceVersion: string, continueToken?: string): object {
  const metadata: Record<string, unknown> = { resourceVersion };
  if (continueToken) metadata.continue = continueToken;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: COLUMNS,
    rows: items.map((o) => ({
      cells: [o.metadata.name, o.metadata.creationTimestamp],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
