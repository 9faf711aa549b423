import { fieldManagerConflict, type ApiError } from '../status';
import { now } from '../strategy';
import { FieldSet, fromFieldsV1, pathString, startsWith, toFieldsV1, type Path } from './fieldset';
import { compare, fieldSetOf, merge, removePaths } from './structured';
import type { TypeRef } from './schema';

/**
 * Field ownership in metadata.managedFields, as kube-apiserver's field
 * manager keeps it: an update (create, PUT, any patch) makes its manager own
 * what it changed and takes those fields from everyone else; an apply makes
 * its manager own exactly the fields of its configuration, answers 409 when
 * that changes a field another manager owns (unless forced), and removes the
 * fields it owned before, left out now, and owned by nobody else.
 */

export type Operation = 'Apply' | 'Update';

/** ManagedFieldsEntry is one metadata.managedFields entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: object;
  subresource?: string;
}

interface Owner {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource: string;
  time?: string;
  set: FieldSet;
}

/** The manager named for fields an object had before its first apply, when it carried no managedFields. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

// Appliers are one manager whatever apiVersion they apply with; updaters are one per apiVersion.
const ownerId = (o: Pick<Owner, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string =>
  JSON.stringify([o.manager, o.operation, o.operation === 'Apply' ? '' : o.apiVersion, o.subresource]);

/** The fields no manager owns: type and identity metadata the server sets. */
const METADATA_IGNORED = new Set(
  ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'resourceVersion'].map(
    (f) => `f:${f}`,
  ),
);

function ignored(p: Path): boolean {
  if (p.length === 1) return p[0] === 'f:apiVersion' || p[0] === 'f:kind' || p[0] === 'f:metadata';
  if (p[0] !== 'f:metadata') return false;
  return p[1] === 'f:managedFields' || (p.length === 2 && METADATA_IGNORED.has(p[1]!));
}

/** What a write may own: outside status on the main resource when status is a subresource, only status on /status. */
function ownable(statusSubresource: boolean, subresource: string): (p: Path) => boolean {
  return (p) => {
    if (ignored(p)) return false;
    if (!statusSubresource) return true;
    const inStatus = startsWith(p, ['f:status']);
    return subresource === 'status' ? inStatus : !inStatus;
  };
}

function owned(set: FieldSet, filter: (p: Path) => boolean): FieldSet {
  return set.without((p) => !filter(p));
}

function ownersOf(metadata: Record<string, unknown> | undefined): Map<string, Owner> {
  const owners = new Map<string, Owner>();
  const entries = metadata?.managedFields;
  if (!Array.isArray(entries)) return owners;
  for (const e of entries as Partial<ManagedFieldsEntry>[]) {
    if (typeof e?.manager !== 'string' || (e.operation !== 'Apply' && e.operation !== 'Update')) continue;
    const o: Owner = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: String(e.apiVersion ?? ''),
      subresource: String(e.subresource ?? ''),
      ...(typeof e.time === 'string' ? { time: e.time } : {}),
      set: fromFieldsV1(e.fieldsV1),
    };
    owners.set(ownerId(o), o);
  }
  return owners;
}

/** entriesOf writes owners back, sorted as kube-apiserver sorts them; an owner of nothing is dropped. */
function entriesOf(owners: Map<string, Owner>): ManagedFieldsEntry[] {
  return [...owners.values()]
    .filter((o) => !o.set.empty)
    .sort(
      (a, b) =>
        a.operation.localeCompare(b.operation) ||
        (a.time ?? '').localeCompare(b.time ?? '') ||
        a.manager.localeCompare(b.manager) ||
        a.apiVersion.localeCompare(b.apiVersion) ||
        a.subresource.localeCompare(b.subresource),
    )
    .map((o) => ({
      manager: o.manager,
      operation: o.operation,
      apiVersion: o.apiVersion,
      ...(o.time ? { time: o.time } : {}),
      fieldsType: 'FieldsV1' as const,
      fieldsV1: toFieldsV1(o.set),
      ...(o.subresource ? { subresource: o.subresource } : {}),
    }));
}

