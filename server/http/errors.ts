import { isRefwatchError } from '../../lib/model';

/** ApiError is an error the API answers with: a 4xx or 5xx and `{error: {code, message, field?}}`. */
export class ApiError extends Error {
  /** A brand, because bundlers may load this module twice and break instanceof. */
  readonly apiError = true;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError || (e instanceof Error && (e as { apiError?: unknown }).apiError === true);
}

export function errorBody(
  code: string,
  message: string,
  field?: string,
): { error: { code: string; message: string; field?: string } } {
  return { error: field === undefined ? { code, message } : { code, message, field } };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

/**
 * toResponse turns any thrown value into an API error response. Known errors
 * keep their message; anything else becomes a 500 with no detail, so no stack
 * trace or internal message ever reaches a client. The full error goes to the
 * server log.
 */
export function toResponse(e: unknown): Response {
  if (isApiError(e)) return json(errorBody(e.code, e.message, e.field), e.status, e.headers);
  if (isRefwatchError(e)) return json(errorBody(e.code, e.message, e.field), 400);
  console.error('refwatch: internal error while serving a request:', e);
  return json(errorBody('Internal', 'internal error; the server log has the details'), 500);
}

/** handle wraps a route handler so that nothing it throws escapes as a stack trace. */
export function handle<A extends unknown[]>(
  fn: (...args: A) => Promise<Response> | Response,
): (...args: A) => Promise<Response> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (e) {
      return toResponse(e);
    }
  };
}
