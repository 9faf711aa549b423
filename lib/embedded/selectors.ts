import { badRequest } from './status';

/** One requirement of a label selector (apimachinery/pkg/labels). */
export type LabelRequirement =
  | { key: string; op: 'exists' | '!exists' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type Labels = Record<string, string> | undefined;

// Qualified name (label key) and label value rules from apimachinery validation.
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): void {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  if (
    name.length === 0 ||
    name.length > 63 ||
    !NAME_PART.test(name) ||
    (slash >= 0 && (prefix.length > 253 || !PREFIX.test(prefix)))
  ) {
    throw badRequest(
      `unable to parse requirement: <nil>: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
}

function checkValue(value: string): void {
  if (value.length > 63 || !VALUE.test(value)) {
    throw badRequest(
      `unable to parse requirement: <nil>: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
}

/** splitTerms splits on commas outside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.map((t) => t.trim());
}

const SET_TERM = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const CMP_TERM = /^([^!=<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/;

/** parseLabelSelector parses the labelSelector query parameter; a syntax error is a 400 ApiError. */
export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  if (!s || s.trim() === '') return [];
  const reqs: LabelRequirement[] = [];
  for (const term of splitTerms(s)) {
    if (term === '') throw badRequest(`unable to parse requirement: found '', expected: identifier`);
    const set = SET_TERM.exec(term);
    if (set) {
      const [, key, op, list] = set as unknown as [string, string, 'in' | 'notin', string];
      checkKey(key);
      const values = list.split(',').map((v) => v.trim());
      values.forEach(checkValue);
      reqs.push({ key, op, values });
      continue;
    }
    if (term.startsWith('!')) {
      const key = term.slice(1).trim();
      checkKey(key);
      reqs.push({ key, op: '!exists' });
      continue;
    }
    const cmp = CMP_TERM.exec(term);
    if (cmp) {
      const [, key, op, raw] = cmp as unknown as [string, string, string, string];
      const value = raw.trim();
      checkKey(key);
      if (op === '>' || op === '<') {
        if (!/^-?\d+$/.test(value))
          throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push({ key, op: op === '>' ? 'gt' : 'lt', value: Number(value) });
      } else {
        checkValue(value);
        reqs.push({ key, op: op === '!=' ? '!=' : '=', value });
      }
      continue;
    }
    checkKey(term);
    reqs.push({ key: term, op: 'exists' });
  }
  return reqs;
}

export function matchLabels(reqs: LabelRequirement[], labels: Labels): boolean {
  for (const r of reqs) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key] : undefined;
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!exists':
        if (has) return false;
        break;
      case '=':
        if (v !== r.value) return false;
        break;
      case '!=':
        if (v === r.value) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        if (r.op === 'gt' ? !(n > r.value) : !(n < r.value)) return false;
        break;
      }
    }
  }
  return true;
}

/** One requirement of a field selector: a field the resource can select on (selectableFields). */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

const FIELD_TERM = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/;

/** Every resource selects on its name and namespace (kube-apiserver's DefaultNamespaceScopedAttr). */
const METADATA_FIELDS: Record<string, string[]> = {
  'metadata.name': ['metadata', 'name'],
  'metadata.namespace': ['metadata', 'namespace'],
};

/** Core Events select on their subject too (pkg/registry/core/event ToSelectableFields); `source` is source.component. */
const EVENT_FIELDS: Record<string, string[]> = {
  ...METADATA_FIELDS,
  ...Object.fromEntries(
    ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
      `involvedObject.${f}`,
      ['involvedObject', f],
    ]),
  ),
  reason: ['reason'],
  reportingComponent: ['reportingComponent'],
  source: ['source', 'component'],
  type: ['type'],
};

/** selectableFields maps the field names a resource's field selectors accept to where each lives in the object. */
export function selectableFields(resource?: { group: string; resource: string }): Record<string, string[]> {
  return resource?.group === '' && resource.resource === 'events' ? EVENT_FIELDS : METADATA_FIELDS;
}

export function parseFieldSelector(
  s: string | null | undefined,
  fields: Record<string, string[]> = METADATA_FIELDS,
): FieldRequirement[] {
  if (!s || s.trim() === '') return [];
  const reqs: FieldRequirement[] = [];
  for (const term of s.split(',').map((t) => t.trim())) {
    const m = FIELD_TERM.exec(term);
    if (!m) throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    if (!Object.prototype.hasOwnProperty.call(fields, field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    reqs.push({ field, op: op === '!=' ? '!=' : '=', value: value.trim() });
  }
  return reqs;
}

/** fieldValue reads a selectable field; a missing one is the empty string, as in kube-apiserver. */
function fieldValue(obj: object, path: string[]): string {
  let v: unknown = obj;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return typeof v === 'string' ? v : '';
}

export function matchFields(reqs: FieldRequirement[], obj: object): boolean {
  for (const r of reqs) {
    const actual = fieldValue(obj, (EVENT_FIELDS[r.field] ?? METADATA_FIELDS[r.field])!);
    if (r.op === '=' ? actual !== r.value : actual === r.value) return false;
  }
  return true;
}

/** Selector is a parsed label and field selector pair, as list and watch apply it. */
export interface Selector {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

/** parseSelector parses both query parameters; it throws a 400 ApiError on bad syntax or an unsupported field. */
export function parseSelector(
  labelSelector: string | null,
  fieldSelector: string | null,
  resource?: { group: string; resource: string },
): Selector {
  return {
    labels: parseLabelSelector(labelSelector),
    fields: parseFieldSelector(fieldSelector, selectableFields(resource)),
  };
}

export function isEmptySelector(sel: Selector): boolean {
  return sel.labels.length === 0 && sel.fields.length === 0;
}

interface HasMeta {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
}

export function matches(sel: Selector, obj: HasMeta): boolean {
  const md = obj.metadata ?? {};
  return matchLabels(sel.labels, md.labels) && matchFields(sel.fields, obj);
}
