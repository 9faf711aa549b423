import { RefwatchError, err, ok, type Result } from './errors';

/** Labels are an object's metadata.labels: key → value. */
export type Labels = Readonly<Record<string, string>>;

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** Requirement is one term of a selector, as apimachinery's labels.Requirement: key, operator and values. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** Sorted and without duplicates; empty for Exists and DoesNotExist. */
  readonly values: readonly string[];
}

/**
 * Selector is a parsed label selector: every requirement must hold (AND).
 * No requirements selects every object (Kubernetes' labels.Everything()).
 * `text` is the kubectl form (`app=web,tier in (a,b),!canary`), stable for one selector.
 */
export interface Selector {
  readonly requirements: readonly Requirement[];
  readonly text: string;
}

/**
 * SelectorForm is how the API writes a selector:
 *   labelSelector  metav1.LabelSelector: {matchLabels, matchExpressions} (Deployments, PDBs, NetworkPolicies)
 *   map            a plain key → value map, every pair must match (a Service's spec.selector)
 */
export type SelectorForm = 'labelSelector' | 'map';

/**
 * EmptySelector says what an empty selector (`{}`) means for the field that holds it:
 *   all   every object (a PDB's selector, a NetworkPolicy's podSelector)
 *   none  no object, and so no reference (a Service whose selector is empty or absent)
 */
export type EmptySelector = 'all' | 'none';

export interface ParseSelectorOptions {
  form: SelectorForm;
  /** What `{}` means; an absent selector (null, undefined) is never a reference. Default 'all'. */
  empty?: EmptySelector;
  /** The field the selector came from, named in errors (`spec.selector`). */
  field?: string;
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const OPERATORS: readonly SelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** labelKeyProblem says what is wrong with a label key (`app`, `app.kubernetes.io/name`), or undefined. */
export function labelKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string' || key === '') return 'must be a non-empty string';
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return `has prefix "${prefix}", which is not a DNS subdomain (lower case, dots, at most 253 characters)`;
  if (name.length > 63 || !NAME.test(name))
    return 'must be at most 63 characters of letters, digits, "-", "_" or ".", starting and ending with a letter or digit';
  return undefined;
}

/** labelValueProblem says what is wrong with a label value, or undefined; the empty value is valid. */
export function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value === '') return undefined;
  if (value.length > 63 || !NAME.test(value))
    return 'must be at most 63 characters of letters, digits, "-", "_" or ".", starting and ending with a letter or digit';
  return undefined;
}

