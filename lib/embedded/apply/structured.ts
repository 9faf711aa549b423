import { jsonEqual } from '../strategy';
import { FieldSet, fieldElement, keyElement, valueElement, type Path } from './fieldset';
import { keyDefault, shapeOf, type Shape, type TypeRef } from './schema';

/**
 * Structured merge over JSON objects typed by OpenAPI schemas, after
 * structured-merge-diff's typed values: the field set an object sets, the
 * comparison of two objects, the merge of an applied configuration into a
 * live object, and the removal of paths.
 */

type Json = unknown;
type JsonMap = Record<string, Json>;

const isMap = (v: Json): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** shapeFor is the schema's shape, or for a deduced field the value's: maps merge by key, lists are atomic. */
function shapeFor(ref: TypeRef | undefined, value: Json): Shape {
  const shape = shapeOf(ref);
  if (shape.kind !== 'deduced') return shape;
  if (isMap(value)) return { kind: 'map', atomic: false, field: () => undefined, declared: () => false };
  if (Array.isArray(value)) return { kind: 'list', listType: 'atomic', keys: [], item: undefined };
  return { kind: 'scalar' };
}

/** granular says whether the value is walked element by element (a non-atomic map or list of the right kind). */
function granular(shape: Shape, value: Json): boolean {
  if (Array.isArray(value)) return shape.kind === 'list' && shape.listType !== 'atomic';
  if (isMap(value)) return shape.kind === 'map' && !shape.atomic;
  return false;
}

/** itemElement is a list item's path element: its keys in a list map, its value in a set. */
export function itemElement(shape: Extract<Shape, { kind: 'list' }>, item: Json): string {
  if (shape.listType === 'set') return valueElement(item);
  const keys: Record<string, Json> = {};
  for (const k of shape.keys) {
    const v = isMap(item) && item[k] !== undefined ? item[k] : keyDefault(shape.item, k);
    if (v !== undefined) keys[k] = v;
  }
  return keyElement(keys);
}

function items(shape: Extract<Shape, { kind: 'list' }>, list: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  if (Array.isArray(list)) for (const item of list) out.set(itemElement(shape, item), item);
  return out;
}

/**
 * fieldSetOf is the set of fields a value sets (structured-merge-diff's ToFieldSet): every scalar, atomic list
 * or map, and list item; a map's key when it is not a declared field, or its value is null or empty.
 */
export function fieldSetOf(value: Json, type: TypeRef | undefined): FieldSet {
  const set = new FieldSet();
  const walk = (v: Json, ref: TypeRef | undefined, path: Path) => {
    const shape = shapeFor(ref, v);
    if (!granular(shape, v)) {
      if (path.length > 0) set.add(path);
      return;
    }
    if (shape.kind === 'list') {
      for (const [pe, item] of items(shape, v)) {
        walk(item, shape.item, [...path, pe]);
        set.add([...path, pe]);
      }
      return;
    }
    if (shape.kind !== 'map') return;
    for (const [k, c] of Object.entries(v as JsonMap)) {
      const p = [...path, fieldElement(k)];
      walk(c, shape.field(k), p);
      if (c === null || (isMap(c) && Object.keys(c).length === 0) || !shape.declared(k)) set.add(p);
    }
  };
  walk(value, type, []);
  return set;
}

