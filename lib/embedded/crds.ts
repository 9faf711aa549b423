import { CRD_GROUP, sortVersions, type ResourceType } from './resources';
import type { StoredObject } from './store';
import { fieldInvalid, fieldNotSupported, fieldRequired, invalid, type FieldError } from './status';
import { nameErrors, now } from './strategy';

/**
 * CustomResourceDefinition handling: validation (a subset of
 * apiextensions-apiserver's), the resource a CRD serves, and the status the
 * naming and establishing controllers would write.
 */

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: unknown };
  schema?: { openAPIV3Schema?: unknown };
}

interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: string;
  versions: CrdVersion[];
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function specOf(obj: StoredObject): CrdSpec {
  const spec = asRecord(obj.spec);
  const names = asRecord(spec.names);
  const versions = Array.isArray(spec.versions) ? spec.versions.map(asRecord) : [];
  return {
    group: str(spec.group),
    scope: str(spec.scope),
    names: {
      plural: str(names.plural),
      singular: str(names.singular) || undefined,
      kind: str(names.kind),
      listKind: str(names.listKind) || undefined,
      shortNames: Array.isArray(names.shortNames)
        ? names.shortNames.filter((s): s is string => typeof s === 'string')
        : undefined,
      categories: Array.isArray(names.categories)
        ? names.categories.filter((s): s is string => typeof s === 'string')
        : undefined,
    },
    versions: versions.map((v) => ({
      name: str(v.name),
      served: v.served === true,
      storage: v.storage === true,
      subresources: v.subresources === undefined ? undefined : asRecord(v.subresources),
      schema: v.schema === undefined ? undefined : asRecord(v.schema),
    })),
  };
}

