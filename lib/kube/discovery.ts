import { kindKey, splitApiVersion, type GroupKind } from '../model';
import type { KubeTransport } from './transport';
import { KubeRequestError, kindUnknown } from './errors';

/** ResourceInfo is how the API server serves a kind: the REST resource a Reflector lists and watches. */
export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name in URLs (`databases`). */
  resource: string;
  namespaced: boolean;
  verbs: string[];
}

/** The parts of discovery documents that refwatch reads. */
export interface APIResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}
export interface APIGroupList {
  groups: {
    name: string;
    versions: { groupVersion: string; version: string }[];
    preferredVersion?: { groupVersion: string; version: string };
  }[];
}

/**
 * resourceForKind picks kind's resource from one group version's resource
 * list. Subresources (`databases/status`) also name the kind and are skipped.
 */
export function resourceForKind(list: APIResourceList, gk: GroupKind): ResourceInfo | undefined {
  const { group, version } = splitApiVersion(list.groupVersion);
  if (group !== gk.group) return undefined;
  const r = list.resources.find((x) => x.kind === gk.kind && !x.name.includes('/'));
  if (!r) return undefined;
  return { group, version, kind: gk.kind, resource: r.name, namespaced: r.namespaced, verbs: r.verbs ?? [] };
}

/** versionsOf lists a group's versions, the preferred one first. */
export function versionsOf(groups: APIGroupList, group: string): string[] {
  const g = groups.groups.find((x) => x.name === group);
  if (!g) return [];
  const preferred = g.preferredVersion?.version;
  const all = g.versions.map((v) => v.version);
  return preferred ? [preferred, ...all.filter((v) => v !== preferred)] : all;
}

/** resourcePath is the collection URL of a resource, narrowed to a namespace for namespaced kinds. */
export function resourcePath(r: ResourceInfo, namespace?: string): string {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${namespace}/${r.resource}` : `${base}/${r.resource}`;
}

/**
 * Discovery maps a GroupKind to the resource that serves it, at the group's
 * preferred version. Answers are cached; a kind not in the cache is looked up
 * again on every resolve (a CRD may have been installed since), and
 * invalidate drops answers the server no longer honours (a watch got 404).
 * Concurrent resolves of one kind share one lookup.
 */
export class Discovery {
  private readonly cache = new Map<string, ResourceInfo>();
  private readonly inflight = new Map<string, Promise<ResourceInfo>>();
  private lookups = 0;

  constructor(private readonly client: Pick<KubeTransport, 'getJSON'>) {}

  /** resolve returns kind's resource, or rejects with a WatchFailure `KindUnknown`, or a KubeRequestError. */
  resolve(gk: GroupKind): Promise<ResourceInfo> {
    const key = kindKey(gk);
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(key);
    if (!p) {
      p = this.lookup(gk).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  /** invalidate forgets gk (or everything) so that the next resolve asks the server again. */
  invalidate(gk?: GroupKind): void {
    if (gk) this.cache.delete(kindKey(gk));
    else this.cache.clear();
  }

  /** Server round trips of lookups so far. */
  get requests(): number {
    return this.lookups;
  }

  private async lookup(gk: GroupKind): Promise<ResourceInfo> {
    const versions = gk.group === '' ? ['v1'] : versionsOf(await this.get<APIGroupList>('/apis'), gk.group);
    for (const v of versions) {
      const path = gk.group === '' ? `/api/${v}` : `/apis/${gk.group}/${v}`;
      let list: APIResourceList;
      try {
        list = await this.get<APIResourceList>(path);
      } catch (e) {
        // A group version that vanished between the two requests: try the next one.
        if (e instanceof KubeRequestError && e.status === 404) continue;
        throw e;
      }
      const found = resourceForKind(list, gk);
      if (found) {
        this.cache.set(kindKey(gk), found);
        return found;
      }
    }
    throw kindUnknown(gk);
  }

  private get<T>(path: string): Promise<T> {
    this.lookups++;
    return this.client.getJSON<T>(path);
  }
}