/** setOwner records an owner's new set; its time moves only when the set changed, so a no-op write stays one. */
function setOwner(owners: Map<string, Owner>, o: Omit<Owner, 'time'>): void {
  const before = owners.get(ownerId(o));
  const time = before && before.set.equals(o.set) ? before.time : now();
  owners.set(ownerId(o), { ...o, ...(time ? { time } : {}) });
}

/** The object a write sees: its fields without metadata.managedFields. */
function withoutManagedFields(obj: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!obj) return {};
  const md = obj.metadata as Record<string, unknown> | undefined;
  if (!md || !('managedFields' in md)) return obj;
  const { managedFields: _m, ...metadata } = md;
  return { ...obj, metadata };
}

/** WriteContext is who writes, and where. */
export interface WriteContext {
  type: TypeRef;
  manager: string;
  apiVersion: string;
  subresource: '' | 'status';
  statusSubresource: boolean;
}

/**
 * updateManagedFields is the managedFields after an update from old (absent for a create) to next: the manager
 * gains what changed, every other manager loses it. Entries the request itself sets (given, non-empty, not on a
 * subresource) replace the stored ones first, as kube-apiserver lets a client rewrite ownership (kubectl does,
 * moving a client-side applier's fields to its server-side one).
 */
export function updateManagedFields(
  w: WriteContext,
  old: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  given?: unknown,
): ManagedFieldsEntry[] {
  const filter = ownable(w.statusSubresource, w.subresource);
  const requested = w.subresource === '' ? ownersOf({ managedFields: given }) : new Map<string, Owner>();
  const owners = requested.size > 0 ? requested : ownersOf(old?.metadata as Record<string, unknown> | undefined);
  const c = compare(withoutManagedFields(old), withoutManagedFields(next), w.type);
  const changed = owned(c.modified.union(c.added), filter);
  for (const o of owners.values()) o.set = o.set.difference(changed).difference(c.removed);
  const me = { manager: w.manager, operation: 'Update' as const, apiVersion: w.apiVersion, subresource: w.subresource };
  const mine = owners.get(ownerId(me))?.set ?? new FieldSet();
  setOwner(owners, { ...me, set: mine.difference(c.removed).union(changed) });
  return entriesOf(owners);
}

/** ApplyResult is the object an apply makes and its managedFields. */
export interface ApplyResult {
  object: Record<string, unknown>;
  managedFields: ManagedFieldsEntry[];
}

/**
 * applyConfiguration merges config into live (absent: the apply creates it), or throws the 409 kube-apiserver
 * answers when a field another manager owns would change and force is off.
 */
export function applyConfiguration(
  w: WriteContext,
  live: Record<string, unknown> | undefined,
  config: Record<string, unknown>,
  force: boolean,
): ApplyResult {
  const filter = ownable(w.statusSubresource, w.subresource);
  const liveObject = withoutManagedFields(live);
  const configObject = withoutManagedFields(config);
  const owners = ownersOf(live?.metadata as Record<string, unknown> | undefined);
  if (live && owners.size === 0) {
    // An object nobody has owned yet: what it holds belongs to one updater, so an apply can conflict with it.
    const set = owned(fieldSetOf(liveObject, w.type), filter);
    owners.set(
      ownerId({ manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: w.apiVersion, subresource: '' }),
      {
        manager: BEFORE_FIRST_APPLY,
        operation: 'Update',
        apiVersion: w.apiVersion,
        subresource: '',
        set,
      },
    );
  }
  const me = { manager: w.manager, operation: 'Apply' as const, apiVersion: w.apiVersion, subresource: w.subresource };
  const id = ownerId(me);
  const lastSet = owners.get(id)?.set;
  const set = owned(fieldSetOf(configObject, w.type), filter);
  let object = merge(liveObject, configObject, w.type) as Record<string, unknown>;
  const others = [...owners.entries()].filter(([k]) => k !== id).map(([, o]) => o);
  if (lastSet) {
    const kept = others.reduce((acc, o) => acc.union(o.set), set);
    object = removePaths(object, lastSet.difference(kept), kept, w.type);
  }

  const c = compare(liveObject, object, w.type);
  const changed = c.modified.union(c.added);
  const conflicts = others.flatMap((o) =>
    o.set
      .intersection(changed)
      .list()
      .map((path) => ({ owner: o, path })),
  );
  if (conflicts.length > 0 && !force) {
    const allowed = w.manager === KUBECTL ? fromLastApplied(w, liveObject) : new FieldSet();
    const left = conflicts.filter((c) => !allowed.has(c.path));
    if (left.length > 0) throw applyConflict(left);
  }
  for (const o of others) o.set = o.set.difference(changed).difference(c.removed);
  setOwner(owners, { ...me, set });
  if (w.manager === KUBECTL && lastAppliedOf(liveObject) !== undefined) object = withLastApplied(object, configObject);
  return { object, managedFields: entriesOf(owners) };
}

