import { groupOfApiVersion, kindOfKey, nameOfKey, namespaceOfKey, parseKindKey, type KubeObject } from '../model';
import { isRecord } from './field-path';
import { GATEWAY_GROUP } from './packs/gateway';
/** The kind key of Gateway API's ReferenceGrant. */
export const REFERENCE_GRANT = `ReferenceGrant.${GATEWAY_GROUP}`;

/** GrantRequest is one cross-namespace reference that a ReferenceGrant must allow. */
export interface GrantRequest {
  from: { group: string; kind: string; namespace: string };
  to: { group: string; kind: string; namespace: string; name: string };
}

/** grantRequest describes a reference from `referrer` to the referent key, or undefined when both share a namespace. */
export function grantRequest(referrer: KubeObject, referent: string): GrantRequest | undefined {
  const fromNamespace = typeof referrer.metadata?.namespace === 'string' ? referrer.metadata.namespace : '';
  const toNamespace = namespaceOfKey(referent);
  if (fromNamespace === '' || toNamespace === '' || fromNamespace === toNamespace) return undefined;
  const gk = parseKindKey(kindOfKey(referent));
  if (!gk.ok) return undefined;
  return {
    from: { group: groupOfApiVersion(String(referrer.apiVersion)), kind: referrer.kind, namespace: fromNamespace },
    to: { ...gk.value, namespace: toNamespace, name: nameOfKey(referent) },
  };
}

/**
 * grantAllows: does this ReferenceGrant allow the request? As Gateway API
 * defines it: the grant sits in the referent's namespace, one `from` entry
 * names the referrer's group, kind and namespace, and one `to` entry names
 * the referent's group and kind, and its name unless `name` is empty.
 */
export function grantAllows(grant: KubeObject, req: GrantRequest): boolean {
  if (grant.metadata?.namespace !== req.to.namespace || !isRecord(grant.spec)) return false;
  const entries = (v: unknown) => (Array.isArray(v) ? v.filter(isRecord) : []);
  const from = entries(grant.spec.from).some(
    (f) => (f.group ?? '') === req.from.group && f.kind === req.from.kind && f.namespace === req.from.namespace,
  );
  if (!from) return false;
  return entries(grant.spec.to).some(
    (t) =>
      (t.group ?? '') === req.to.group &&
      t.kind === req.to.kind &&
      (t.name === undefined || t.name === '' || t.name === req.to.name),
  );
}

/** notPermitted is the message of Gateway API's RefNotPermitted for one request, and the fix: the grant to create. */
export function notPermitted(req: GrantRequest, referrerName: string): { message: string; fix: string } {
  const what = `${req.from.kind} ${req.from.namespace}/${referrerName}`;
  const to = `${req.to.kind} ${req.to.namespace}/${req.to.name}`;
  return {
    message: `RefNotPermitted: no ReferenceGrant in namespace ${req.to.namespace} allows ${what} to refer to ${to}`,
    fix: `create a ReferenceGrant in namespace ${req.to.namespace} with from {group: ${req.from.group}, kind: ${req.from.kind}, namespace: ${req.from.namespace}} and to {group: '${req.to.group}', kind: ${req.to.kind}, name: ${req.to.name}}, or move the ${req.to.kind} into namespace ${req.from.namespace}`,
  };
}
