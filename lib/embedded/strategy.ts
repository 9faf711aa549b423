import { randomUUID } from 'node:crypto';
import type { NameRule, ResourceType } from './resources';
import type { StoredObject } from './store';
import {
  badRequest,
  fieldForbidden,
  fieldInvalid,
  fieldRequired,
  internalError,
  invalid,
  type FieldError,
} from './status';

/**
 * The create and update strategies every resource shares, after
 * apiserver/pkg/registry/rest (BeforeCreate, BeforeUpdate) and the status
 * strategies of the built-in registries and of custom resources.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** nameErrors validates a name the way the resource's registry does; field is where it came from. */
export function nameErrors(rule: NameRule, name: string, field = 'metadata.name'): FieldError[] {
  const errs: FieldError[] = [];
  switch (rule) {
    case 'subdomain':
      if (name.length > 253) errs.push(fieldInvalid(field, name, 'must be no more than 253 characters'));
      if (!DNS1123_SUBDOMAIN.test(name)) errs.push(fieldInvalid(field, name, SUBDOMAIN_MSG));
      break;
    case 'label':
      if (name.length > 63) errs.push(fieldInvalid(field, name, 'must be no more than 63 characters'));
      if (!DNS1123_LABEL.test(name)) errs.push(fieldInvalid(field, name, LABEL_MSG));
      break;
    case 'dns1035':
      if (name.length > 63) errs.push(fieldInvalid(field, name, 'must be no more than 63 characters'));
      if (!DNS1035_LABEL.test(name)) errs.push(fieldInvalid(field, name, DNS1035_MSG));
      break;
    case 'pathSegment':
      if (name === '.' || name === '..') errs.push(fieldInvalid(field, name, `may not be '${name}'`));
      if (name.includes('/')) errs.push(fieldInvalid(field, name, "may not contain '/'"));
      if (name.includes('%')) errs.push(fieldInvalid(field, name, "may not contain '%'"));
      break;
  }
  return errs;
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function qualifiedNameErrors(key: string, field: string): FieldError[] {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  const errs: FieldError[] = [];
  if (slash >= 0 && (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) {
    errs.push(fieldInvalid(field, key, `prefix part ${SUBDOMAIN_MSG}`));
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    errs.push(
      fieldInvalid(
        field,
        key,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ),
    );
  }
  return errs;
}

function metadataErrors(md: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const labels = md.labels;
  if (labels !== undefined && labels !== null) {
    if (typeof labels !== 'object' || Array.isArray(labels))
      errs.push(fieldInvalid('metadata.labels', labels, 'must be a map of strings'));
    else
      for (const [k, v] of Object.entries(labels)) {
        errs.push(...qualifiedNameErrors(k, 'metadata.labels'));
        if (typeof v !== 'string') errs.push(fieldInvalid('metadata.labels', v, 'must be a string'));
        else if (v.length > 63 || !LABEL_VALUE.test(v))
          errs.push(
            fieldInvalid(
              'metadata.labels',
              v,
              "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
          );
      }
  }
  const annotations = md.annotations;
  if (annotations !== undefined && annotations !== null) {
    if (typeof annotations !== 'object' || Array.isArray(annotations))
      errs.push(fieldInvalid('metadata.annotations', annotations, 'must be a map of strings'));
    else
      for (const k of Object.keys(annotations))
        errs.push(...qualifiedNameErrors(k.toLowerCase(), 'metadata.annotations'));
  }
  const finalizers = md.finalizers;
  if (
    finalizers !== undefined &&
    finalizers !== null &&
    (!Array.isArray(finalizers) || finalizers.some((f) => typeof f !== 'string'))
  ) {
    errs.push(fieldInvalid('metadata.finalizers', finalizers, 'must be a list of strings'));
  }
  return errs;
}

// names.SimpleNameGenerator: 5 characters from an alphabet without vowels or look-alikes.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateName(base: string): string {
  const stem = base.length > 58 ? base.slice(0, 58) : base;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return stem + suffix;
}

/** now is an RFC 3339 timestamp with second precision, as metav1.Time serialises. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function metadataOf(obj: Record<string, unknown>): Record<string, unknown> {
  const md = obj.metadata;
  return typeof md === 'object' && md !== null && !Array.isArray(md) ? (md as Record<string, unknown>) : {};
}

/** RequestTarget is where a write was sent: the resource, the URL's namespace and name, and its version. */
export interface RequestTarget {
  rt: ResourceType;
  version: string;
  namespace: string;
  name?: string;
}

export function apiVersionFor(rt: ResourceType, version: string): string {
  return rt.group === '' ? version : `${rt.group}/${version}`;
}

/** checkTypeMeta rejects a body whose kind or apiVersion names another resource than the URL. */
export function checkTypeMeta(t: RequestTarget, body: Record<string, unknown>): void {
  const kind = body.kind;
  const apiVersion = body.apiVersion;
  if (kind !== undefined && kind !== '' && kind !== t.rt.kind) {
    const version = typeof apiVersion === 'string' ? apiVersion : apiVersionFor(t.rt, t.version);
    throw badRequest(
      `${String(kind)} in version "${version}" cannot be handled as a ${t.rt.kind}: the kind in the body does not match the resource in the URL`,
    );
  }
  if (apiVersion !== undefined && apiVersion !== '') {
    const served = t.rt.versions.map((v) => apiVersionFor(t.rt, v));
    if (typeof apiVersion !== 'string' || !served.includes(apiVersion)) {
      throw badRequest(
        `the API version in the data (${String(apiVersion)}) does not match the expected API version (${apiVersionFor(t.rt, t.version)})`,
      );
    }
  }
}

/**
 * prepareCreate turns a request body into the object to store: metadata the
 * server owns is set, status is dropped where /status is a subresource, and
 * the object is validated (422 Invalid with one cause per field).
 */
export function prepareCreate(t: RequestTarget, body: Record<string, unknown>): StoredObject {
  checkTypeMeta(t, body);
  const md = { ...metadataOf(body) };
  if (md.resourceVersion !== undefined && md.resourceVersion !== '') {
    throw internalError('resourceVersion should not be set on objects to be created');
  }
  if (t.rt.namespaced) {
    if (md.namespace !== undefined && md.namespace !== '' && md.namespace !== t.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    md.namespace = t.namespace;
  } else delete md.namespace;

  const errs: FieldError[] = [];
  let name = typeof md.name === 'string' ? md.name : '';
  if (name === '' && typeof md.generateName === 'string' && md.generateName !== '') {
    name = generateName(md.generateName);
  }
  if (name === '') errs.push(fieldRequired('metadata.name', 'name or generateName is required'));
  else errs.push(...nameErrors(t.rt.nameRule, name));
  errs.push(...metadataErrors(md));
  if (errs.length > 0) throw invalid(t.rt.group, t.rt.kind, name, errs);

  md.name = name;
  md.uid = randomUUID();
  md.creationTimestamp = now();
  delete md.resourceVersion;
  delete md.deletionTimestamp;
  delete md.deletionGracePeriodSeconds;
  delete md.selfLink;
  delete md.managedFields;
  if (t.rt.generation) md.generation = 1;
  else delete md.generation;

  const obj: StoredObject = { ...body, apiVersion: apiVersionFor(t.rt, t.version), kind: t.rt.kind, metadata: md };
  if (t.rt.statusSubresource) delete obj.status;
  return obj;
}

/** Subresource is the part of an object a write addresses. */
export type Subresource = '' | 'status';

/**
 * prepareUpdate merges a full replacement (PUT, or a patch already applied)
 * with the stored object: server-owned metadata is kept, status-subresource
 * rules decide which half of the object the write may change, generation
 * bumps when the spec half changed.
 */
export function prepareUpdate(
  t: RequestTarget,
  old: StoredObject,
  body: Record<string, unknown>,
  sub: Subresource,
): StoredObject {
  checkTypeMeta(t, body);
  const md = { ...metadataOf(body) };
  const oldMd = old.metadata;
  if (md.name !== undefined && md.name !== oldMd.name) {
    throw badRequest(
      `the name of the object (${String(md.name)}) does not match the name on the URL (${String(oldMd.name)})`,
    );
  }
  if (t.rt.namespaced && md.namespace !== undefined && md.namespace !== '' && md.namespace !== oldMd.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }

  let next: StoredObject;
  if (sub === 'status') {
    // Status writes change status only (and metadata not at all), as the status strategies do.
    next = { ...old, metadata: { ...oldMd } };
    if (body.status === undefined) delete next.status;
    else next.status = body.status;
  } else {
    const errs = metadataErrors(md);
    if (errs.length > 0) throw invalid(t.rt.group, t.rt.kind, String(oldMd.name), errs);
    next = { ...body, apiVersion: old.apiVersion, kind: t.rt.kind, metadata: md } as StoredObject;
    if (t.rt.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = old.status;
    }
    for (const owned of [
      'name',
      'namespace',
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
    ]) {
      if (oldMd[owned] === undefined) delete next.metadata[owned];
      else next.metadata[owned] = oldMd[owned];
    }
    delete next.metadata.selfLink;
    delete next.metadata.managedFields;
    if (oldMd.deletionTimestamp !== undefined) {
      const before = new Set((oldMd.finalizers as string[] | undefined) ?? []);
      const added = ((md.finalizers as string[] | undefined) ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        throw invalid(t.rt.group, t.rt.kind, String(oldMd.name), [
          fieldForbidden(
            'metadata.finalizers',
            `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
          ),
        ]);
      }
    }
    if (t.rt.generation && specChanged(old, next, t.rt.statusSubresource)) {
      next.metadata.generation = (Number(oldMd.generation) || 0) + 1;
    }
  }
  next.metadata.resourceVersion = oldMd.resourceVersion;
  return next;
}

function specChanged(a: StoredObject, b: StoredObject, statusSeparate: boolean): boolean {
  const strip = (o: StoredObject) => {
    const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
    if (statusSeparate) delete rest.status;
    return rest;
  };
  return !jsonEqual(strip(a), strip(b));
}

/** jsonEqual compares two JSON values structurally (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ka = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const kb = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual(ao[k], bo[k]));
}

export function finalizersOf(obj: StoredObject): string[] {
  const f = obj.metadata.finalizers;
  return Array.isArray(f) ? (f as string[]) : [];
}
