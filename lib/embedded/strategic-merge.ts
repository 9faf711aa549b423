import { kindKey, type GroupKind } from '../model';
import { ApiError, badRequest } from './status';

/**
 * Strategic merge patch (application/strategic-merge-patch+json) for the
 * built-in kinds, as apimachinery's strategicpatch applies it on the server:
 * a list whose Go field is tagged patchStrategy=merge merges its elements by
 * patchMergeKey (containers by name, volumeMounts by mountPath, ports by
 * containerPort), a merge list of scalars (finalizers) is a set union, and
 * every other list is replaced. The directives kubectl sends are honoured:
 * `$patch: replace|delete` (on a map, and as a list element),
 * `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
 * `$setElementOrder/<field>`, including the order of the merged list that
 * kube-apiserver gives (patch items in patch order, the server's own items
 * kept where they stood relative to them).
 */

type Json = unknown;
type JsonMap = Record<string, Json>;

/** PatchMeta is one field's patch strategy: a merge list (with its merge key, for lists of objects) and what lies below. */
interface PatchMeta {
  mergeKey?: string;
  merge?: boolean;
  fields?: Schema;
}
type Schema = Readonly<Record<string, PatchMeta>>;

const mergeList = (mergeKey?: string, fields?: Schema): PatchMeta => ({ merge: true, mergeKey, fields });
const conditions = { conditions: mergeList('type') };

// Field tags copied from k8s.io/api and apimachinery's ObjectMeta (patchStrategy:"merge" patchMergeKey:…).
const objectMeta: Schema = { ownerReferences: mergeList('uid'), finalizers: mergeList() };
const container: Schema = {
  ports: mergeList('containerPort'),
  env: mergeList('name'),
  volumeMounts: mergeList('mountPath'),
  volumeDevices: mergeList('devicePath'),
};
const podSpec: Schema = {
  volumes: mergeList('name'),
  initContainers: mergeList('name', container),
  containers: mergeList('name', container),
  ephemeralContainers: mergeList('name', container),
  imagePullSecrets: mergeList('name'),
  hostAliases: mergeList('ip'),
  topologySpreadConstraints: mergeList('topologyKey'),
  schedulingGates: mergeList('name'),
  resourceClaims: mergeList('name'),
};
const podStatus: Schema = {
  ...conditions,
  hostIPs: mergeList('ip'),
  podIPs: mergeList('ip'),
  resourceClaimStatuses: mergeList('name'),
};
const withMeta = (fields: Schema = {}): Schema => ({ metadata: { fields: objectMeta }, ...fields });

/** The patch strategies of each built-in kind the embedded server serves, by `Kind.group`; a kind not listed has only ObjectMeta's. */
const SCHEMAS: Readonly<Record<string, Schema>> = {
  Pod: withMeta({ spec: { fields: podSpec }, status: { fields: podStatus } }),
  'Deployment.apps': withMeta({
    spec: { fields: { template: { fields: withMeta({ spec: { fields: podSpec } }) } } },
    status: { fields: conditions },
  }),
  Service: withMeta({ spec: { fields: { ports: mergeList('port') } }, status: { fields: conditions } }),
  ServiceAccount: withMeta({ secrets: mergeList('name') }),
  PersistentVolumeClaim: withMeta({ status: { fields: conditions } }),
  Namespace: withMeta({ status: { fields: conditions } }),
  'HorizontalPodAutoscaler.autoscaling': withMeta({ status: { fields: conditions } }),
};

/** strategicSchemaFor gives the patch strategies of a built-in kind. */
export function strategicSchemaFor(gk: GroupKind): Schema {
  return SCHEMAS[kindKey(gk)] ?? withMeta();
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM = '$deleteFromPrimitiveList/';
const SET_ORDER = '$setElementOrder/';

function isMap(v: Json): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Errors as kube-apiserver answers them: a malformed directive is a 400; what strategicpatch cannot apply, a 500. */
function malformed(message: string): ApiError {
  return badRequest(message);
}
function unmergeable(message: string): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'InternalError',
    code: 500,
  });
}

