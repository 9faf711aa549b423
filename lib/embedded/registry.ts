import { splitApiVersion } from '../model';
import { establishedStatus, resourceTypeOf, terminatingStatus, validateCrd, withCrdDefaults } from './crds';
import {
  applyConfiguration,
  updateManagedFields,
  type ManagedFieldsEntry,
  type WriteContext,
} from './apply/field-manager';
import { typeOf } from './apply/schema';
import { jsonPatch, mergePatch } from './patch';
import { strategicMergePatch, strategicSchemaFor } from './strategic-merge';
import { CRD_GROUP, grKey, type ResourceTable, type ResourceType } from './resources';
import { isEmptySelector, matches, type Selector } from './selectors';
import { sortedEntries, type ObjectStore, type StoredObject } from './store';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  expired,
  fieldForbidden,
  fieldNotSupported,
  invalid,
  notFound,
  STALE_OBJECT,
  success,
  tooLargeResourceVersion,
  unsupportedMediaType,
  type FieldError,
  type Status,
} from './status';
import {
  apiVersionFor,
  finalizersOf,
  jsonEqual,
  now,
  prepareCreate,
  prepareUpdate,
  type RequestTarget,
  type Subresource,
} from './strategy';
import type { WatchHub } from './watch';

const NAMESPACES = 'namespaces';
export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

/** The finalizers kube-apiserver adds for a propagation policy, which the garbage collector removes. */
export const GC_FINALIZERS: Partial<Record<PropagationPolicy, string>> = {
  Foreground: 'foregroundDeletion',
  Orphan: 'orphan',
};

const CRDS = grKey({ group: CRD_GROUP, resource: 'customresourcedefinitions' });

/** WriteOptions name the field manager of a write; without one (the server's own writes) managedFields stay as they are. */
/** ApplyOptions are server-side apply's: the field manager, and whether to take fields other managers own. */
export interface ApplyOptions extends WriteOptions {
  manager: string;
  force: boolean;
}

/** managedFieldsOf is what a request body sets metadata.managedFields to. */
function managedFieldsOf(body: Record<string, unknown>): unknown {
  const md = body.metadata;
  return typeof md === 'object' && md !== null ? (md as Record<string, unknown>).managedFields : undefined;
}

/** ListOptions are the list query parameters after parsing. */
export interface ListOptions {
  selector: Selector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start } satisfies ContinueToken)).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`continue key is not valid: ${token}`);
  }
  const t = parsed as Partial<ContinueToken>;
  if (t.v !== 'meta.k8s.io/v1')
    throw badRequest(`continue key is not valid: server does not recognize this encoded version ${String(t.v)}`);
  if (typeof t.rv !== 'number' || t.rv === 0)
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.start !== 'string' || t.start === '')
    throw badRequest('continue key is not valid: encoded start key empty (version meta.k8s.io/v1)');
  return t as ContinueToken;
}

/** listOptionsInvalid is the 422 kube-apiserver answers for contradictory list or watch options. */
export function listOptionsInvalid(errs: FieldError[]): ApiError {
  return invalid('meta.k8s.io', 'ListOptions', '', errs);
}

/** parseResourceVersion reads a resourceVersion parameter; anything but a non-negative integer is 400. */
export function parseResourceVersion(rv: string): number {
  if (!/^\d+$/.test(rv))
    throw badRequest(`invalid resource version: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`);
  return Number(rv);
}

/** AdmissionCheck returns the warnings for an object being created or updated; it must not throw. */
export type AdmissionCheck = (operation: 'CREATE' | 'UPDATE', object: Record<string, unknown>) => string[];

/** WriteOptions is what a client's write asks beyond the write itself. */
export interface WriteOptions {
  /** Receives the admission check's warnings; the server's own writes (start manifests, the garbage collector) pass none and are not checked. */
  warnings?: string[];
  /** The field manager a create, update or patch is recorded under; the server's own writes have none. */
  manager?: string;
}