const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** validateCrd throws 422 Invalid with the fields at fault, as the CRD strategy does. */
export function validateCrd(obj: StoredObject, old?: StoredObject): void {
  const spec = specOf(obj);
  const name = str(obj.metadata.name);
  const errs: FieldError[] = [];
  if (spec.group === '') errs.push(fieldRequired('spec.group', ''));
  else if (!spec.group.includes('.'))
    errs.push(fieldInvalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  else errs.push(...nameErrors('subdomain', spec.group, 'spec.group'));
  if (spec.names.plural === '') errs.push(fieldRequired('spec.names.plural', ''));
  else errs.push(...nameErrors('label', spec.names.plural, 'spec.names.plural'));
  if (spec.names.kind === '') errs.push(fieldRequired('spec.names.kind', ''));
  else if (!KIND.test(spec.names.kind))
    errs.push(
      fieldInvalid(
        'spec.names.kind',
        spec.names.kind,
        'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?',
      ),
    );
  if (spec.names.plural !== '' && spec.group !== '' && name !== `${spec.names.plural}.${spec.group}`) {
    errs.push(fieldInvalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errs.push(fieldNotSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  if (spec.versions.length === 0)
    errs.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
  else {
    const storage = spec.versions.filter((v) => v.storage).length;
    if (storage !== 1)
      errs.push(
        fieldInvalid(
          'spec.versions',
          spec.versions.map((v) => v.name),
          'must have exactly one version marked as storage version',
        ),
      );
    spec.versions.forEach((v, i) => {
      if (v.name === '') errs.push(fieldRequired(`spec.versions[${i}].name`, ''));
      else errs.push(...nameErrors('label', v.name, `spec.versions[${i}].name`));
      if (v.schema?.openAPIV3Schema === undefined)
        errs.push(fieldRequired(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    });
  }
  if (old) {
    const before = specOf(old);
    if (before.scope !== spec.scope) errs.push(fieldInvalid('spec.scope', spec.scope, 'field is immutable'));
  }
  if (errs.length > 0) throw invalid(CRD_GROUP, 'CustomResourceDefinition', name, errs);
}

/** resourceTypeOf is the resource a (valid) CRD serves: its served versions, preferred first. */
export function resourceTypeOf(obj: StoredObject): ResourceType {
  const spec = specOf(obj);
  const served = spec.versions.filter((v) => v.served);
  return {
    group: spec.group,
    resource: spec.names.plural,
    versions: sortVersions(served.map((v) => v.name)),
    kind: spec.names.kind,
    listKind: spec.names.listKind ?? `${spec.names.kind}List`,
    singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
    namespaced: spec.scope === 'Namespaced',
    shortNames: spec.names.shortNames ?? [],
    categories: spec.names.categories ?? [],
    // Status semantics follow the storage version's declaration; per-version differences are not modelled.
    statusSubresource: served.some((v) => v.subresources?.status !== undefined),
    generation: true,
    returnsDeletedObject: false,
    nameRule: 'subdomain',
    builtin: false,
    crd: str(obj.metadata.name),
  };
}

/** withDefaults fills spec.names.singular and listKind as the CRD defaulter does. */
export function withCrdDefaults(obj: StoredObject): StoredObject {
  const spec = asRecord(obj.spec);
  const names = { ...asRecord(spec.names) };
  if (typeof names.kind === 'string' && names.kind !== '') {
    names.singular ??= names.kind.toLowerCase();
    names.listKind ??= `${names.kind}List`;
  }
  return { ...obj, spec: { ...spec, names } };
}

/**
 * establishedStatus is the status the naming and establishing controllers
 * converge to: names accepted and the CRD established, or, when another
 * resource already serves the plural, names not accepted and nothing served.
 */
export function establishedStatus(
  obj: StoredObject,
  conflict: string | undefined,
  old?: StoredObject,
): Record<string, unknown> {
  const spec = specOf(obj);
  const at = now();
  const previous = Array.isArray(asRecord(old?.status).conditions)
    ? (asRecord(old?.status).conditions as Record<string, unknown>[])
    : [];
  const since = (type: string, status: string) => {
    const p = previous.find((c) => c.type === type);
    return p && p.status === status && typeof p.lastTransitionTime === 'string' ? p.lastTransitionTime : at;
  };
  const acceptedNames: Record<string, unknown> = {
    plural: spec.names.plural,
    singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
    kind: spec.names.kind,
    listKind: spec.names.listKind ?? `${spec.names.kind}List`,
  };
  if (spec.names.shortNames?.length) acceptedNames.shortNames = spec.names.shortNames;
  if (spec.names.categories?.length) acceptedNames.categories = spec.names.categories;
  const storage = spec.versions.find((v) => v.storage)?.name;
  const priorStored = Array.isArray(asRecord(old?.status).storedVersions)
    ? (asRecord(old?.status).storedVersions as string[])
    : [];
  const storedVersions = storage && !priorStored.includes(storage) ? [...priorStored, storage] : priorStored;
  if (conflict) {
    return {
      acceptedNames: {},
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'False',
          lastTransitionTime: since('NamesAccepted', 'False'),
          reason: 'PluralConflict',
          message: `"${spec.names.plural}" is already in use`,
        },
        {
          type: 'Established',
          status: 'False',
          lastTransitionTime: since('Established', 'False'),
          reason: 'NotAccepted',
          message: 'not all names are accepted',
        },
      ],
      storedVersions,
    };
  }
  return {
    acceptedNames,
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        lastTransitionTime: since('NamesAccepted', 'True'),
        reason: 'NoConflicts',
        message: 'no conflicts found',
      },
      {
        type: 'Established',
        status: 'True',
        lastTransitionTime: since('Established', 'True'),
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ],
    storedVersions,
  };
}

/** terminatingStatus marks a CRD whose instances are being removed. */
export function terminatingStatus(obj: StoredObject): Record<string, unknown> {
  const status = asRecord(obj.status);
  const conditions = Array.isArray(status.conditions)
    ? (status.conditions as Record<string, unknown>[]).filter((c) => c.type !== 'Terminating')
    : [];
  conditions.push({
    type: 'Terminating',
    status: 'True',
    lastTransitionTime: now(),
    reason: 'InstanceDeletionInProgress',
    message: 'CustomResource deletion is in progress',
  });
  return { ...status, conditions };
}