function invalid(field: string, message: string, example: string): Result<never> {
  return err(new RefwatchError('InvalidSelector', `${field} ${message}`, { field, example }));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * parseSelector reads a selector as the API writes it. The value is
 * `undefined` when it selects nothing by definition, so that it is no
 * reference at all: an absent selector, or an empty one where `empty` is
 * 'none'. Bad input is a RefwatchError naming the field and showing the fix.
 */
export function parseSelector(raw: unknown, opts: ParseSelectorOptions): Result<Selector | undefined> {
  const field = opts.field ?? 'selector';
  if (raw === undefined || raw === null) return ok(undefined);
  if (!isPlainObject(raw)) {
    return opts.form === 'map'
      ? invalid(field, `must be a map of label key to value, got ${JSON.stringify(raw)}`, '{"app":"web"}')
      : invalid(
          field,
          `must be an object {matchLabels, matchExpressions}, got ${JSON.stringify(raw)}`,
          '{"matchLabels":{"app":"web"}}',
        );
  }
  const requirements: Requirement[] = [];
  if (opts.form === 'map') {
    const r = equalities(raw, field);
    if (!r.ok) return r;
    requirements.push(...r.value);
  } else {
    for (const k of Object.keys(raw)) {
      if (k !== 'matchLabels' && k !== 'matchExpressions')
        return invalid(
          `${field}.${k}`,
          'is not a field of a label selector: use matchLabels or matchExpressions',
          '{"matchLabels":{"app":"web"}}',
        );
    }
    if (raw.matchLabels !== undefined && raw.matchLabels !== null) {
      if (!isPlainObject(raw.matchLabels))
        return invalid(`${field}.matchLabels`, 'must be a map of label key to value', '{"app":"web"}');
      const r = equalities(raw.matchLabels, `${field}.matchLabels`);
      if (!r.ok) return r;
      requirements.push(...r.value);
    }
    if (raw.matchExpressions !== undefined && raw.matchExpressions !== null) {
      if (!Array.isArray(raw.matchExpressions))
        return invalid(
          `${field}.matchExpressions`,
          'must be a list of {key, operator, values}',
          '[{"key":"tier","operator":"In","values":["web"]}]',
        );
      for (const [i, e] of raw.matchExpressions.entries()) {
        const r = expression(e, `${field}.matchExpressions[${i}]`);
        if (!r.ok) return r;
        requirements.push(r.value);
      }
    }
  }
  if (requirements.length === 0 && (opts.empty ?? 'all') === 'none') return ok(undefined);
  return ok(selectorOf(requirements));
}

function equalities(map: Record<string, unknown>, field: string): Result<Requirement[]> {
  const out: Requirement[] = [];
  for (const [key, value] of Object.entries(map)) {
    const kp = labelKeyProblem(key);
    if (kp) return invalid(`${field}["${key}"]`, `is not a valid label key: it ${kp}`, '{"app":"web"}');
    const vp = labelValueProblem(value);
    if (vp)
      return invalid(
        `${field}["${key}"]`,
        `has an invalid label value ${JSON.stringify(value)}: it ${vp}`,
        '{"app":"web"}',
      );
    out.push({ key, operator: 'In', values: [value as string] });
  }
  return ok(out);
}

function expression(e: unknown, field: string): Result<Requirement> {
  const example = '{"key":"tier","operator":"In","values":["web"]}';
  if (!isPlainObject(e)) return invalid(field, 'must be an object {key, operator, values}', example);
  const kp = labelKeyProblem(e.key);
  if (kp) return invalid(`${field}.key`, `${JSON.stringify(e.key)} is not a valid label key: it ${kp}`, example);
  const operator = e.operator;
  if (typeof operator !== 'string' || !OPERATORS.includes(operator as SelectorOperator))
    return invalid(
      `${field}.operator`,
      `must be In, NotIn, Exists or DoesNotExist, got ${JSON.stringify(operator)}`,
      example,
    );
  const op = operator as SelectorOperator;
  const values = e.values ?? [];
  if (!Array.isArray(values)) return invalid(`${field}.values`, 'must be a list of label values', example);
  if ((op === 'In' || op === 'NotIn') && values.length === 0)
    return invalid(`${field}.values`, `must not be empty when the operator is ${op}`, example);
  if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0)
    return invalid(
      `${field}.values`,
      `must be empty when the operator is ${op}`,
      `{"key":"${String(e.key)}","operator":"${op}"}`,
    );
  for (const [i, v] of values.entries()) {
    const vp = labelValueProblem(v);
    if (vp)
      return invalid(`${field}.values[${i}]`, `${JSON.stringify(v)} is not a valid label value: it ${vp}`, example);
  }
  return ok({ key: e.key as string, operator: op, values: [...new Set(values as string[])].sort() });
}

/** selectorOf builds a Selector from requirements, ordered by key as apimachinery does, with its text. */
export function selectorOf(requirements: readonly Requirement[]): Selector {
  const sorted = [...requirements].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : OPERATORS.indexOf(a.operator) - OPERATORS.indexOf(b.operator),
  );
  return { requirements: sorted, text: sorted.map(requirementText).join(',') };
}

/** requirementText writes one requirement as kubectl's -l does: `app=web`, `tier in (a,b)`, `!canary`, `env`. */
export function requirementText(r: Requirement): string {
  switch (r.operator) {
    case 'In':
      return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(',')})`;
    case 'NotIn':
      return r.values.length === 1 ? `${r.key}!=${r.values[0]}` : `${r.key} notin (${r.values.join(',')})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
  }
}

