import { JSONPath } from 'jsonpath-plus';
import type { Registry } from './registry';
import { CRD_GROUP, grKey, type ResourceType } from './resources';
import type { StoredObject } from './store';

/**
 * Server-side printing for kubectl: a meta.k8s.io Table. Pods, Namespaces,
 * ConfigMaps, Secrets and ServiceAccounts get kube-apiserver's columns; a
 * custom resource gets its CRD's additionalPrinterColumns (Age when it has
 * none), as the apiextensions server prints it; other kinds the default
 * columns (Name, Created At) of kube-apiserver's default table convertor.
 */

/** Column is one printed column: its definition as the Table carries it, and how a row's cell is read. */
export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  cell(obj: StoredObject, now: number): unknown;
}

const col = (name: string, type: string, description: string, cell: Column['cell'], format = ''): Column => ({
  name,
  type,
  format,
  description,
  priority: 0,
  cell,
});

const NAME = col('Name', 'string', 'Name must be unique within a namespace.', (o) => o.metadata.name, 'name');
const CREATED_AT = col(
  'Created At',
  'date',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
  (o) => o.metadata.creationTimestamp,
);
const AGE = col(
  'Age',
  'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
  (o, now) => age(o.metadata.creationTimestamp, now),
);

/**
 * humanDuration prints a duration as kubectl's AGE column does
 * (apimachinery's HumanDuration): 45s, 5m20s, 42m, 5h10m, 30h, 3d4h, 200d, 3y10d, 9y.
 */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  if (d < 365 * 8 && d % 365 !== 0) return `${Math.floor(d / 365)}y${d % 365}d`;
  return `${Math.floor(d / 365)}y`;
}

function age(timestamp: unknown, now: number): string {
  const t = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const keys = (v: unknown) => (v && typeof v === 'object' ? Object.keys(v).length : 0);
const field = (o: StoredObject, ...path: string[]): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);

const BUILTIN: Record<string, Column[]> = {
  '/pods': [
    NAME,
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', (o) => {
      const statuses = list(field(o, 'status', 'containerStatuses'));
      return `${statuses.filter((c) => c.ready === true).length}/${list(field(o, 'spec', 'containers')).length}`;
    }),
    col(
      'Status',
      'string',
      'The aggregate status of the containers in this pod.',
      (o) => (field(o, 'status', 'phase') as string | undefined) ?? 'Pending',
    ),
    col('Restarts', 'string', 'The number of times the containers in this pod have been restarted.', (o) =>
      String(
        list(field(o, 'status', 'containerStatuses')).reduce(
          (n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0),
          0,
        ),
      ),
    ),
    AGE,
  ],
  '/namespaces': [
    NAME,
    col('Status', 'string', 'The status of the namespace', (o) => field(o, 'status', 'phase') ?? 'Active'),
    AGE,
  ],
  '/configmaps': [
    NAME,
    col('Data', 'string', 'Number of data entries.', (o) => keys(field(o, 'data')) + keys(field(o, 'binaryData'))),
    AGE,
  ],
  '/secrets': [
    NAME,
    col('Type', 'string', 'The type of the secret', (o) => field(o, 'type') ?? 'Opaque'),
    col('Data', 'string', 'Number of data entries.', (o) => keys(field(o, 'data')) + keys(field(o, 'stringData'))),
    AGE,
  ],
  '/serviceaccounts': [
    NAME,
    col('Secrets', 'string', 'Number of secrets.', (o) => list(field(o, 'secrets')).length),
    AGE,
  ],
};

interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** crdColumn reads a CRD printer column's jsonPath (`.status.conditions[?(@.type=="Ready")].status`); a date prints as an age. */
function crdColumn(c: PrinterColumn): Column {
  const read = (o: StoredObject): unknown[] => {
    try {
      return JSONPath({ path: `$${c.jsonPath}`, json: o as object, wrap: true }) as unknown[];
    } catch {
      return [];
    }
  };
  return {
    name: c.name,
    type: c.type === 'date' ? 'date' : c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
    cell(o, now) {
      const values = read(o);
      if (values.length === 0) return null;
      if (c.type === 'date') return age(values[0], now);
      return values.length === 1
        ? values[0]
        : values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
    },
  };
}

/** columnsFor gives the columns a kind prints with at a version. */
export function columnsFor(registry: Registry, rt: ResourceType, version: string): Column[] {
  if (rt.crd) {
    const crd = registry.store.get(grKey({ group: CRD_GROUP, resource: 'customresourcedefinitions' }), rt.crd) as
      { spec?: { versions?: { name: string; additionalPrinterColumns?: PrinterColumn[] }[] } } | undefined;
    const printed = crd?.spec?.versions?.find((v) => v.name === version)?.additionalPrinterColumns;
    return [NAME, ...(printed && printed.length > 0 ? printed.map(crdColumn) : [AGE])];
  }
  return (rt.group === '' && BUILTIN[`/${rt.resource}`]) || [NAME, CREATED_AT];
}

export function toTable(
  columns: Column[],
  items: StoredObject[],
  resourceVersion: string,
  continueToken?: string,
): object {
  const metadata: Record<string, unknown> = { resourceVersion };
  if (continueToken) metadata.continue = continueToken;
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns.map(({ cell: _cell, ...definition }) => definition),
    rows: items.map((o) => ({
      cells: columns.map((c) => c.cell(o, now)),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
