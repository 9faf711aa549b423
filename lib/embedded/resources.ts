import { type GroupResource, groupResourceString } from './status';

/** How an object's metadata.name is validated; each maps to a kube-apiserver validator. */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'pathSegment';

/**
 * ResourceType is one served resource: a group and plural, the versions it is
 * served at (preferred first) and the storage semantics its strategy has.
 */
export interface ResourceType extends GroupResource {
  versions: string[];
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** `/status` is a subresource: main writes keep status, status writes keep everything else. */
  statusSubresource: boolean;
  /** metadata.generation is kept and bumps on changes outside metadata (and status, with the subresource). */
  generation: boolean;
  /** DELETE answers the deleted object rather than a Success Status (ReturnDeletedObject in the registry). */
  returnsDeletedObject: boolean;
  nameRule: NameRule;
  /** Built-in kinds keep kind/apiVersion off list items, as typed lists encode; custom resources keep them. */
  builtin: boolean;
  /** The CRD that defines this resource, if any. */
  crd?: string;
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const STATUS_VERBS = ['get', 'patch', 'update'];

export const CRD_GROUP = 'apiextensions.k8s.io';

interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  generation?: boolean;
  returnsDeletedObject?: boolean;
  nameRule?: NameRule;
}

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';

const BUILTINS: BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    status: true,
    nameRule: 'label',
  },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  {
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
    nameRule: 'dns1035',
  },
  {
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    returnsDeletedObject: true,
  },
  {
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
    returnsDeletedObject: true,
  },
  {
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    status: true,
  },
  { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], status: true },
  {
    group: '',
    version: 'v1',
    resource: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    status: true,
  },
  {
    group: ADMISSION,
    version: 'v1',
    resource: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
  },
  {
    group: ADMISSION,
    version: 'v1',
    resource: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
  },
  {
    group: 'apiregistration.k8s.io',
    version: 'v1',
    resource: 'apiservices',
    kind: 'APIService',
    namespaced: false,
    categories: ['api-extensions'],
    status: true,
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
    generation: true,
  },
  ...(['StatefulSet', 'DaemonSet', 'ReplicaSet'] as const).map((kind): BuiltinSpec => ({
    group: 'apps',
    version: 'v1',
    resource: `${kind.toLowerCase()}s`,
    kind,
    namespaced: true,
    shortNames: [{ StatefulSet: 'sts', DaemonSet: 'ds', ReplicaSet: 'rs' }[kind]],
    categories: ['all'],
    status: true,
    generation: true,
  })),
  {
    group: 'batch',
    version: 'v1',
    resource: 'jobs',
    kind: 'Job',
    namespaced: true,
    categories: ['all'],
    status: true,
    generation: true,
  },
  {
    group: 'batch',
    version: 'v1',
    resource: 'cronjobs',
    kind: 'CronJob',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    status: true,
    generation: true,
  },
  {
    group: 'policy',
    version: 'v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    status: true,
    generation: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
    shortNames: ['netpol'],
    generation: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingressclasses',
    kind: 'IngressClass',
    namespaced: false,
    generation: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    kind: 'Ingress',
    namespaced: true,
    shortNames: ['ing'],
    status: true,
    generation: true,
  },
  { group: RBAC, version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, nameRule: 'pathSegment' },
  {
    group: RBAC,
    version: 'v1',
    resource: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
    nameRule: 'pathSegment',
  },
  {
    group: RBAC,
    version: 'v1',
    resource: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
    nameRule: 'pathSegment',
  },
  {
    group: RBAC,
    version: 'v1',
    resource: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
    nameRule: 'pathSegment',
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'storageclasses',
    kind: 'StorageClass',
    namespaced: false,
    shortNames: ['sc'],
    returnsDeletedObject: true,
  },
  {
    group: 'scheduling.k8s.io',
    version: 'v1',
    resource: 'priorityclasses',
    kind: 'PriorityClass',
    namespaced: false,
    shortNames: ['pc'],
  },
  { group: 'node.k8s.io', version: 'v1', resource: 'runtimeclasses', kind: 'RuntimeClass', namespaced: false },
  {
    group: 'autoscaling',
    version: 'v2',
    resource: 'horizontalpodautoscalers',
    kind: 'HorizontalPodAutoscaler',
    namespaced: true,
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    generation: true,
  },
  {
    group: CRD_GROUP,
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    generation: true,
    returnsDeletedObject: true,
  },
  // After apiextensions, as kube-apiserver orders its groups.
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
];

function builtin(s: BuiltinSpec): ResourceType {
  return {
    group: s.group,
    resource: s.resource,
    versions: [s.version],
    kind: s.kind,
    listKind: `${s.kind}List`,
    singular: s.kind.toLowerCase(),
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    statusSubresource: s.status ?? false,
    generation: s.generation ?? false,
    returnsDeletedObject: s.returnsDeletedObject ?? false,
    nameRule: s.nameRule ?? 'subdomain',
    builtin: true,
  };
}

