import 'server-only';
import { stringify } from 'yaml';
import { ReferenceDiagnosis, explain, kubectlCommands, type ReferenceExplanation } from '../../lib/diagnose';
import {
  formatKey,
  groupOfApiVersion,
  parseKey,
  type DeepReadonly,
  type KubeObject,
  type ObjectKey,
  type ObjectRef,
} from '../../lib/model';
import { ApiError } from '../http/errors';
import type { Runtime } from '../runtime';
import type { StoredTransition } from '../history/store';
import type { StateTransition } from '../state-history';
import { getObject, listEvents, resolveResource, resourceName, type CoreEvent, type ReadProblem } from './read';
import { presentable } from './redact';

/** OwnerReference is one of metadata.ownerReferences, with the owner's key (owners live in their dependent's namespace, or none). */
export interface OwnerReference {
  key: ObjectKey;
  apiVersion: string;
  kind: string;
  name: string;
  controller: boolean;
}

/** FixStep is what to do about one reference that holds the object up: the diagnosis's fix and commands to paste. */
export interface FixStep {
  referent: ObjectKey;
  fieldPath: string;
  state: string;
  message: string;
  fix: string;
  commands: string[];
}

/** ObjectDetails is the answer of GET /api/v1/objects?key=KEY. */
export interface ObjectDetails {
  key: ObjectKey;
  /** Where the YAML comes from: refwatch's shared cache, a GET of the cluster, or nowhere (not found, or unreadable). */
  source: 'cache' | 'cluster' | 'none';
  /** The object as YAML, without managedFields and without any Secret value. */
  yaml?: string;
  /** Why the object could not be read, when it could not. */
  objectProblem?: ReadProblem;
  ownerReferences: OwnerReference[];
  /** Its newest core Events, newest first. */
  events: CoreEvent[];
  eventsProblem?: ReadProblem;
  /** Its recent state transitions as a referrer or referent, newest first. */
  history: StateTransition[];
  /** What to do about each reference that holds it up; empty when nothing does. */
  fixes: FixStep[];
  /** Its stored timeline of the last day (docs/history.md), oldest first; absent with --history off. */
  timeline?: StoredTransition[];
  /** Why the stored timeline could not be read, when it could not. */
  timelineProblem?: string;
}

/**
 * objectDetails gathers what the details panel shows about one object: its
 * YAML (from the shared cache when refwatch watches the kind, else a GET),
 * its owners, Events, state history and fixes. A read the RBAC forbids is
 * reported with the rule to grant, not thrown. 404 when the cluster has no
 * such object and refwatch does not track it either.
 */
export async function objectDetails(rt: Runtime, rawKey: string, signal?: AbortSignal): Promise<ObjectDetails> {
  const parsed = parseKey(rawKey, 'key');
  if (!parsed.ok) throw new ApiError(400, parsed.error.code, parsed.error.message, 'key');
  const ref = parsed.value;
  const key = formatKey(ref);
  const [read, events, fixes] = await Promise.all([
    readObject(rt, ref, key, signal),
    listEvents(rt.connection.client, ref, signal),
    fixesFor(rt, key),
  ]);
  const history = rt.history.of(key);
  const stored = await storedTimeline(rt, key);
  if (!read.object && !read.problem && !tracked(rt, key)) {
    throw new ApiError(
      404,
      'NotFound',
      `${key} is not in the cluster and refwatch does not track it; GET /api/v1/snapshot lists the objects it tracks`,
      'key',
    );
  }
  const details: ObjectDetails = {
    key,
    source: read.source,
    ownerReferences: read.object ? ownersOf(read.object, ref.namespace) : [],
    events: events.events,
    history,
    fixes,
  };
  if (read.object) details.yaml = stringify(presentable(read.object));
  if (read.problem) details.objectProblem = read.problem;
  if (events.problem) details.eventsProblem = events.problem;
  if (stored.timeline) details.timeline = stored.timeline;
  if (stored.problem) details.timelineProblem = stored.problem;
  return details;
}

const TIMELINE_MS = 86_400_000;
const TIMELINE_ROWS = 1000;
const TIMELINE_SHOWN = 50;

