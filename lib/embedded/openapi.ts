import { createHash } from 'node:crypto';
import type { Registry } from './registry';
import { grKey, CRD_GROUP, type ResourceType } from './resources';
import { BUILTIN_SCHEMAS } from './builtin-schemas.generated';
import { GIT_VERSION } from './version';
import { builtinSchemaName, gvPath } from './apply/schema';

/**
 * OpenAPI v3 documents, as kube-apiserver serves them at /openapi/v3: an index
 * of group versions, and per group version its paths and schemas. They carry
 * what kubectl reads from them: each kind's PATCH operation, tagged with
 * x-kubernetes-group-version-kind and listing the fieldValidation parameter
 * (so `kubectl apply`/`create` validate on the server instead of downloading
 * /openapi/v2), and each kind's schema: a CRD's openAPIV3Schema, or for a
 * built-in kind kube-apiserver's own, structure only, with every schema it
 * references (builtin-schemas.generated.ts, from scripts/openapi-builtins.ts).
 */

interface GroupVersion {
  group: string;
  version: string;
}

function servedGroupVersions(registry: Registry): GroupVersion[] {
  const seen = new Map<string, GroupVersion>();
  for (const rt of registry.table.all())
    for (const version of rt.versions) seen.set(gvPath({ group: rt.group, version }), { group: rt.group, version });
  return [...seen.values()].sort((a, b) => gvPath(a).localeCompare(gvPath(b)));
}

/** openApiIndex is GET /openapi/v3: each group version's document URL, with a hash of its content as the real server gives. */
export function openApiIndex(registry: Registry): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const gv of servedGroupVersions(registry)) {
    const hash = createHash('sha512')
      .update(JSON.stringify(openApiDocument(registry, gv)))
      .digest('hex')
      .slice(0, 128)
      .toUpperCase();
    paths[gvPath(gv)] = { serverRelativeURL: `/openapi/v3/${gvPath(gv)}?hash=${hash}` };
  }
  return { paths };
}

/** openApiFor answers GET /openapi/v3/<api/v1 | apis/G/V>, or undefined when no such group version is served. */
export function openApiFor(registry: Registry, segments: string[]): object | undefined {
  const gv =
    segments[0] === 'api' && segments.length === 2
      ? { group: '', version: segments[1]! }
      : segments[0] === 'apis' && segments.length === 3
        ? { group: segments[1]!, version: segments[2]! }
        : undefined;
  if (!gv || !registry.table.servesGroupVersion(gv.group, gv.version)) return undefined;
  return openApiDocument(registry, gv);
}

/** schemaName follows kube-apiserver's naming for CRDs: the group reversed, then version and kind (dev.refwatch.demo.v1alpha1.Database). */
function schemaName(rt: ResourceType, version: string): string {
  const group = rt.group === '' ? 'io.k8s.api.core' : rt.group.split('.').reverse().join('.');
  return `${group}.${version}.${rt.kind}`;
}

const OPEN_OBJECT = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** schemaOf is the CRD's openAPIV3Schema at version, or an open object for a built-in kind. */
function schemaOf(registry: Registry, rt: ResourceType, version: string): Record<string, unknown> {
  if (!rt.crd) return { ...OPEN_OBJECT };
  const crd = registry.store.get(grKey({ group: CRD_GROUP, resource: 'customresourcedefinitions' }), rt.crd) as
    { spec?: { versions?: { name: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[] } } | undefined;
  const schema = crd?.spec?.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  if (!schema) return { ...OPEN_OBJECT };
  // Every object has apiVersion, kind and metadata, which CRD schemas leave out.
  const properties = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    ...((schema.properties as object | undefined) ?? {}),
  };
  return { ...schema, properties };
}

const QUERY = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', uniqueItems: true },
});
const PATCH_PARAMETERS = [
  QUERY('dryRun', 'When present, indicates that modifications should not be persisted.'),
  QUERY('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  QUERY(
    'fieldValidation',
    'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
  ),
  {
    name: 'force',
    in: 'query',
    description: 'Force is going to "force" Apply requests.',
    schema: { type: 'boolean', uniqueItems: true },
  },
];

function openApiDocument(registry: Registry, gv: GroupVersion): object {
  const paths: Record<string, object> = {};
  const schemas: Record<string, object> = {};
  const served = registry.table.all().filter((rt) => rt.group === gv.group && rt.versions.includes(gv.version));
  const builtins = BUILTIN_SCHEMAS[gvPath(gv)] ?? {};
  for (const rt of served.sort((a, b) => a.resource.localeCompare(b.resource))) {
    const gvk = { group: rt.group, version: gv.version, kind: rt.kind };
    const builtin = rt.crd ? undefined : builtinSchemaName(builtins, gvk);
    const name = builtin ?? schemaName(rt, gv.version);
    if (builtin) Object.assign(schemas, builtins);
    else schemas[name] = { ...schemaOf(registry, rt, gv.version), 'x-kubernetes-group-version-kind': [gvk] };
    const ref = { $ref: `#/components/schemas/${name}` };
    const base = `/${gvPath(gv)}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.resource}`;
    const json = { content: { 'application/json': { schema: ref } } };
    paths[`${base}/{name}`] = {
      get: {
        operationId: `read${rt.kind}`,
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': gvk,
        responses: { '200': { description: 'OK', ...json } },
      },
      patch: {
        operationId: `patch${rt.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters: PATCH_PARAMETERS,
        requestBody: {
          content: {
            'application/merge-patch+json': { schema: { type: 'object' } },
            'application/json-patch+json': { schema: { type: 'object' } },
          },
          required: true,
        },
        responses: { '200': { description: 'OK', ...json } },
      },
    };
    paths[base] = {
      post: {
        operationId: `create${rt.kind}`,
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk,
        parameters: PATCH_PARAMETERS.slice(0, 3),
        requestBody: { ...json, required: true },
        responses: { '201': { description: 'Created', ...json } },
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: GIT_VERSION }, paths, components: { schemas } };
}
