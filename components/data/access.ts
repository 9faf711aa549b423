/**
 * The dashboard's access token. A server bound beyond loopback answers reads
 * only with its token: the first 401 asks the user for it (TokenDialog), and
 * the tab keeps it in sessionStorage, so it is asked once per tab and never
 * outlives the tab. Every API request sends it as `Authorization: Bearer`.
 * The stream, which EventSource opens without headers, never carries it: a
 * ticket, asked for with the token, opens one connection within 60 s instead,
 * so what a proxy's access log records of the URL soon opens nothing.
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

/**
 * withStreamTicket is the stream's URL as this tab may open it: unchanged
 * without a token, else with a fresh ticket (POST /api/v1/stream/tickets).
 * A refused token asks the user again; any failure rejects, and the stream
 * retries.
 */
export function withStreamTicket(url: string): string | Promise<string> {
  if (!accessToken()) return url;
  return apiFetch('/api/v1/stream/tickets', { method: 'POST', headers: { accept: 'application/json' } }).then(
    async (res) => {
      if (!res.ok) throw new Error(`POST /api/v1/stream/tickets answered ${res.status}`);
      const { ticket } = (await res.json()) as { ticket?: unknown };
      if (typeof ticket !== 'string') throw new Error('POST /api/v1/stream/tickets gave no ticket');
      return `${url}${url.includes('?') ? '&' : '?'}ticket=${encodeURIComponent(ticket)}`;
    },
  );
}
