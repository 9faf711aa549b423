/**
 * Status objects shaped as kube-apiserver's apimachinery/pkg/api/errors builds
 * them, and ApiError, which carries one to the response writer.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** GroupResource names a resource the way error messages do: `configmaps`, `databases.demo.refwatch.dev`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function groupResourceString(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** ApiError is a failed request: its Status is the response body, code its HTTP status. */
export class ApiError extends Error {
  readonly status: Status;
  readonly headers: Record<string, string>;

  constructor(status: Status, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? 'request failed');
    this.name = 'ApiError';
    this.status = status;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code ?? 500;
  }
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason };
  if (details) s.details = compactDetails(details);
  s.code = code;
  return s;
}

// Go's omitempty drops empty strings; mirror it so bodies compare equal to the real server's.
function compactDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes && d.causes.length > 0) out.causes = d.causes;
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

function details(gr: GroupResource, name?: string): StatusDetails {
  return { name, group: gr.group, kind: gr.resource };
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(failure(404, 'NotFound', `${groupResourceString(gr)} "${name}" not found`, details(gr, name)));
}

/** The body kube-apiserver answers for a path that names no served resource. */
export function resourceNotFound(): ApiError {
  return new ApiError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(409, 'AlreadyExists', `${groupResourceString(gr)} "${name}" already exists`, details(gr, name)),
  );
}

export function conflict(gr: GroupResource, name: string, why: string): ApiError {
  return new ApiError(
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${why}`,
      details(gr, name),
    ),
  );
}

/** fieldManagerConflict is server-side apply's 409: message says it all, one cause per conflicting field. */
export function fieldManagerConflict(message: string, causes: StatusCause[]): ApiError {
  return new ApiError(failure(409, 'Conflict', message, { causes }));
}

export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

/** FieldError is one entry of a field.ErrorList. */
export interface FieldError {
  type:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueForbidden'
    | 'FieldValueNotSupported'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong';
  field: string;
  /** The body as field.Error.ErrorBody() renders it, e.g. `Invalid value: "Foo": …`. */
  body: string;
}

export function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, body: `Invalid value: ${goValue(value)}: ${detail}` };
}

export function fieldRequired(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, body: detail ? `Required value: ${detail}` : 'Required value' };
}

export function fieldForbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, body: `Forbidden: ${detail}` };
}

export function fieldNotSupported(field: string, value: unknown, supported: string[]): FieldError {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return {
    type: 'FieldValueNotSupported',
    field,
    body: `Unsupported value: ${goValue(value)}: supported values: ${list}`,
  };
}

function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** invalid is errors.NewInvalid: 422 with one cause per field error. */
export function invalid(group: string, kind: string, name: string, errs: FieldError[]): ApiError {
  const qualified = group === '' ? kind : `${kind}.${group}`;
  const rendered = errs.map((e) => (e.field ? `${e.field}: ${e.body}` : e.body));
  const aggregate = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  const message =
    errs.length === 0 ? `${qualified} "${name}" is invalid` : `${qualified} "${name}" is invalid: ${aggregate}`;
  const causes = errs.map((e) => ({ reason: e.type, message: e.body, field: e.field }));
  return new ApiError(failure(422, 'Invalid', message, { name, group, kind, causes }));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, 'BadRequest', message));
}

export function unauthorized(): ApiError {
  return new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function forbidden(gr: GroupResource, name: string, reason: string): ApiError {
  const subject = name ? `${groupResourceString(gr)} "${name}"` : groupResourceString(gr);
  return new ApiError(failure(403, 'Forbidden', `${subject} is forbidden: ${reason}`, details(gr, name)));
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
  );
}

/** expired is errors.NewResourceExpired: 410 with reason Expired. */
export function expired(message: string): ApiError {
  return new ApiError(failure(410, 'Expired', message));
}

export function tooLarge(limit: number): ApiError {
  return new ApiError(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`));
}

export function unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
  return new ApiError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {
        kind: contentType,
      },
    ),
  );
}

/**
 * notAcceptable is a 406. go-restful's refusal of the media type carries
 * empty details; the apiserver's negotiator and converters carry none.
 */
export function notAcceptable(message: string, emptyDetails = false): ApiError {
  return new ApiError(failure(406, 'NotAcceptable', message, emptyDetails ? {} : undefined));
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(
    failure(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds }),
    {
      'Retry-After': String(retryAfterSeconds),
    },
  );
}

export function internalError(message: string, retryAfterSeconds?: number): ApiError {
  const headers: Record<string, string> = retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {};
  return new ApiError(
    failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }], retryAfterSeconds }),
    headers,
  );
}

/** tooLargeResourceVersion is storage's TooLargeResourceVersionError as the handler renders it. */
export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(
    failure(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
    { 'Retry-After': '1' },
  );
}

/** success is the Status a delete answers when the store does not return the deleted object. */
export function success(gr: GroupResource, name: string, uid: string): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: compactDetails({ name, group: gr.group, kind: gr.resource, uid }),
  };
}

/** asApiError turns anything thrown inside a handler into a 500 Status, keeping ApiErrors as they are. */
export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return internalError(message);
}
