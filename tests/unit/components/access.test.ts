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

  it('never puts the token on the stream URL: a ticket asked for with it opens the stream instead', async () => {
    const urls: string[] = [];
    const sources: { onerror: ((ev: Event) => void) | null; readyState: number }[] = [];
    const source = (url: string): EventSourceLike => {
      urls.push(url);
      const es = { readyState: 0, onopen: null, onerror: null, addEventListener() {}, close() {} };
      sources.push(es);
      return es;
    };
    let issued = 0;
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      fetches.push({ url, headers: { ...(init.headers as Record<string, string>) } });
      return new Response(JSON.stringify({ ticket: `t${++issued}.n.m`, expiresAt: 0 }), { status: 201 });
    });
    vi.useFakeTimers();
    try {
      const sink = { snapshot() {}, deltas() {}, cluster() {}, resync() {}, state() {} };
      const stream = new SnapshotStream(sink, {
        createEventSource: source,
        requestFrame: () => 0,
        cancelFrame: () => {},
      });
      stream.start();
      access.provideToken(TOKEN);
      stream.reconnect();
      await vi.waitFor(() => expect(urls).toHaveLength(2));
      // A dropped connection is reopened with a new ticket, not retried by the browser with the used one.
      sources[1]!.onerror?.(new Event('error'));
      await vi.advanceTimersByTimeAsync(1000);
      await vi.waitFor(() => expect(urls).toHaveLength(3));
      await stream.stop();
      expect(urls).toEqual([
        '/api/v1/stream?format=lean',
        '/api/v1/stream?format=lean&ticket=t1.n.m',
        '/api/v1/stream?format=lean&ticket=t2.n.m',
      ]);
      expect(urls.join()).not.toContain(TOKEN);
      expect(fetches.map((f) => [f.url, f.headers.authorization])).toEqual([
        ['/api/v1/stream/tickets', `Bearer ${TOKEN}`],
        ['/api/v1/stream/tickets', `Bearer ${TOKEN}`],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
