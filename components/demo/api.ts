import { apiFetch } from '../data/access';
import type { DemoRunRequest } from './request';
import type { DemoRunView } from './runView';

const BASE = '/api/v1/demo/runs';

/** DemoApiError is the API's `{error: {code, message, field}}` with the HTTP status. */
export class DemoApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'DemoApiError';
  }
}

/** parseApiError reads the error envelope; a body that is not one still yields a message naming the request. */
export function parseApiError(status: number, body: unknown, what: string): DemoApiError {
  const e = (body as { error?: unknown } | null)?.error;
  if (e && typeof e === 'object') {
    const o = e as Record<string, unknown>;
    const message = typeof o.message === 'string' ? o.message : `${what} answered ${status}`;
    return new DemoApiError(
      message,
      status,
      typeof o.code === 'string' ? o.code : String(status),
      typeof o.field === 'string' ? o.field : undefined,
    );
  }
  return new DemoApiError(`${what} answered ${status}`, status, String(status));
}

async function call<T>(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  const what = `${method} ${url}`;
  let res: Response;
  try {
    res = await apiFetch(url, {
      method,
      signal,
      cache: 'no-store',
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new DemoApiError(`${what} failed: the refwatch server did not answer`, 0, 'Unreachable');
  }
  let parsed: unknown = undefined;
  try {
    parsed = await res.json();
  } catch {
    // an empty or non-JSON body; the status says enough
  }
  if (!res.ok) throw parseApiError(res.status, parsed, what);
  return parsed as T;
}

export const listRuns = (signal?: AbortSignal) =>
  call<{ items: DemoRunView[] }>('GET', BASE, undefined, signal).then((r) => r.items ?? []);
export const getRun = (id: string, signal?: AbortSignal) =>
  call<DemoRunView>('GET', `${BASE}/${encodeURIComponent(id)}`, undefined, signal);
export const startRun = (body: DemoRunRequest) => call<DemoRunView>('POST', BASE, body);
/** stopRun stops the run if it is going and keeps its objects and exports until deleteRun; the answer is its state. */
export const stopRun = (id: string) => call<DemoRunView>('POST', `${BASE}/${encodeURIComponent(id)}/stop`);
/** deleteRun stops the run if it is going, deletes its objects and forgets it; the answer is its final state. */
export const deleteRun = (id: string) => call<DemoRunView>('DELETE', `${BASE}/${encodeURIComponent(id)}`);
export const exportUrl = (id: string, format: 'json' | 'csv') => `${BASE}/${encodeURIComponent(id)}?format=${format}`;

export const DEMO_QUERY_KEY = ['demo'] as const;
