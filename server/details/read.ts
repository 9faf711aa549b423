import 'server-only';
import { rbacRule } from '../../lib/diagnose';
import { Discovery, resourcePath, type KubeClient, type ResourceInfo } from '../../lib/kube';
import { formatKey, parseApiVersion, type DeepReadonly, type KubeObject, type ObjectRef } from '../../lib/model';

/** ReadProblem is why a read of the cluster failed, in words a person can act on; rule is the RBAC rule to grant when Forbidden. */
export interface ReadProblem {
  reason: 'Forbidden' | 'KindUnknown' | 'Failed';
  message: string;
  rule?: string;
}

/** CoreEvent is one core/v1 Event about an object, as `kubectl describe` lists them. */
export interface CoreEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** When it was last seen (epoch ms). */
  at: number;
  source: string;
}

/** How many Events the details show: the newest ones. */
export const EVENTS_SHOWN = 20;
/** Events fetched per object at most, before sorting by time; an object with more shows the newest of these. */
const EVENTS_FETCHED = 500;

const discoveries = new WeakMap<KubeClient, Discovery>();

/** discoveryFor shares one Discovery per client, so repeated reads cost no discovery round trips. */
function discoveryFor(client: KubeClient): Discovery {
  let d = discoveries.get(client);
  if (!d) discoveries.set(client, (d = new Discovery(client)));
  return d;
}

/** resourceName is the `resource.group` kubectl takes (databases.demo.refwatch.dev, secrets). */
export function resourceName(info: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return info.group === '' ? info.resource : `${info.resource}.${info.group}`;
}

/** resolveResource is the REST resource serving a kind, or undefined when the cluster serves none (or cannot say). */
export async function resolveResource(
  client: KubeClient,
  ref: Pick<ObjectRef, 'group' | 'kind'>,
): Promise<ResourceInfo | undefined> {
  try {
    return await discoveryFor(client).resolve({ group: ref.group, kind: ref.kind });
  } catch {
    return undefined;
  }
}

export type ObjectRead = { found: true; object: DeepReadonly<KubeObject> } | { found: false; problem?: ReadProblem };

/** getObject GETs one object through the cluster client; a 404 is `found: false` without a problem. */
export async function getObject(client: KubeClient, ref: ObjectRef, signal?: AbortSignal): Promise<ObjectRead> {
  let info: ResourceInfo;
  try {
    info = await discoveryFor(client).resolve({ group: ref.group, kind: ref.kind });
  } catch (e) {
    if (errorName(e) === 'WatchFailure')
      return { found: false, problem: { reason: 'KindUnknown', message: (e as Error).message } };
    return { found: false, problem: failed('discovery', e) };
  }
  try {
    const object = await client.getJSON<KubeObject>(
      `${resourcePath(info, ref.namespace)}/${encodeURIComponent(ref.name)}`,
      {},
      signal,
    );
    return { found: true, object };
  } catch (e) {
    if (statusOf(e) === 404) return { found: false };
    if (statusOf(e) === 403)
      return {
        found: false,
        problem: forbidden('get', info, ref.namespace, `refwatch may not read ${formatKey(ref)}`),
      };
    return { found: false, problem: failed(`reading ${formatKey(ref)}`, e) };
  }
}

export type EventsRead = { events: CoreEvent[]; problem?: undefined } | { events: []; problem: ReadProblem };

/**
 * listEvents lists the newest core/v1 Events whose involvedObject is ref,
 * newest first. Events of a cluster-scoped object may live in any namespace.
 */
export async function listEvents(client: KubeClient, ref: ObjectRef, signal?: AbortSignal): Promise<EventsRead> {
  const path = ref.namespace ? `/api/v1/namespaces/${ref.namespace}/events` : '/api/v1/events';
  const fieldSelector = [
    `involvedObject.kind=${ref.kind}`,
    `involvedObject.name=${ref.name}`,
    ...(ref.namespace ? [`involvedObject.namespace=${ref.namespace}`] : []),
  ].join(',');
  let list: { items?: RawEvent[] };
  try {
    list = await client.getJSON<{ items?: RawEvent[] }>(path, { fieldSelector, limit: EVENTS_FETCHED }, signal);
  } catch (e) {
    if (statusOf(e) === 403) {
      return {
        events: [],
        problem: forbidden('list', { group: '', resource: 'events' }, ref.namespace, 'refwatch may not list Events'),
      };
    }
    return { events: [], problem: failed('listing Events', e) };
  }
  const events = (list.items ?? [])
    .filter((ev) => sameGroup(ev.involvedObject?.apiVersion, ref.group))
    .map(toCoreEvent)
    .sort((a, b) => b.at - a.at);
  return { events: events.slice(0, EVENTS_SHOWN) };
}

interface RawEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  series?: { count?: number; lastObservedTime?: string };
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  involvedObject?: { apiVersion?: string };
  metadata?: { creationTimestamp?: string };
}

function toCoreEvent(ev: RawEvent): CoreEvent {
  const when =
    ev.series?.lastObservedTime ??
    ev.lastTimestamp ??
    ev.eventTime ??
    ev.firstTimestamp ??
    ev.metadata?.creationTimestamp;
  const at = when ? Date.parse(when) : NaN;
  return {
    type: ev.type ?? 'Normal',
    reason: ev.reason ?? '',
    message: ev.message ?? '',
    count: ev.series?.count ?? ev.count ?? 1,
    at: Number.isNaN(at) ? 0 : at,
    source: ev.reportingComponent || ev.source?.component || '',
  };
}

/** sameGroup: an Event without an apiVersion on its subject matches any group, as kubectl describe does. */
function sameGroup(apiVersion: string | undefined, group: string): boolean {
  if (!apiVersion) return true;
  const gv = parseApiVersion(apiVersion);
  return gv.ok && gv.value.group === group;
}

/*
 * Errors are told apart by name, not instanceof: Next's server bundle may
 * load lib/kube twice, and a KubeRequestError of one copy is no instance of
 * the other's class.
 */
function errorName(e: unknown): string | undefined {
  return e instanceof Error ? e.name : undefined;
}

/** statusOf is the HTTP status of a KubeRequestError, or undefined. */
function statusOf(e: unknown): number | undefined {
  return errorName(e) === 'KubeRequestError' ? (e as { status?: number }).status : undefined;
}

function forbidden(
  verb: string,
  r: Pick<ResourceInfo, 'group' | 'resource'>,
  namespace: string,
  what: string,
): ReadProblem {
  const rule = rbacRule({ apiGroup: r.group, resource: r.resource, verbs: [verb] });
  const where = namespace ? `a Role in namespace ${namespace} or a ClusterRole` : 'a ClusterRole';
  return { reason: 'Forbidden', message: `${what}: grant its service account ${where} with the rule ${rule}`, rule };
}

function failed(what: string, e: unknown): ReadProblem {
  // KubeClient's messages carry no credential: it redacts them.
  return { reason: 'Failed', message: `${what} failed: ${e instanceof Error ? e.message : String(e)}` };
}
