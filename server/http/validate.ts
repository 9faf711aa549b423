import { z } from 'zod';
import { ApiError } from './errors';

/**
 * parseQuery validates a URL's query string against a strict schema: unknown
 * parameters, repeated parameters and wrong types are 400s naming the parameter.
 */
export function parseQuery<S extends z.ZodRawShape>(url: URL, shape: S): z.infer<z.ZodObject<S>> {
  const raw: Record<string, string> = {};
  for (const key of url.searchParams.keys()) {
    if (!(key in shape)) {
      throw new ApiError(
        400,
        'UnknownParameter',
        `unknown query parameter "${key}"; accepted: ${Object.keys(shape).join(', ') || 'none'}`,
        key,
      );
    }
    const all = url.searchParams.getAll(key);
    if (all.length > 1)
      throw new ApiError(
        400,
        'RepeatedParameter',
        `query parameter "${key}" is given ${all.length} times; give it once`,
        key,
      );
    raw[key] = all[0]!;
  }
  const r = z.strictObject(shape).safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    throw new ApiError(400, 'InvalidParameter', `query parameter "${field}": ${issue.message}`, field);
  }
  return r.data;
}

export const MAX_BODY_BYTES = 64 * 1024;

/** readJsonBody reads a bounded JSON body and validates it; errors name the field. */
export async function readJsonBody<S extends z.ZodType>(req: Request, schema: S): Promise<z.infer<S>> {
  const type = req.headers.get('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/json')) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `send the body as application/json (got "${type || 'no content-type'}")`,
      'content-type',
    );
  }
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES)
    throw new ApiError(413, 'BodyTooLarge', `the body has ${declared} bytes; at most ${MAX_BODY_BYTES} are accepted`);
  const reader = req.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel();
        throw new ApiError(413, 'BodyTooLarge', `the body has more than ${MAX_BODY_BYTES} bytes; send less`);
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let value: unknown;
  try {
    value = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(400, 'InvalidJSON', 'the body is not valid JSON');
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.map(String).join('.') || '(body)';
    throw new ApiError(400, 'InvalidBody', `${field}: ${issue.message}`, field);
  }
  return r.data;
}
