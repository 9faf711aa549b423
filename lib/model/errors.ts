/**
 * RefwatchError is an error a person can act on: it names the offending field,
 * says what is wrong, and (where one helps) shows a valid example.
 */
export class RefwatchError extends Error {
  /** A brand, because bundlers may load this module twice and break instanceof. */
  readonly refwatchError = true;
  readonly code: string;
  readonly field: string | undefined;
  readonly example: string | undefined;

  constructor(code: string, message: string, opts: { field?: string; example?: string; cause?: unknown } = {}) {
    super(opts.example ? `${message} (example: ${opts.example})` : message, { cause: opts.cause });
    this.name = 'RefwatchError';
    this.code = code;
    this.field = opts.field;
    this.example = opts.example;
  }
}

/** isRefwatchError recognises a RefwatchError from any copy of this module. */
export function isRefwatchError(e: unknown): e is RefwatchError {
  return (
    e instanceof RefwatchError || (e instanceof Error && (e as { refwatchError?: unknown }).refwatchError === true)
  );
}

/** Result is how pure functions in lib/model report failure without throwing. */
export type Result<T, E = RefwatchError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw r.error;
  return r.value;
}