/*
 * kubectl's own server-side apply takes over from its client-side apply, as kube-apiserver lets it: conflicts on
 * fields the last-applied-configuration annotation sets to their live values are forced, and the annotation
 * follows the applied configuration.
 */
const KUBECTL = 'kubectl';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function lastAppliedOf(obj: Record<string, unknown>): string | undefined {
  const annotations = (obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  const v = annotations?.[LAST_APPLIED];
  return typeof v === 'string' ? v : undefined;
}

function fromLastApplied(w: WriteContext, live: Record<string, unknown>): FieldSet {
  const text = lastAppliedOf(live);
  if (text === undefined) return new FieldSet();
  let applied: unknown;
  try {
    applied = JSON.parse(text);
  } catch {
    return new FieldSet();
  }
  const c = compare(applied, live, w.type);
  return fieldSetOf(applied, w.type).difference(c.modified).difference(c.removed);
}

function withLastApplied(object: Record<string, unknown>, config: Record<string, unknown>): Record<string, unknown> {
  const md = (config.metadata ?? {}) as Record<string, unknown>;
  const { [LAST_APPLIED]: _previous, ...annotations } = (md.annotations ?? {}) as Record<string, unknown>;
  const { annotations: _a, ...rest } = md;
  const applied = { ...config, metadata: Object.keys(annotations).length > 0 ? { ...rest, annotations } : rest };
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    ...object,
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations as object | undefined), [LAST_APPLIED]: JSON.stringify(applied) },
    },
  };
}

/** managerName is how conflict messages name a manager: an updater with its apiVersion, as kube-apiserver prints it. */
function managerName(o: Owner): string {
  let name = JSON.stringify(o.manager);
  if (o.subresource) name += ` with subresource ${JSON.stringify(o.subresource)}`;
  return o.operation === 'Update' ? `${name} using ${o.apiVersion}` : name;
}

/** applyConflict is kube-apiserver's 409: one cause per conflicting field, naming its manager. */
export function applyConflict(conflicts: { owner: Owner; path: Path }[]): ApiError {
  let message: string;
  if (conflicts.length === 1) {
    const [{ owner, path }] = conflicts as [{ owner: Owner; path: Path }];
    message = `Apply failed with 1 conflict: conflict with ${managerName(owner)}: ${pathString(path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const { owner, path } of conflicts) {
      const name = managerName(owner);
      byManager.set(name, [...(byManager.get(name) ?? []), pathString(path)]);
    }
    const lines = [...byManager.keys()]
      .sort()
      .flatMap((name) => [`conflicts with ${name}:`, ...byManager.get(name)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return fieldManagerConflict(
    message,
    conflicts.map(({ owner, path }) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${managerName(owner)}`,
      field: pathString(path),
    })),
  );
}