/** strategicMergePatch applies patch to target by schema; neither argument is changed. */
export function strategicMergePatch(target: Json, patch: Json, schema: Schema): Json {
  if (!isMap(patch)) throw malformed('a strategic merge patch must be a JSON object');
  return mergeMap(isMap(target) ? structuredClone(target) : {}, structuredClone(patch), schema);
}

function mergeMap(original: JsonMap, patch: JsonMap, schema: Schema): JsonMap {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return patch;
    }
    if (directive === 'delete') return {};
    throw unmergeable(`unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`);
  }
  retainKeys(original, patch);
  setElementOrders(original, patch, schema);
  for (const [rawKey, value] of Object.entries(patch)) {
    const deleting = rawKey.startsWith(DELETE_FROM);
    const key = deleting ? rawKey.slice(DELETE_FROM.length) : rawKey;
    if (value === null) {
      delete original[key];
      continue;
    }
    if (!(key in original) || kindOf(original[key]) !== kindOf(value)) {
      if (deleting) continue;
      const kept = removeDirectives(discardNulls(value));
      if (kept === DROP) delete original[key];
      else original[key] = kept;
      continue;
    }
    const meta = schema[key] ?? {};
    if (isMap(value)) original[key] = mergeMap(original[key] as JsonMap, value, meta.fields ?? {});
    else if (Array.isArray(value)) {
      original[key] = deleting
        ? (original[key] as Json[]).filter((v) => !value.includes(v))
        : meta.merge
          ? mergeSlice(original[key] as Json[], value, meta, key)
          : value;
    } else original[key] = value;
  }
  return original;
}

function kindOf(v: Json): string {
  return Array.isArray(v) ? 'list' : isMap(v) ? 'map' : typeof v;
}

/** `$retainKeys`: the fields of original not listed go; a patch may set no field outside the list. */
function retainKeys(original: JsonMap, patch: JsonMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw malformed('invalid patch: $retainKeys must be a list of field names');
  const keep = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM) || k.startsWith(SET_ORDER)) continue;
    if (!keep.has(k)) throw malformed(`invalid patch: field "${k}" is set but not listed in $retainKeys`);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/** `$setElementOrder/<field>`: the field's list is merged, then ordered as the directive lists it. */
function setElementOrders(original: JsonMap, patch: JsonMap, schema: Schema): void {
  for (const directive of Object.keys(patch)) {
    if (!directive.startsWith(SET_ORDER)) continue;
    const order = patch[directive];
    delete patch[directive];
    const key = directive.slice(SET_ORDER.length);
    if (!Array.isArray(order)) throw malformed(`invalid patch: ${directive} must be a list`);
    const meta = schema[key] ?? {};
    const from = original[key];
    const change = patch[key];
    if (from !== undefined && !Array.isArray(from)) continue;
    if (change !== undefined && !Array.isArray(change)) continue;
    let merged: Json[];
    if (from !== undefined && change === undefined) merged = from;
    else if (from === undefined && change !== undefined) {
      const kept = removeDirectives(change);
      if (kept === DROP) continue;
      merged = kept as Json[];
    } else if (from !== undefined && change !== undefined)
      merged = meta.merge ? mergeSlice(from, change, meta, key) : change;
    else continue;
    const listed = (v: Json) => indexOf(order, v, meta.mergeKey) >= 0;
    original[key] = ordered(
      merged.filter(listed),
      merged.filter((v) => !listed(v)),
      order,
      from ?? [],
      meta.mergeKey,
    );
    delete patch[key];
  }
}

function mergeSlice(original: Json[], patch: Json[], meta: PatchMeta, field: string): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const maps = [...original, ...patch].some(isMap);
  let merged: Json[];
  if (!maps) merged = dedupe([...original, ...patch]);
  else {
    const key = meta.mergeKey;
    if (!key) throw unmergeable(`cannot merge lists without merge key for ${field}`);
    [original, patch] = specialElements(original, patch, key);
    merged = [...original];
    for (const item of patch) {
      const value = mergeKeyOf(item, key);
      const at = merged.findIndex((m) => isMap(m) && m[key] === value);
      if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, item as JsonMap, meta.fields ?? {});
      else merged.push(item);
    }
  }
  const inPatch = (v: Json) => indexOf(patch, v, maps ? meta.mergeKey : undefined) >= 0;
  return ordered(
    merged.filter(inPatch),
    merged.filter((v) => !inPatch(v)),
    patch,
    original,
    maps ? meta.mergeKey : undefined,
  );
}