/** storedTimeline reads the first TIMELINE_ROWS transitions of the last day of an object, and keeps their newest TIMELINE_SHOWN. */
async function storedTimeline(
  rt: Runtime,
  key: ObjectKey,
): Promise<{ timeline?: StoredTransition[]; problem?: string }> {
  if (!rt.store) return {};
  try {
    const page = await rt.store.recorder.timeline({
      object: key,
      since: Date.now() - TIMELINE_MS,
      limit: TIMELINE_ROWS,
    });
    return { timeline: page.transitions.slice(-TIMELINE_SHOWN) };
  } catch (e) {
    return { problem: e instanceof Error ? e.message : String(e) };
  }
}

interface CachedOrRead {
  source: ObjectDetails['source'];
  object?: DeepReadonly<KubeObject>;
  problem?: ReadProblem;
}

/**
 * readObject prefers the shared cache, which costs no request. A Secret is
 * read from the cluster all the same: its cache holds metadata only, and the
 * details show each key's size. So is any object cached as metadata only.
 */
async function readObject(rt: Runtime, ref: ObjectRef, key: ObjectKey, signal?: AbortSignal): Promise<CachedOrRead> {
  const sub = rt.manager.referenceControllers.inspectFor(key)?.subscription;
  const cached = sub?.isPrimed() ? sub.store.get(key) : undefined;
  if (cached && ref.kind !== 'Secret' && !metadataOnly(cached)) return { source: 'cache', object: cached };
  const read = await getObject(rt.connection.client, ref, signal);
  if (read.found) return { source: 'cluster', object: read.object };
  // Forbidden or failing: what the cache holds is better than nothing.
  if (cached && read.problem) return { source: 'cache', object: cached, problem: read.problem };
  return { source: 'none', ...(read.problem ? { problem: read.problem } : {}) };
}

function metadataOnly(obj: DeepReadonly<KubeObject>): boolean {
  return Object.keys(obj).every((k) => k === 'apiVersion' || k === 'kind' || k === 'metadata');
}

function ownersOf(obj: DeepReadonly<KubeObject>, namespace: string): OwnerReference[] {
  const raw = (obj.metadata as { ownerReferences?: unknown }).ownerReferences;
  if (!Array.isArray(raw)) return [];
  const out: OwnerReference[] = [];
  for (const o of raw as { apiVersion?: unknown; kind?: unknown; name?: unknown; controller?: unknown }[]) {
    if (typeof o?.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.name !== 'string') continue;
    out.push({
      key: formatKey({ group: groupOfApiVersion(o.apiVersion), kind: o.kind, namespace, name: o.name }),
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      controller: o.controller === true,
    });
  }
  return out;
}

/** tracked: refwatch knows the key as a referrer or a referent. */
function tracked(rt: Runtime, key: ObjectKey): boolean {
  if (rt.changelog.get('referent', key) || rt.manager.registry.referrersOf(key).length > 0) return true;
  return rt.manager.controllerNames().some((c) => rt.changelog.get('referrer', `${c}|${key}`) !== undefined);
}

/**
 * fixesFor is the diagnosis of every reference that holds the object up: as
 * a referrer, its own references that are not Ready; as a referent that is
 * not Ready, one reference to it. Each comes with kubectl commands.
 */
async function fixesFor(rt: Runtime, key: ObjectKey): Promise<FixStep[]> {
  const now = Date.now();
  const found: ReferenceExplanation[] = [];
  const asReferrer = explain(rt.manager, key, { now });
  if (asReferrer.ok) for (const c of asReferrer.value.controllers) found.push(...c.references);
  const referrer = rt.manager.registry.referrersOf(key)[0];
  const ref = referrer
    ? rt.manager.registry.referencesOf(referrer.controller, referrer.key).find((r) => r.referent === key)
    : undefined;
  if (ref) found.push(new ReferenceDiagnosis(rt.manager.referenceControllers, now).explain(ref));
  const seen = new Set<string>();
  const steps: FixStep[] = [];
  for (const e of found) {
    const id = `${e.referent}#${e.fieldPath}`;
    if (e.state === 'Ready' || seen.has(id)) continue;
    seen.add(id);
    const parsed = parseKey(e.referent);
    const info = parsed.ok ? await resolveResource(rt.connection.client, parsed.value) : undefined;
    const commands = info ? kubectlCommands(e, resourceName(info)) : kubectlCommands(e);
    steps.push({
      referent: e.referent,
      fieldPath: e.fieldPath,
      state: e.state,
      message: e.message,
      fix: e.fix,
      commands,
    });
  }
  return steps;
}
