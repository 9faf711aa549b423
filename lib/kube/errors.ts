import type { WatchError, WatchErrorReason, WatchTarget } from '../engine/informer-source';
import { kindKey } from '../model';

/**
 * KubeRequestError is a request the API server refused or never answered.
 * status is the HTTP status, or 0 when no response came (connection refused,
 * reset, DNS). Its message never carries a credential.
 */
export class KubeRequestError extends Error {
  readonly status: number;
  /** The server's Status reason (`Expired`, `Forbidden`, ...) or the socket error code. */
  readonly reason: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly url: string;

  constructor(status: number, message: string, opts: { url: string; reason?: string; retryAfterMs?: number }) {
    super(message);
    this.name = 'KubeRequestError';
    this.status = status;
    this.reason = opts.reason;
    this.retryAfterMs = opts.retryAfterMs;
    this.url = opts.url;
  }
}

/** WatchFailure carries a WatchError through a throw; the Reflector reports its `watchError` as is. */
export class WatchFailure extends Error {
  readonly watchError: WatchError;
  constructor(watchError: WatchError) {
    super(watchError.message);
    this.name = 'WatchFailure';
    this.watchError = watchError;
  }
}

export function watchError(reason: WatchErrorReason, message: string, extra: Partial<WatchError> = {}): WatchError {
  return { reason, message, at: Date.now(), ...extra };
}

export function kindUnknown(target: { group: string; kind: string }): WatchFailure {
  return new WatchFailure(
    watchError('KindUnknown', `no resource serves kind ${kindKey(target)}: is its CustomResourceDefinition installed?`),
  );
}

/** isAbortError reports whether e is the rejection of an aborted request or sleep. */
export function isAbortError(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || (e as { code?: string }).code === 'ABORT_ERR');
}

/** parseRetryAfter reads a Retry-After header (seconds or an HTTP date) as milliseconds. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** missingRule is the RBAC rule a watch of target needs. */
export function missingRule(target: WatchTarget, resource: string): NonNullable<WatchError['missingRule']> {
  const rule: NonNullable<WatchError['missingRule']> = { verbs: ['list', 'watch'], apiGroup: target.group, resource };
  if (target.namespace) rule.namespace = target.namespace;
  return rule;
}

/** formatRule renders a missing RBAC rule the way a Role manifest spells it. */
export function formatRule(rule: NonNullable<WatchError['missingRule']>): string {
  const where = rule.namespace ? ` in namespace ${rule.namespace}` : ' cluster-wide';
  return `{verbs: [${rule.verbs.join(', ')}], apiGroups: ["${rule.apiGroup}"], resources: [${rule.resource}]}${where}`;
}

/**
 * Redactor replaces every known secret in a text with `[redacted]`. The
 * client feeds it the kubeconfig's credentials, and then every credential
 * read or received later (a rotated token file, an exec plugin's token), so
 * that no message built from a library or socket error can leak one.
 */
export class Redactor {
  /** Longest first, so a secret containing another is replaced whole. */
  private readonly secrets: string[] = [];
  private readonly known = new Set<string>();
  constructor(secrets: Iterable<string>) {
    for (const s of secrets) this.add(s);
  }
  /** add makes a secret known from now on; shorter than 4 characters, it would redact common words, and is ignored. */
  add(secret: string): void {
    if (secret.length < 4 || this.known.has(secret)) return;
    this.known.add(secret);
    const i = this.secrets.findIndex((s) => s.length < secret.length);
    this.secrets.splice(i < 0 ? this.secrets.length : i, 0, secret);
  }
  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out.replace(/\/\/[^/@\s]+:[^/@\s]+@/g, '//[redacted]@');
  }
}