function mergeKeyOf(item: Json, key: string): Json {
  if (!isMap(item) || !(key in item))
    throw unmergeable(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
  return item[key];
}

/** Applies a list's `$patch` elements: delete removes the original's items with that key, replace drops the original. */
function specialElements(original: Json[], patch: Json[], key: string): [Json[], Json[]] {
  const rest: Json[] = [];
  let replace = false;
  for (const item of patch) {
    if (!isMap(item) || !(DIRECTIVE in item)) {
      rest.push(item);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      const value = mergeKeyOf(item, key);
      original = original.filter((o) => !(isMap(o) && o[key] === value));
    } else if (directive === 'replace') replace = true;
    else if (directive === 'merge') throw unmergeable('merging lists cannot yet be specified in the patch');
    else throw unmergeable(`unknown patch type: ${String(directive)} in map: ${JSON.stringify(item)}`);
  }
  return replace ? [rest, []] : [original, rest];
}

/** apimachinery's deduplicateScalars, whose order (a duplicate replaced by the last item) the result keeps. */
function dedupe(s: Json[]): Json[] {
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (s[i] === s[j]) {
        s[j] = s[last]!;
        s.length = last;
        last--;
        j--;
      }
    }
  }
  return s;
}

function indexOf(list: Json[], item: Json, mergeKey: string | undefined): number {
  const of = (v: Json) => (mergeKey === undefined ? v : isMap(v) ? v[mergeKey] : undefined);
  const wanted = of(item);
  return list.findIndex((v) => of(v) === wanted);
}

/**
 * The order kube-apiserver gives a merged list (normalizeElementOrder): the patch's items in patchOrder, the
 * server-only items in serverOrder, and each server-only item placed before the first patch item it preceded
 * on the server; a `$patch: delete` element sorts last.
 */
function ordered(fromPatch: Json[], serverOnly: Json[], patchOrder: Json[], serverOrder: Json[], key?: string): Json[] {
  const sortBy = (items: Json[], order: Json[]): Json[] => {
    const deleted = key === undefined ? [] : items.filter((v) => isMap(v) && v[DIRECTIVE] === 'delete');
    const kept = key === undefined ? items : items.filter((v) => !(isMap(v) && v[DIRECTIVE] === 'delete'));
    return [...stableSort(kept, order, key), ...deleted];
  };
  const right = sortBy(fromPatch, patchOrder);
  const left = sortBy(serverOnly, serverOrder);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const li = indexOf(serverOrder, left[i], key);
      const ri = indexOf(serverOrder, right[j], key);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** Go's sort.SliceStable with apimachinery's comparison: by position in order, an item not in it counting as less. */
function stableSort(items: Json[], order: Json[], key?: string): Json[] {
  const out = [...items];
  // Insertion sort, as SliceStable's is for short lists; the comparison is not a strict weak order, so the algorithm matters.
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]];
  }
  return out;
  function less(a: Json, b: Json): boolean {
    const ia = indexOf(order, a, key);
    if (ia < 0) return true;
    const ib = indexOf(order, b, key);
    return ib < 0 ? true : ia < ib;
  }
}

const DROP = Symbol('drop');

/** A value from the patch stored as is: without `$patch` maps (a map carrying one is dropped). */
function removeDirectives(v: Json): Json | typeof DROP {
  if (isMap(v)) {
    if (DIRECTIVE in v) return DROP;
    for (const [k, x] of Object.entries(v)) {
      const kept = removeDirectives(x);
      if (kept === DROP) delete v[k];
      else v[k] = kept;
    }
    return v;
  }
  if (Array.isArray(v)) return v.map(removeDirectives).filter((x) => x !== DROP);
  return v;
}

/** The nulls of a patch value that has nothing to delete below it. */
function discardNulls(v: Json): Json {
  if (isMap(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (x === null) delete v[k];
      else discardNulls(x);
    }
  } else if (Array.isArray(v)) v.forEach(discardNulls);
  return v;
}
