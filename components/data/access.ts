/**
 * The dashboard's access token. A server bound beyond loopback answers reads
 * only with its token: the first 401 asks the user for it (TokenDialog), and
 * the tab keeps it in sessionStorage, so it is asked once per tab and never
 * outlives the tab. Every API request sends it as `Authorization: Bearer`;
 * the stream, which EventSource opens without headers, sends it as
 * ?access_token=, the one place the server accepts it there.
 */

const STORAGE_KEY = 'refwatch.token';

export interface AccessState {
  /** The server answered 401: the dialog should ask. */
  needed: boolean;
  /** The token sent was refused (rather than missing). */
  rejected: boolean;
  /** Bumped on every new token, so subscribers reconnect and refetch. */
  generation: number;
}

let state: AccessState = { needed: false, rejected: false, generation: 0 };
const listeners = new Set<() => void>();

function storage(): Storage | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
  } catch {
    return undefined; // storage disabled: the token lasts as long as the page
  }
}

let memory: string | undefined;

export function accessToken(): string | undefined {
  return storage()?.getItem(STORAGE_KEY) ?? memory;
}

function set(next: Partial<AccessState>): void {
  state = { ...state, ...next };
  for (const l of listeners) l();
}

export function accessState(): AccessState {
  return state;
}

export function subscribeAccess(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** provideToken keeps the token for this tab; subscribers then retry what failed. */
export function provideToken(token: string): void {
  const s = storage();
  if (s) s.setItem(STORAGE_KEY, token);
  else memory = token;
  set({ needed: false, rejected: false, generation: state.generation + 1 });
}

/** tokenRefused records a 401: the token is missing or wrong, and the dialog asks. */
export function tokenRefused(): void {
  const had = accessToken() !== undefined;
  storage()?.removeItem(STORAGE_KEY);
  memory = undefined;
  if (!state.needed) set({ needed: true, rejected: had });
}

/** authHeaders adds the bearer token, when the tab has one, to a request's headers. */
export function authHeaders(headers: Record<string, string> = {}): Record<string, string> {
  const token = accessToken();
  return token ? { ...headers, authorization: `Bearer ${token}` } : headers;
}

/** apiFetch is fetch with the token; a 401 asks the user for it. */
export async function apiFetch(
  url: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  const res = await fetch(url, { ...init, headers: authHeaders(init.headers) });
  if (res.status === 401) tokenRefused();
  return res;
}

/** withAccessToken adds ?access_token= to the stream's URL, when the tab has a token. */
export function withAccessToken(url: string): string {
  const token = accessToken();
  if (!token) return url;
  return `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`;
}