/** requirementMatches applies one requirement with apimachinery's semantics: NotIn matches an absent key. */
export function requirementMatches(r: Requirement, labels: Labels | undefined): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, r.key);
  switch (r.operator) {
    case 'In':
      return has && r.values.includes(labels[r.key]!);
    case 'NotIn':
      return !has || !r.values.includes(labels[r.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

/** matchesSelector says whether labels satisfy every requirement of the selector. */
export function matchesSelector(selector: Selector, labels: Labels | undefined): boolean {
  for (const r of selector.requirements) if (!requirementMatches(r, labels)) return false;
  return true;
}

/** isPositive says whether a requirement can only match an object that has its key (In, Exists). */
export function isPositive(r: Requirement): boolean {
  return r.operator === 'In' || r.operator === 'Exists';
}

/**
 * NamespaceSelector chooses the namespaces a selector looks in:
 *   labels      namespaces whose labels match (a NetworkPolicy peer's namespaceSelector)
 *   any         every namespace (the Prometheus Operator's `any: true`)
 *   names       these namespaces (the Prometheus Operator's `matchNames`)
 */
export type NamespaceSelector =
  | { readonly type: 'labels'; readonly selector: Selector }
  | { readonly type: 'any' }
  | { readonly type: 'names'; readonly names: readonly string[] };

/**
 * NamespaceSelectorForm is how the API writes a namespace selector:
 *   labelSelector    a label selector over Namespaces; `{}` is every namespace
 *   anyOrMatchNames  the Prometheus Operator's `{any: true}` or `{matchNames: [...]}`; `{}`, `any: false`
 *                    and empty matchNames are the referrer's own namespace
 * Left out, the fields present decide: any or matchNames make the second form.
 */
export type NamespaceSelectorForm = 'labelSelector' | 'anyOrMatchNames';

/**
 * parseNamespaceSelector reads a namespaceSelector in either form: a label
 * selector, or the Prometheus Operator's `{any: true}` / `{matchNames: [...]}`.
 * Undefined means the referrer's own namespace: an absent selector, or one of
 * the second form that names no namespace.
 */
export function parseNamespaceSelector(
  raw: unknown,
  field = 'namespaceSelector',
  form?: NamespaceSelectorForm,
): Result<NamespaceSelector | undefined> {
  if (raw === undefined || raw === null) return ok(undefined);
  const anyOrMatchNames = form === 'anyOrMatchNames' || (isPlainObject(raw) && ('any' in raw || 'matchNames' in raw));
  if (anyOrMatchNames) {
    const example = '{"matchNames":["shop"]} or {"any":true}';
    if (!isPlainObject(raw))
      return invalid(field, `must be an object {any, matchNames}, got ${JSON.stringify(raw)}`, example);
    for (const k of Object.keys(raw))
      if (k !== 'any' && k !== 'matchNames')
        return invalid(`${field}.${k}`, 'is not a field of this namespace selector: use any or matchNames', example);
    if (raw.any !== undefined && raw.any !== true && raw.any !== false)
      return invalid(`${field}.any`, `must be true or false, got ${JSON.stringify(raw.any)}`, '{"any":true}');
    if (raw.any === true) return ok({ type: 'any' });
    const names = raw.matchNames ?? [];
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || !DNS_SUBDOMAIN.test(n)))
      return invalid(`${field}.matchNames`, 'must be a list of namespace names', '{"matchNames":["shop"]}');
    if (names.length === 0) return ok(undefined);
    return ok({ type: 'names', names: [...new Set(names as string[])].sort() });
  }
  const s = parseSelector(raw, { form: 'labelSelector', empty: 'all', field });
  if (!s.ok) return s;
  return ok({ type: 'labels', selector: s.value! });
}

/** namespaceSelectorText writes a namespace selector for messages: `namespaces app=web`, `any namespace`, `namespaces a, b`. */
export function namespaceSelectorText(ns: NamespaceSelector): string {
  if (ns.type === 'any') return 'any namespace';
  if (ns.type === 'names') return `namespaces ${ns.names.join(', ')}`;
  return ns.selector.text === '' ? 'every namespace' : `namespaces with ${ns.selector.text}`;
}
