import { groupOfApiVersion, kindKey, type KubeObject } from '../model';
import { isRecord } from './field-path';
import type { RuleSet } from './rule-set';

/** ReferenceNote mirrors the engine's: what diagnosis adds to a reference that is not Ready. */
export interface RuleReferenceNote {
  blocking?: boolean;
  label?: string;
  impact?: string;
}

const ADMISSION = 'admissionregistration.k8s.io';
const WEBHOOK_PATH = /^webhooks\[(\d+)\]\.clientConfig\.service\.name$/;
const OWNER_PATH = /^metadata\.ownerReferences\[(\d+)\]\.name$/;

/**
 * referenceNote says, for a reference the rules found at fieldPath in obj and
 * whose referent is in `state` (NotFound, NotReady…), whether it blocks (a
 * rule of severity warn does not), how to name the referrer's condition
 * (`orphaned` for a controller owner that is gone) and what it breaks
 * meanwhile: a webhook's blast radius, an APIService's group, a CRD's
 * conversions. Undefined when there is nothing to add.
 */
export function referenceNote(
  rs: RuleSet,
  obj: KubeObject,
  fieldPath: string,
  state: string,
): RuleReferenceNote | undefined {
  if (state === 'Ready') return undefined;
  const group = typeof obj.apiVersion === 'string' ? groupOfApiVersion(obj.apiVersion) : '';
  const pattern = fieldPath.replace(/\[\d+\]/g, '[*]');
  const rule = (rs.rules.get(kindKey({ group, kind: obj.kind })) ?? []).find(
    (r) => r.path.source.replace(/^\./, '') === pattern,
  );
  if (!rule) return undefined;
  const note: RuleReferenceNote = {};
  if (rule.severity === 'warn') note.blocking = false;
  const missing = state === 'NotFound' ? 'is missing' : 'is not available';

  const owner = OWNER_PATH.exec(fieldPath);
  if (owner) {
    const ref = listAt(obj.metadata, 'ownerReferences')[Number(owner[1])];
    if (state === 'NotFound' && ref?.controller === true) {
      note.label = 'orphaned';
      note.impact = `its controller ${String(ref.kind)} is gone, so nothing manages ${obj.kind} ${obj.metadata?.name ?? ''} any more; the garbage collector normally deletes it soon: if it stays, delete it or remove the ownerReference`;
    }
  } else if (group === ADMISSION && obj.kind.endsWith('WebhookConfiguration')) {
    const m = WEBHOOK_PATH.exec(fieldPath);
    const webhook = m ? listAt(obj, 'webhooks')[Number(m[1])] : undefined;
    if (webhook) note.impact = webhookBlastRadius(webhook, missing);
  } else if (obj.kind === 'APIService' && isRecord(obj.spec)) {
    const gv = `${String(obj.spec.group ?? '')}/${String(obj.spec.version ?? '')}`;
    note.impact = `every request to ${gv} fails with 503 and discovery of it is incomplete while this Service ${missing}`;
  } else if (obj.kind === 'CustomResourceDefinition' && isRecord(obj.spec)) {
    const names = isRecord(obj.spec.names) ? obj.spec.names : {};
    const resource = `${String(names.plural ?? obj.metadata?.name ?? '')}.${String(obj.spec.group ?? '')}`;
    note.impact = `reading or writing ${resource} at any version other than the stored one fails while this Service ${missing}`;
  }
  return Object.keys(note).length > 0 ? note : undefined;
}

/**
 * webhookBlastRadius says which requests one webhook breaks: its operations
 * and resources (from rules), where (namespaceSelector, objectSelector) and
 * how (failurePolicy, Fail by default in admissionregistration.k8s.io/v1).
 */
export function webhookBlastRadius(webhook: Record<string, unknown>, missing = 'is missing'): string {
  const policy = webhook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail';
  const ops = new Set<string>();
  const resources = new Set<string>();
  for (const rule of listAt(webhook, 'rules')) {
    for (const op of strings(rule.operations)) ops.add(op === '*' ? 'every operation' : op);
    const groups = strings(rule.apiGroups);
    for (const res of strings(rule.resources)) {
      const name = res === '*' ? 'every resource' : res;
      if (groups.length === 0 || res === '*') resources.add(name);
      for (const g of groups)
        resources.add(g === '' || res === '*' ? name : g === '*' ? `${name} (any group)` : `${name}.${g}`);
    }
  }
  const what = `${list(ops, 'no operation')} of ${list(resources, 'no resource')}`;
  const where = `${selectorText(webhook.namespaceSelector, 'in all namespaces', 'in namespaces matching')}${selectorText(webhook.objectSelector, '', ' for objects matching')}`;
  return policy === 'Fail'
    ? `failurePolicy Fail: every ${what} ${where} fails while this Service ${missing}`
    : `failurePolicy Ignore: ${what} ${where} goes through unchecked while this Service ${missing}`;
}

function selectorText(sel: unknown, empty: string, prefix: string): string {
  if (!isRecord(sel)) return empty;
  const parts: string[] = [];
  if (isRecord(sel.matchLabels)) for (const [k, v] of Object.entries(sel.matchLabels)) parts.push(`${k}=${String(v)}`);
  if (Array.isArray(sel.matchExpressions))
    for (const e of sel.matchExpressions)
      if (isRecord(e))
        parts.push(
          `${String(e.key)} ${String(e.operator)}${Array.isArray(e.values) ? ` (${e.values.map(String).join(', ')})` : ''}`,
        );
  return parts.length === 0 ? empty : `${prefix} ${parts.join(', ')}`;
}

function list(items: Set<string>, none: string): string {
  const a = [...items];
  if (a.length === 0) return none;
  return a.length === 1 ? a[0]! : `${a.slice(0, -1).join(', ')} and ${a.at(-1)!}`;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function listAt(holder: unknown, field: string): Record<string, unknown>[] {
  if (!isRecord(holder)) return [];
  const v = holder[field];
  return Array.isArray(v) ? v.map((x) => (isRecord(x) ? x : {})) : [];
}
