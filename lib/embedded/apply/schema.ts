import { BUILTIN_SCHEMAS } from '../builtin-schemas.generated';
import type { ResourceType } from '../resources';

/**
 * The shapes structured merge needs from OpenAPI schemas: which lists are
 * maps keyed by which fields (x-kubernetes-list-type / -list-map-keys),
 * which are sets, which lists and maps are atomic. A field with no schema is
 * "deduced", as structured-merge-diff treats unknown fields: maps merge by
 * key, lists are atomic.
 */

type Schema = Record<string, unknown>;
type Components = Record<string, Schema>;

/** TypeRef is a schema and the document its $refs point into; undefined is a deduced field. */
export interface TypeRef {
  schema: Schema;
  components: Components;
}

export type Shape =
  | { kind: 'scalar' }
  | { kind: 'deduced' }
  | { kind: 'map'; atomic: boolean; field(name: string): TypeRef | undefined; declared(name: string): boolean }
  | { kind: 'list'; listType: 'atomic' | 'set' | 'map'; keys: string[]; item: TypeRef | undefined };

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const REF_PREFIX = '#/components/schemas/';

/** deref follows `$ref`, and `allOf: [{$ref}]` as kube-apiserver's OpenAPI v3 wraps references. */
function deref(ref: TypeRef): Schema {
  let s = ref.schema;
  for (let i = 0; i < 32; i++) {
    const target =
      typeof s.$ref === 'string'
        ? s.$ref
        : Array.isArray(s.allOf) && s.allOf.length === 1 && typeof (s.allOf[0] as Schema).$ref === 'string'
          ? ((s.allOf[0] as Schema).$ref as string)
          : undefined;
    if (!target?.startsWith(REF_PREFIX)) return s;
    const next = ref.components[target.slice(REF_PREFIX.length)];
    if (!next) return {};
    s = next;
  }
  return s;
}

const child = (parent: TypeRef, schema: unknown): TypeRef | undefined =>
  typeof schema === 'object' && schema !== null
    ? { schema: schema as Schema, components: parent.components }
    : undefined;

/** shapeOf classifies a schema; a deduced field takes its shape from its value. */
export function shapeOf(ref: TypeRef | undefined): Shape {
  if (!ref) return { kind: 'deduced' };
  const s = deref(ref);
  if (s['x-kubernetes-int-or-string'] === true) return { kind: 'scalar' };
  if (s.type === 'array') {
    const listType = s['x-kubernetes-list-type'];
    return {
      kind: 'list',
      listType: listType === 'map' || listType === 'set' ? listType : 'atomic',
      keys: Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as string[]) : [],
      item: child(ref, s.items),
    };
  }
  const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Schema;
  const additional = s.additionalProperties;
  if (s.type === 'object' || s.properties !== undefined || additional !== undefined) {
    return {
      kind: 'map',
      atomic: s['x-kubernetes-map-type'] === 'atomic',
      field: (name) =>
        Object.hasOwn(properties, name)
          ? child(ref, properties[name])
          : child(ref, additional === true ? {} : additional),
      declared: (name) => Object.hasOwn(properties, name),
    };
  }
  if (typeof s.type === 'string') return { kind: 'scalar' };
  return { kind: 'deduced' };
}

/** keyDefault is the default of a list-map key field, which stands in for the key when an item leaves it out. */
export function keyDefault(item: TypeRef | undefined, key: string): unknown {
  const shape = shapeOf(item);
  if (shape.kind !== 'map') return undefined;
  const field = shape.field(key);
  return field ? (deref(field).default ?? field.schema.default) : undefined;
}

/** builtinSchemaName is the name kube-apiserver gives a built-in kind's schema (io.k8s.api.core.v1.Pod), if generated. */
export function builtinSchemaName(
  schemas: Record<string, Record<string, unknown>>,
  gvk: { group: string; version: string; kind: string },
): string | undefined {
  for (const [name, s] of Object.entries(schemas)) {
    const tags = (s['x-kubernetes-group-version-kind'] as { group: string; version: string; kind: string }[]) ?? [];
    if (tags.some((t) => t.group === gvk.group && t.version === gvk.version && t.kind === gvk.kind)) return name;
  }
  return undefined;
}

export const gvPath = ({ group, version }: { group: string; version: string }) =>
  group === '' ? `api/${version}` : `apis/${group}/${version}`;

/**
 * typeOf is the root type of a resource at a version: kube-apiserver's own
 * schema for a built-in kind, the CRD's openAPIV3Schema for a custom one
 * (crdSchema; with ObjectMeta for metadata, as the real server uses for every kind).
 */
export function typeOf(rt: ResourceType, version: string, crdSchema: () => Schema): TypeRef {
  const core = BUILTIN_SCHEMAS['api/v1'] ?? {};
  if (!rt.crd) {
    const doc = BUILTIN_SCHEMAS[gvPath({ group: rt.group, version })] ?? {};
    const name = builtinSchemaName(doc, { group: rt.group, version, kind: rt.kind });
    if (name) return { schema: doc[name]!, components: doc };
  }
  const schema = crdSchema();
  const properties = {
    ...((schema.properties as Schema | undefined) ?? {}),
    metadata: { $ref: REF_PREFIX + OBJECT_META },
  };
  return { schema: { ...schema, type: 'object', properties }, components: core };
}