/** grKey is the map key of a resource: `configmaps`, `databases.demo.refwatch.dev` (GroupResource.String()). */
export function grKey(gr: GroupResource): string {
  return groupResourceString(gr);
}

/**
 * ResourceTable holds every served resource. Built-in resources are fixed;
 * CRDs add and remove theirs, and discovery reads the table as it is now.
 */
export class ResourceTable {
  private readonly byKey = new Map<string, ResourceType>();

  constructor() {
    for (const s of BUILTINS) this.add(builtin(s));
  }

  add(rt: ResourceType): void {
    this.byKey.set(grKey(rt), rt);
  }

  remove(gr: GroupResource): ResourceType | undefined {
    const rt = this.byKey.get(grKey(gr));
    if (rt && !rt.builtin) this.byKey.delete(grKey(gr));
    return rt;
  }

  get(gr: GroupResource): ResourceType | undefined {
    return this.byKey.get(grKey(gr));
  }

  /** lookup finds the resource served at group/version under this plural. */
  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    const rt = this.byKey.get(grKey({ group, resource }));
    return rt && rt.versions.includes(version) ? rt : undefined;
  }

  byKind(group: string, kind: string): ResourceType | undefined {
    for (const rt of this.byKey.values()) if (rt.group === group && rt.kind === kind) return rt;
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.byKey.values()];
  }

  /** servesGroupVersion reports whether any resource is served at group/version. */
  servesGroupVersion(group: string, version: string): boolean {
    for (const rt of this.byKey.values()) if (rt.group === group && rt.versions.includes(version)) return true;
    return false;
  }

  /** groupVersions lists each named group with its versions, preferred first. */
  groups(): { name: string; versions: string[] }[] {
    const byGroup = new Map<string, Set<string>>();
    for (const rt of this.byKey.values()) {
      if (rt.group === '') continue;
      const set = byGroup.get(rt.group) ?? new Set<string>();
      for (const v of rt.versions) set.add(v);
      byGroup.set(rt.group, set);
    }
    const builtinOrder = [...new Set(BUILTINS.map((b) => b.group).filter((g) => g !== ''))];
    const names = [...byGroup.keys()].sort((a, b) => {
      const ia = builtinOrder.indexOf(a);
      const ib = builtinOrder.indexOf(b);
      if (ia >= 0 || ib >= 0) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
      return a.localeCompare(b);
    });
    return names.map((name) => ({ name, versions: sortVersions([...byGroup.get(name)!]) }));
  }
}

// Kubernetes version priority (apimachinery/pkg/version.CompareKubeAwareVersionStrings):
// GA before beta before alpha, higher numbers first; other strings last, alphabetically.
const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a.localeCompare(b);
  }
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2);
  if (rank(ma) !== rank(mb)) return rank(ma) - rank(mb);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

export function sortVersions(versions: string[]): string[] {
  return [...versions].sort(compareKubeVersions);
}

/** Discovery documents, shaped as kube-apiserver serves them. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupVersion(group: string, version: string): { groupVersion: string; version: string } {
  return { groupVersion: `${group}/${version}`, version };
}

export function apiGroup(g: { name: string; versions: string[] }): object {
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: g.name,
    versions: g.versions.map((v) => groupVersion(g.name, v)),
    preferredVersion: groupVersion(g.name, g.versions[0]!),
  };
}

export function apiGroupList(table: ResourceTable): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    // authorization.k8s.io serves the self reviews only (reviews.ts), outside the table of stored resources.
    groups: [...table.groups(), { name: 'authorization.k8s.io', versions: ['v1'] }].map((g) => {
      const { kind: _kind, apiVersion: _apiVersion, ...rest } = apiGroup(g) as Record<string, unknown>;
      return rest;
    }),
  };
}

export function apiResourceList(table: ResourceTable, group: string, version: string): object {
  const resources: object[] = [];
  const served = table
    .all()
    .filter((rt) => rt.group === group && rt.versions.includes(version))
    .sort((a, b) => a.resource.localeCompare(b.resource));
  for (const rt of served) {
    const entry: Record<string, unknown> = {
      name: rt.resource,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: ALL_VERBS,
    };
    if (rt.shortNames.length > 0) entry.shortNames = rt.shortNames;
    if (rt.categories.length > 0) entry.categories = rt.categories;
    resources.push(entry);
    if (rt.statusSubresource) {
      resources.push({
        name: `${rt.resource}/status`,
        singularName: '',
        namespaced: rt.namespaced,
        kind: rt.kind,
        verbs: STATUS_VERBS,
      });
    }
  }
  if (group === '') return { kind: 'APIResourceList', groupVersion: version, resources };
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}
