import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SnapshotStream, type EventSourceLike } from '@/components/data/stream';

const TOKEN = 'tab-token-0123456789abcdef';

/** A sessionStorage for the tab; each test loads access.ts afresh, as a new tab would. */
class MemoryStorage {
  private items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, v);
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

let storage: MemoryStorage;
let access: typeof import('@/components/data/access');
const fetches: { url: string; headers: Record<string, string> }[] = [];
let status = 200;

beforeEach(async () => {
  storage = new MemoryStorage();
  vi.stubGlobal('sessionStorage', storage);
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    fetches.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    return new Response('{}', { status });
  });
  fetches.length = 0;
  status = 200;
  vi.resetModules();
  access = await import('@/components/data/access');
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the dashboard token', () => {
  it('sends no Authorization until the server asks, then asks once and sends the token on every request', async () => {
    const changes = vi.fn();
    access.subscribeAccess(changes);
    await access.apiFetch('/api/v1/snapshot', { headers: { accept: 'application/json' } });
    expect(fetches[0]!.headers).toEqual({ accept: 'application/json' });
    expect(access.accessState().needed).toBe(false);

    status = 401;
    await access.apiFetch('/api/v1/snapshot');
    await access.apiFetch('/api/v1/explain?object=x');
    expect(access.accessState()).toMatchObject({ needed: true, rejected: false });
    expect(changes).toHaveBeenCalledTimes(1);

    access.provideToken(TOKEN);
    expect(access.accessState()).toMatchObject({ needed: false, generation: 1 });
    expect(storage.getItem('refwatch.token')).toBe(TOKEN);
    status = 200;
    await access.apiFetch('/api/v1/snapshot', { headers: { accept: 'application/json' } });
    expect(fetches.at(-1)!.headers).toEqual({ accept: 'application/json', authorization: `Bearer ${TOKEN}` });
  });

  it('forgets a token the server refuses and asks again, saying it was refused', async () => {
    access.provideToken('wrong-token-0123456789');
    status = 401;
    await access.apiFetch('/api/v1/snapshot');
    expect(access.accessState()).toMatchObject({ needed: true, rejected: true });
    expect(access.accessToken()).toBeUndefined();
  });

  it('keeps the token for the tab only: a new page load of the same tab finds it', async () => {
    access.provideToken(TOKEN);
    vi.resetModules();
    const reloaded = await import('@/components/data/access');
    expect(reloaded.accessToken()).toBe(TOKEN);
  });

  it('puts the token on the stream URL, which EventSource opens without headers', async () => {
    const urls: string[] = [];
    const source = (url: string): EventSourceLike => {
      urls.push(url);
      return { readyState: 0, onopen: null, onerror: null, addEventListener() {}, close() {} };
    };
    const sink = { snapshot() {}, deltas() {}, cluster() {}, resync() {}, state() {} };
    const stream = new SnapshotStream(sink, {
      createEventSource: source,
      requestFrame: () => 0,
      cancelFrame: () => {},
    });
    stream.start();
    access.provideToken(TOKEN);
    stream.reconnect();
    await stream.stop();
    expect(urls[0]).toBe('/api/v1/stream');
    expect(urls[1]).toBe(`/api/v1/stream?access_token=${TOKEN}`);
  });
});
