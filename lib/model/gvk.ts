import { RefwatchError, err, ok, type Result } from './errors';
import { validateGroup, validateKind, validateVersion } from './validation';

/** GroupKind names a kind of object without its version: what a reference points at. */
export interface GroupKind {
  group: string; // '' for the core group
  kind: string;
}

/** GroupVersionKind names a kind at one served version. */
export interface GroupVersionKind extends GroupKind {
  version: string;
}

/** kindKey formats a GroupKind as `Kind.group` (or `Kind` for the core group). */
export function kindKey(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

/** parseKindKey parses `Kind.group` or `Kind`. */
export function parseKindKey(s: string, field = 'kind'): Result<GroupKind> {
  const dot = s.indexOf('.');
  const kind = dot < 0 ? s : s.slice(0, dot);
  const group = dot < 0 ? '' : s.slice(dot + 1);
  const k = validateKind(kind, field);
  if (!k.ok) return k;
  const g = validateGroup(group, field);
  if (!g.ok) return g;
  return ok({ group, kind });
}

/** GroupVersion is an apiVersion taken apart. */
export interface GroupVersion {
  group: string; // '' for the core group
  version: string;
}

/** apiVersionOf formats group and version as a Kubernetes apiVersion (`v1`, `apps/v1`). */
export function apiVersionOf(gv: { group: string; version: string }): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

/**
 * splitApiVersion takes an apiVersion apart without validating it (`apps/v1` → apps, v1; `v1` → '', v1),
 * for apiVersions a server has already accepted; parseApiVersion is for input.
 */
export function splitApiVersion(apiVersion: string): GroupVersion {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** groupOfApiVersion is splitApiVersion's group alone: `apps/v1` → `apps`, `v1` → '' (core). */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** parseApiVersion splits an apiVersion into group and version, and validates both. */
export function parseApiVersion(apiVersion: string, field = 'apiVersion'): Result<GroupVersion> {
  const parts = apiVersion.split('/');
  if (parts.length > 2 || parts.some((p) => p === '')) {
    return err(
      new RefwatchError('InvalidApiVersion', `${field} "${apiVersion}" is not group/version or version`, {
        field,
        example: 'demo.refwatch.dev/v1alpha1',
      }),
    );
  }
  const [group, version] = parts.length === 1 ? ['', parts[0]!] : [parts[0]!, parts[1]!];
  const g = validateGroup(group, field);
  if (!g.ok) return g;
  const v = validateVersion(version, field);
  if (!v.ok) return v;
  return ok({ group, version });
}

export function sameKind(a: GroupKind, b: GroupKind): boolean {
  return a.group === b.group && a.kind === b.kind;
}