/**
 * Registry is the REST storage of every resource: the verbs, the namespace
 * and CRD lifecycles, and finalizers, over one ObjectStore.
 */
export class Registry {
  /**
   * The admission check every client write runs, on the object as it would be stored (a patch already applied,
   * defaults set), before it is stored: kube-apiserver's validating admission step. Undefined: no check.
   */
  admission: AdmissionCheck | undefined;

  constructor(
    readonly table: ResourceTable,
    readonly store: ObjectStore,
    private readonly hub: WatchHub,
  ) {}

  keyOf(rt: ResourceType, namespace: string, name: string): string {
    return rt.namespaced ? `${namespace}/${name}` : name;
  }

  /** present rewrites an object to the version it is read at (CRD conversion strategy None). */
  present(t: RequestTarget, obj: StoredObject): StoredObject {
    const apiVersion = apiVersionFor(t.rt, t.version);
    return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  }

  get(t: RequestTarget & { name: string }): StoredObject {
    const obj = this.store.get(grKey(t.rt), this.keyOf(t.rt, t.namespace, t.name));
    if (!obj) throw notFound(t.rt, t.name);
    return this.present(t, obj);
  }

  list(t: RequestTarget, opts: ListOptions): ListResult {
    const resource = grKey(t.rt);
    const errs: FieldError[] = [];
    const match = opts.resourceVersionMatch ?? '';
    if (match !== '') {
      if (!opts.resourceVersion)
        errs.push(
          fieldForbidden(
            'resourceVersionMatch',
            'resourceVersionMatch is forbidden unless resourceVersion is provided',
          ),
        );
      if (opts.continue)
        errs.push(
          fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
        );
      if (match === 'Exact' && opts.resourceVersion === '0')
        errs.push(
          fieldForbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
        );
      if (match !== 'Exact' && match !== 'NotOlderThan')
        errs.push(fieldNotSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (errs.length > 0) throw listOptionsInvalid(errs);

    const current = this.store.currentRv();
    let state: Map<string, StoredObject>;
    let listRv: number;
    let startKey = '';
    if (opts.continue) {
      const token = decodeContinue(opts.continue);
      startKey =
        t.rt.namespaced && t.namespace !== ''
          ? `${t.namespace}/${token.start.replace(/^\//, '')}`
          : token.start.replace(/^\//, '');
      if (token.rv === -1) {
        listRv = current;
        state = this.store.stateAt(resource, current)!;
      } else {
        const at = this.store.stateAt(resource, token.rv);
        if (!at) {
          const e = expired(INCONSISTENT_CONTINUE);
          e.status.metadata.continue = encodeContinue(-1, token.start);
          throw e;
        }
        listRv = token.rv;
        state = at;
      }
    } else if (opts.resourceVersion && match === 'Exact') {
      const rv = parseResourceVersion(opts.resourceVersion);
      if (rv > current) throw tooLargeResourceVersion(rv, current);
      const at = this.store.stateAt(resource, rv);
      if (!at) throw expired('The resourceVersion for the provided list is too old.');
      listRv = rv;
      state = at;
    } else {
      if (opts.resourceVersion) {
        const rv = parseResourceVersion(opts.resourceVersion);
        if (rv > current) throw tooLargeResourceVersion(rv, current);
      }
      listRv = current;
      state = this.store.stateAt(resource, current)!;
    }

    const prefix = t.rt.namespaced && t.namespace !== '' ? `${t.namespace}/` : '';
    const candidates = sortedEntries(state).filter(
      ([k, obj]) => k.startsWith(prefix) && k >= startKey && matches(opts.selector, obj),
    );
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const page = candidates.slice(0, limit);
    const result: ListResult = { items: page.map(([, o]) => this.present(t, o)), resourceVersion: String(listRv) };
    if (candidates.length > page.length) {
      const lastKey = page[page.length - 1]![0];
      result.continue = encodeContinue(listRv, lastKey.slice(prefix.length) + '\u0000');
      if (isEmptySelector(opts.selector)) result.remainingItemCount = candidates.length - page.length;
    }
    return result;
  }

  create(t: RequestTarget, body: Record<string, unknown>, opts: WriteOptions = {}): StoredObject {
    return this.createWith(t, body, opts, (obj) =>
      opts.manager === undefined
        ? undefined
        : updateManagedFields(this.writer(t, opts.manager, ''), undefined, obj, managedFieldsOf(body)),
    );
  }

  /** createWith creates, with the managedFields managed gives for the object to store. */
  private createWith(
    t: RequestTarget,
    body: Record<string, unknown>,
    opts: WriteOptions,
    managed: (obj: StoredObject) => ManagedFieldsEntry[] | undefined,
  ): StoredObject {
    const resource = grKey(t.rt);
    if (t.rt.namespaced) {
      const ns = this.store.get(NAMESPACES, t.namespace);
      if (!ns) throw notFound({ group: '', resource: NAMESPACES }, t.namespace);
      if (ns.metadata.deletionTimestamp !== undefined) {
        throw new ApiError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `${t.rt.resource} "${String((body.metadata as Record<string, unknown> | undefined)?.name ?? '')}" is forbidden: unable to create new content in namespace ${t.namespace} because it is being terminated`,
          reason: 'Forbidden',
          details: {
            name: String((body.metadata as Record<string, unknown> | undefined)?.name ?? ''),
            group: t.rt.group || undefined,
            kind: t.rt.resource,
          },
          code: 403,
        });
      }
    }
    let obj = prepareCreate(t, body);
    const name = String(obj.metadata.name);
    const key = this.keyOf(t.rt, t.namespace, name);
    if (resource === NAMESPACES) {
      obj = { ...obj, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
    }
    if (resource === CRDS) {
      obj = withCrdDefaults(obj);
      validateCrd(obj);
    }
    this.admit('CREATE', t, obj, opts);
    if (this.store.get(resource, key)) throw alreadyExists(t.rt, name);
    const managedFields = managed(obj);
    if (managedFields) obj.metadata.managedFields = managedFields;
    if (resource === CRDS) return this.present(t, this.establish(obj));
    return this.present(t, this.store.put(resource, key, obj));
  }

  /** update replaces an object (PUT), honouring metadata.resourceVersion as a precondition. */
  update(
    t: RequestTarget & { name: string },
    body: Record<string, unknown>,
    sub: Subresource,
    opts: WriteOptions = {},
  ): StoredObject | Status {
    const old = this.stored(t);
    const md = (body.metadata ?? {}) as Record<string, unknown>;
    if (
      md.resourceVersion !== undefined &&
      md.resourceVersion !== '' &&
      md.resourceVersion !== old.metadata.resourceVersion
    ) {
      throw conflict(t.rt, t.name, STALE_OBJECT);
    }
    return this.write(t, old, body, sub, opts);
  }

  /** patch applies a JSON, merge or strategic merge patch to the stored object, then writes it as update does. */
  patch(
    t: RequestTarget & { name: string },
    contentType: string,
    patch: unknown,
    sub: Subresource,
    opts: WriteOptions = {},
  ): StoredObject | Status {
    const old = this.stored(t);
    // Server-side apply (application/apply-patch+yaml) is apply() below.
    const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
    if (t.rt.builtin) accepted.push('application/strategic-merge-patch+json');
    // The 415 lists what kube-apiserver lists, server-side apply included.
    const listed = [...accepted, 'application/apply-patch+yaml'];
    let patched: unknown;
    switch (accepted.includes(contentType) ? contentType : '') {
      case 'application/merge-patch+json':
        patched = mergePatch(this.present(t, old), patch);
        break;
      case 'application/strategic-merge-patch+json':
        patched = strategicMergePatch(this.present(t, old), patch, strategicSchemaFor(t.rt));
        break;
      case 'application/json-patch+json':
        patched = jsonPatch(this.present(t, old), patch);
        break;
      default:
        throw unsupportedMediaType(contentType, listed);
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched))
      throw badRequest('the patched object is not a JSON object');
    const body = patched as Record<string, unknown>;
    const md = (body.metadata ?? {}) as Record<string, unknown>;
    if (md.resourceVersion !== undefined && md.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(t.rt, t.name, STALE_OBJECT);
    }
    return this.write(t, old, body, sub, opts);
  }

  /**
   * apply is server-side apply (PATCH application/apply-patch+yaml): config is merged into the object by the
   * schema's list-map keys, and its manager owns what it sets; an absent object is created.
   */
  apply(
    t: RequestTarget & { name: string },
    config: Record<string, unknown>,
    sub: Subresource,
    opts: ApplyOptions,
  ): { object: StoredObject | Status; created: boolean } {
    const md = (config.metadata ?? {}) as Record<string, unknown>;
    if (md.name !== undefined && md.name !== t.name) {
      throw badRequest(`the name of the object (${String(md.name)}) does not match the name on the URL (${t.name})`);
    }
    const w = this.writer(t, opts.manager, sub);
    const old = this.store.get(grKey(t.rt), this.keyOf(t.rt, t.namespace, t.name));
    if (!old) {
      if (sub !== '') throw notFound(t.rt, t.name);
      const { object, managedFields } = applyConfiguration(w, undefined, config, opts.force);
      const body = { ...object, metadata: { ...(object.metadata as object), name: t.name } };
      return { object: this.createWith(t, body, opts, () => managedFields), created: true };
    }
    if (md.resourceVersion !== undefined && md.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(t.rt, t.name, STALE_OBJECT);
    }
    const { object, managedFields } = applyConfiguration(w, this.present(t, old), config, opts.force);
    return { object: this.write(t, old, object, sub, { warnings: opts.warnings }, managedFields), created: false };
  }

  /** crdSchema is a custom resource's openAPIV3Schema at version (an open object without one). */
  private crdSchema(rt: ResourceType, version: string): Record<string, unknown> {
    const crd = rt.crd ? this.store.get(CRDS, rt.crd) : undefined;
    const versions = (crd?.spec as { versions?: unknown } | undefined)?.versions;
    const served = Array.isArray(versions)
      ? (versions as { name?: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[]).find(
          (v) => v.name === version,
        )
      : undefined;
    return served?.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }

  /** writer is the field manager's view of a write to t. */
  private writer(t: RequestTarget, manager: string, subresource: Subresource): WriteContext {
    return {
      type: typeOf(t.rt, t.version, () => this.crdSchema(t.rt, t.version)),
      manager,
      apiVersion: apiVersionFor(t.rt, t.version),
      subresource,
      statusSubresource: t.rt.statusSubresource,
    };
  }

  delete(
    t: RequestTarget & { name: string },
    preconditions: { uid?: string; resourceVersion?: string } = {},
    propagationPolicy?: PropagationPolicy,
  ): StoredObject | Status {
    const old = this.stored(t);
    if (preconditions.uid !== undefined && preconditions.uid !== old.metadata.uid) {
      throw conflict(
        t.rt,
        t.name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(old.metadata.uid)}`,
      );
    }
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        t.rt,
        t.name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${String(old.metadata.resourceVersion)}`,
      );
    }
    const resource = grKey(t.rt);
    if (resource === NAMESPACES) return this.present(t, this.deleteNamespace(old));
    if (resource === CRDS) return this.present(t, this.deleteCrd(old));
    // As kube-apiserver: Foreground and Orphan leave the object to the garbage collector behind a finalizer.
    const gcFinalizer = propagationPolicy ? GC_FINALIZERS[propagationPolicy] : undefined;
    const finalizers = finalizersOf(old);
    if (finalizers.length > 0 || gcFinalizer) {
      if (old.metadata.deletionTimestamp !== undefined && (!gcFinalizer || finalizers.includes(gcFinalizer)))
        return this.present(t, old);
      const next = gcFinalizer
        ? [...finalizers.filter((f) => !Object.values(GC_FINALIZERS).includes(f)), gcFinalizer]
        : finalizers;
      const key = this.keyOf(t.rt, t.namespace, t.name);
      return this.present(
        t,
        this.store.put(resource, key, {
          ...old,
          metadata: {
            ...old.metadata,
            deletionTimestamp: old.metadata.deletionTimestamp ?? now(),
            deletionGracePeriodSeconds: 0,
            finalizers: next,
          },
        }),
      );
    }
    return this.finalizeDelete(t, old);
  }

  /** deleteCollection deletes every object the selector matches and answers the list of them. */
  deleteCollection(t: RequestTarget, selector: Selector): ListResult {
    const listed = this.list(t, { selector });
    const items: StoredObject[] = [];
    for (const obj of listed.items) {
      const out = this.delete({
        ...t,
        namespace: String(obj.metadata.namespace ?? ''),
        name: String(obj.metadata.name),
      });
      if ((out as Status).kind !== 'Status') items.push(out as StoredObject);
      else items.push(obj);
    }
    return { items, resourceVersion: String(this.store.currentRv()) };
  }

  /** applyManifest creates an object from a manifest (kind and apiVersion pick the resource). */
  applyManifest(manifest: Record<string, unknown>): StoredObject {
    const apiVersion = typeof manifest.apiVersion === 'string' ? manifest.apiVersion : '';
    const kind = typeof manifest.kind === 'string' ? manifest.kind : '';
    const { group, version } = splitApiVersion(apiVersion);
    const rt = this.table.byKind(group, kind);
    if (!rt || !rt.versions.includes(version)) {
      throw badRequest(
        `manifest ${kind} ${apiVersion}: no resource serves this kind; list its CRD before it in objects`,
      );
    }
    const md = (manifest.metadata ?? {}) as Record<string, unknown>;
    const namespace = rt.namespaced
      ? typeof md.namespace === 'string' && md.namespace !== ''
        ? md.namespace
        : 'default'
      : '';
    return this.create({ rt, version, namespace }, manifest);
  }

  /** admit runs the admission check of a client's write on the object at the version the client wrote. */
  private admit(operation: 'CREATE' | 'UPDATE', t: RequestTarget, obj: StoredObject, opts: WriteOptions): void {
    if (!this.admission || !opts.warnings) return;
    opts.warnings.push(...this.admission(operation, this.present(t, obj)));
  }

  private stored(t: RequestTarget & { name: string }): StoredObject {
    const obj = this.store.get(grKey(t.rt), this.keyOf(t.rt, t.namespace, t.name));
    if (!obj) throw notFound(t.rt, t.name);
    return obj;
  }

  private write(
    t: RequestTarget & { name: string },
    old: StoredObject,
    body: Record<string, unknown>,
    sub: Subresource,
    opts: WriteOptions,
    applied?: ManagedFieldsEntry[],
  ): StoredObject | Status {
    const resource = grKey(t.rt);
    let next = prepareUpdate(t, old, body, sub);
    if (resource === CRDS && sub === '') {
      next = withCrdDefaults(next);
      validateCrd(next, old);
    }
    // A status write changes no reference; the chart's webhook rules name main resources only.
    if (sub === '') this.admit('UPDATE', t, next, opts);
    const managedFields =
      applied ??
      (opts.manager === undefined
        ? (old.metadata.managedFields as ManagedFieldsEntry[] | undefined)
        : updateManagedFields(this.writer(t, opts.manager, sub), this.present(t, old), next, managedFieldsOf(body)));
    if (managedFields && managedFields.length > 0) next.metadata.managedFields = managedFields;
    else delete next.metadata.managedFields;
    // An update that changes nothing is not written: no new resourceVersion, no watch event.
    if (jsonEqual(next, old)) return this.present(t, old);
    if (old.metadata.deletionTimestamp !== undefined && finalizersOf(next).length === 0) {
      // Emptying the finalizers of an object being deleted deletes it, without writing the update first.
      if (resource === CRDS) return this.present(t, this.deleteCrd(old));
      return this.finalizeDelete(t, old);
    }
    if (resource === CRDS) return this.present(t, this.establish(next, old));
    return this.present(t, this.store.put(resource, this.keyOf(t.rt, t.namespace, t.name), next));
  }

  /**
   * writeMetadata stores obj's new metadata as a server-side controller does (the garbage collector): an object
   * being deleted whose last finalizer goes is deleted.
   */
  writeMetadata(rt: ResourceType, obj: StoredObject, metadata: Record<string, unknown>): void {
    const resource = grKey(rt);
    const key = this.keyOf(rt, String(obj.metadata.namespace ?? ''), String(obj.metadata.name));
    const fins = metadata.finalizers;
    if (metadata.deletionTimestamp !== undefined && (!Array.isArray(fins) || fins.length === 0)) {
      this.store.remove(resource, key);
      return;
    }
    this.store.put(resource, key, { ...obj, metadata });
  }

  private finalizeDelete(t: RequestTarget & { name: string }, old: StoredObject): StoredObject | Status {
    const gone = this.store.remove(grKey(t.rt), this.keyOf(t.rt, t.namespace, t.name))!;
    if (t.rt.returnsDeletedObject) return this.present(t, gone);
    return success(t.rt, t.name, String(old.metadata.uid ?? ''));
  }

  /** establish stores a CRD with the status its controllers would converge to, and serves its resource. */
  private establish(crd: StoredObject, old?: StoredObject): StoredObject {
    const rt = resourceTypeOf(crd);
    const existing = this.table.get(rt);
    const conflicting =
      existing !== undefined && existing.crd !== crd.metadata.name ? `"${rt.resource}" is already in use` : undefined;
    const stored = this.store.put(CRDS, String(crd.metadata.name), {
      ...crd,
      status: establishedStatus(crd, conflicting, old),
    });
    if (!conflicting && rt.versions.length > 0) this.table.add(rt);
    else if (!conflicting && existing) this.dropResource(rt);
    return stored;
  }

  /** deleteCrd marks the CRD terminating, deletes its instances, stops serving it, then deletes it. */
  private deleteCrd(crd: StoredObject): StoredObject {
    const name = String(crd.metadata.name);
    const terminating = this.store.put(CRDS, name, {
      ...crd,
      metadata: {
        ...crd.metadata,
        deletionTimestamp: crd.metadata.deletionTimestamp ?? now(),
        deletionGracePeriodSeconds: 0,
      },
      status: terminatingStatus(crd),
    });
    const rt = this.table.get(resourceTypeOf(crd));
    if (rt && rt.crd === name) this.dropResource(rt);
    this.store.remove(CRDS, name);
    return terminating;
  }

  private dropResource(rt: ResourceType): void {
    const resource = grKey(rt);
    for (const [key] of this.store.entries(resource)) this.store.remove(resource, key);
    this.hub.closeResource(resource);
    this.table.remove(rt);
  }

  /** deleteNamespace marks the namespace Terminating, deletes its contents, then deletes it. */
  private deleteNamespace(ns: StoredObject): StoredObject {
    const name = String(ns.metadata.name);
    const terminating = this.store.put(NAMESPACES, name, {
      ...ns,
      metadata: {
        ...ns.metadata,
        deletionTimestamp: ns.metadata.deletionTimestamp ?? now(),
        deletionGracePeriodSeconds: 0,
      },
      status: { ...(ns.status as Record<string, unknown> | undefined), phase: 'Terminating' },
    });
    for (const rt of this.table.all()) {
      if (!rt.namespaced) continue;
      const resource = grKey(rt);
      for (const [key] of this.store.entries(resource))
        if (key.startsWith(`${name}/`)) this.store.remove(resource, key);
    }
    this.store.remove(NAMESPACES, name);
    return terminating;
  }
}