/** Comparison is what changed from one object to another, path by path (every path below an added one is added). */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** compare walks both objects by the schema, as structured-merge-diff's Compare does. */
export function compare(lhs: Json, rhs: Json, type: TypeRef | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const walk = (l: Json, r: Json, ref: TypeRef | undefined, path: Path) => {
    if (l === undefined && r === undefined) return;
    if (path.length > 0) {
      if (l === undefined) c.added.add(path);
      else if (r === undefined) c.removed.add(path);
    }
    const shape = shapeFor(ref, r !== undefined ? r : l);
    const lg = l === undefined || granular(shape, l);
    const rg = r === undefined || granular(shape, r);
    if (!lg || !rg || (l !== undefined && r !== undefined && Array.isArray(l) !== Array.isArray(r))) {
      if (l !== undefined && r !== undefined && !jsonEqual(l, r)) c.modified.add(path);
      return;
    }
    if (shape.kind === 'list') {
      const li = items(shape, l);
      const ri = items(shape, r);
      for (const pe of new Set([...li.keys(), ...ri.keys()])) walk(li.get(pe), ri.get(pe), shape.item, [...path, pe]);
      return;
    }
    if (shape.kind !== 'map') return;
    const lm = (l ?? {}) as JsonMap;
    const rm = (r ?? {}) as JsonMap;
    for (const k of new Set([...Object.keys(lm), ...Object.keys(rm)]))
      walk(lm[k], rm[k], shape.field(k), [...path, fieldElement(k)]);
  };
  walk(lhs, rhs, type, []);
  return c;
}

/**
 * merge applies a configuration to a live object: maps merge by key, list maps
 * by their keys (live items keep their place, new ones follow in the
 * configuration's order), sets are unions, and anything atomic is replaced.
 */
export function merge(live: Json, config: Json, type: TypeRef | undefined): Json {
  if (config === undefined) return structuredClone(live);
  if (live === undefined) return structuredClone(config);
  const shape = shapeFor(type, config);
  if (!granular(shape, config) || !granular(shape, live) || Array.isArray(live) !== Array.isArray(config))
    return structuredClone(config);
  if (shape.kind === 'list') {
    const out = new Map<string, Json>();
    for (const [pe, item] of items(shape, live)) out.set(pe, structuredClone(item));
    for (const [pe, item] of items(shape, config)) out.set(pe, merge(out.get(pe), item, shape.item));
    return [...out.values()];
  }
  if (shape.kind !== 'map') return structuredClone(config);
  const out: JsonMap = structuredClone(live as JsonMap);
  for (const [k, v] of Object.entries(config as JsonMap)) out[k] = merge(out[k], v, shape.field(k));
  return out;
}

/**
 * removePaths removes each path from obj, unless a path kept lies below it
 * (then only the paths removed below go). A map or list that removal leaves
 * empty goes too, as a typed object drops an empty field.
 */
export function removePaths(obj: JsonMap, remove: FieldSet, keep: FieldSet, type: TypeRef | undefined): JsonMap {
  const out = structuredClone(obj);
  for (const path of remove.list()) {
    if (keep.hasUnder(path)) continue;
    removeAt(out, path, type);
  }
  return out;
}

/** removeAt deletes the node at path, and each container the deletion leaves empty; false when path is absent. */
function removeAt(root: JsonMap, path: Path, type: TypeRef | undefined): boolean {
  const parents: { node: Json; ref: TypeRef | undefined }[] = [];
  let node: Json = root;
  let ref = type;
  for (const pe of path) {
    parents.push({ node, ref });
    const shape = shapeFor(ref, node);
    if (pe.startsWith('f:') && isMap(node) && shape.kind === 'map') {
      node = node[pe.slice(2)];
      ref = shape.field(pe.slice(2));
    } else if (Array.isArray(node) && shape.kind === 'list') {
      node = node.find((item) => itemElement(shape, item) === pe);
      ref = shape.item;
    } else return false;
    if (node === undefined) return false;
  }
  for (let i = path.length - 1; i >= 0; i--) {
    const { node: parent, ref: parentRef } = parents[i]!;
    const pe = path[i]!;
    if (isMap(parent)) delete parent[pe.slice(2)];
    else if (Array.isArray(parent)) {
      const shape = shapeFor(parentRef, parent);
      if (shape.kind === 'list')
        parent.splice(
          parent.findIndex((item) => itemElement(shape, item) === pe),
          1,
        );
    }
    const emptied = isMap(parent) ? Object.keys(parent).length === 0 : Array.isArray(parent) && parent.length === 0;
    if (!emptied || i === 0) break;
  }
  return true;
}
