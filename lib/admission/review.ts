import { isRecord } from '../rules/field-path';
import type { RuleSet } from '../rules/rule-set';
import type { KubeObject } from '../model';
import { checkObject, type Finding } from './check';
import type { ReferentLookup } from './referent-lookup';

/** The namespace label that turns the warnings of its objects into a denial. */
export const ENFORCE_LABEL = 'refwatch.dev/enforce';
export const ENFORCE_DENY = 'deny';

/** kube-apiserver keeps warnings short and few: refwatch sends at most this many, each at most this long. */
export const MAX_WARNINGS = 10;
export const MAX_WARNING_LENGTH = 256;

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  warnings?: string[];
  status?: { code: number; reason: string; message: string };
}

export interface AdmissionReviewOut {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** AdmissionDeps are what a review reads: the rules, the caches, and a namespace's labels. */
export interface AdmissionDeps {
  ruleSet: RuleSet;
  lookup: ReferentLookup;
  /** A namespace's labels from a cache; undefined when not known, which never denies. */
  namespaceLabels?: (namespace: string) => Readonly<Record<string, string>> | undefined;
  /** Told of each finding of a request that is not a dry run (the grace tracker listens). */
  onFindings?: (object: KubeObject, findings: readonly Finding[]) => void;
  /** Told of an error inside the check; the answer is still allowed: true. */
  onError?: (error: unknown) => void;
}

/** AdmissionVerdict is the review's answer, before it is wrapped in an AdmissionReview. */
export interface AdmissionVerdict {
  allowed: boolean;
  warnings: string[];
  findings: Finding[];
  message?: string;
}

/**
 * admit checks one object of a create or update. It never throws, and it
 * denies only when the object's namespace carries refwatch.dev/enforce=deny
 * and there is something to warn about.
 */
export function admit(
  deps: AdmissionDeps,
  req: { operation?: unknown; object?: unknown; namespace?: unknown; dryRun?: unknown },
): AdmissionVerdict {
  try {
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { allowed: true, warnings: [], findings: [] };
    const object = req.object;
    if (!isRecord(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string')
      return { allowed: true, warnings: [], findings: [] };
    const meta = isRecord(object.metadata) ? object.metadata : {};
    const namespace =
      typeof meta.namespace === 'string' && meta.namespace !== ''
        ? meta.namespace
        : typeof req.namespace === 'string'
          ? req.namespace
          : '';
    const name = typeof meta.name === 'string' ? meta.name : '';
    // Rules read the name and namespace from metadata: a copy only when the object lacks them.
    const obj = (
      meta.name === name && meta.namespace === namespace
        ? object
        : { ...object, metadata: { ...meta, name, namespace } }
    ) as KubeObject;
    const findings = checkObject(deps.ruleSet, deps.lookup, obj);
    if (findings.length === 0) return { allowed: true, warnings: [], findings };
    const warnings = warningsOf(findings);
    if (req.dryRun !== true) deps.onFindings?.(obj, findings);
    if (namespace !== '' && deps.namespaceLabels?.(namespace)?.[ENFORCE_LABEL] === ENFORCE_DENY) {
      const list = findings.map((f) => f.message).join('; ');
      return {
        allowed: false,
        warnings,
        findings,
        message: `refwatch: namespace ${namespace} has ${ENFORCE_LABEL}=${ENFORCE_DENY}, and this object has ${findings.length} dangling reference${findings.length === 1 ? '' : 's'}: ${list}`,
      };
    }
    return { allowed: true, warnings, findings };
  } catch (e) {
    deps.onError?.(e);
    return { allowed: true, warnings: [], findings: [] };
  }
}

/**
 * reviewAdmission answers an AdmissionReview v1 request body (already
 * parsed JSON, or anything else). Whatever the input, it returns a response
 * and never throws; only an enforcing namespace gets allowed: false.
 */
export function reviewAdmission(deps: AdmissionDeps, body: unknown): AdmissionReviewOut {
  let uid = '';
  try {
    const req = isRecord(body) && isRecord(body.request) ? body.request : undefined;
    if (req && typeof req.uid === 'string') uid = req.uid;
    const v = req ? admit(deps, req) : { allowed: true, warnings: [], findings: [] };
    const response: AdmissionResponse = { uid, allowed: v.allowed };
    if (v.warnings.length > 0) response.warnings = v.warnings;
    if (!v.allowed) response.status = { code: 403, reason: 'Forbidden', message: v.message ?? 'refwatch: denied' };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  } catch (e) {
    deps.onError?.(e);
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } };
  }
}

/** warningsOf keeps findings to kube-apiserver's warning rules: one line each, short, and few. */
export function warningsOf(findings: readonly Finding[]): string[] {
  const lines = findings.map((f) => oneLine(f.message));
  if (lines.length <= MAX_WARNINGS) return lines;
  const more = lines.length - (MAX_WARNINGS - 1);
  return [...lines.slice(0, MAX_WARNINGS - 1), `refwatch: ${more} more dangling references not shown`];
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]+/g;

function oneLine(text: string): string {
  const flat = text.replace(CONTROL, ' ');
  return flat.length <= MAX_WARNING_LENGTH ? flat : `${flat.slice(0, MAX_WARNING_LENGTH - 1)}…`;
}
