import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InformerSubscription, WatchTarget } from '@/lib/engine/informer-source';
import {
  KubeClient,
  KubeRequestError,
  LAST_APPLIED,
  SharedInformerPool,
  type KubeTransport,
  type Query,
  type ReadOptions,
  type WatchStream,
} from '@/lib/kube';
import { startEmbeddedServer, type EmbeddedServer } from '@/lib/embedded';
import { Recorder, until } from './helpers';

const SECRETS: WatchTarget = { group: '', kind: 'Secret', namespace: 'shop' };
const DATA = { password: Buffer.from('hunter2').toString('base64') };

let server: EmbeddedServer;
let client: KubeClient;
let pool: SharedInformerPool;

beforeEach(async () => {
  server = await startEmbeddedServer({
    objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }],
  });
  client = KubeClient.fromKubeconfig(server.kubeconfig());
  pool = new SharedInformerPool({ client, reflector: { backoff: { initialMs: 10, maxMs: 40 }, invalidRetryMs: 50 } });
});
afterEach(async () => {
  await pool.stop();
  client.close();
  await server.stop();
});

async function createSecret(name: string, annotations: Record<string, string> = {}): Promise<void> {
  await client.request('POST', '/api/v1/namespaces/shop/secrets', {
    body: { metadata: { name, annotations, labels: { app: 'shop' } }, data: DATA },
  });
}
const deleteSecret = (name: string) => client.request('DELETE', `/api/v1/namespaces/shop/secrets/${name}`);
const hasData = (sub: InformerSubscription) => [...sub.store.values()].some((o) => 'data' in o);
const secretWatches = () => server.openWatches().secrets ?? 0;

describe('SharedInformerPool, metadata only', () => {
  it('caches PartialObjectMetadata as the resource kind, without data, managedFields or last-applied-configuration', async () => {
    await createSecret('db', { [LAST_APPLIED]: JSON.stringify({ data: DATA }), owner: 'shop' });
    const sub = pool.acquire(SECRETS, () => {}, { metadataOnly: true });
    await until(() => sub.isPrimed(), 'primed');
    const db = sub.store.get('Secret/shop/db')!;
    expect(Object.keys(db).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(db).toMatchObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'shop', labels: { app: 'shop' }, annotations: { owner: 'shop' } },
    });
    expect(db.metadata.annotations).not.toHaveProperty(LAST_APPLIED);
    expect(sub.status()).toMatchObject({ metadataOnly: true, primed: true, objects: 1 });

    // Watch events are stored the same way.
    await createSecret('cache');
    await until(() => sub.store.get('Secret/shop/cache') !== undefined, 'watched add');
    expect(Object.keys(sub.store.get('Secret/shop/cache')!).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
  });

  it('serves a late metadata-only subscriber from a running whole-object watch, without restarting it', async () => {
    await createSecret('db');
    const full = pool.acquire(SECRETS, () => {});
    await until(() => full.isPrimed() && secretWatches() === 1, 'primed');
    const rec = new Recorder();
    const meta = pool.acquire(SECRETS, rec.handler, { metadataOnly: true });
    await until(() => rec.has('primed'), 'replay');
    expect(rec.log).toEqual(['added shop/db', 'primed']);
    expect(meta.store).toBe(full.store);
    expect(meta.status()).toMatchObject({ metadataOnly: false, watchesOpened: 1, subscribers: 2 });
    expect(hasData(meta)).toBe(true);
  });

  it('restarts a metadata-only watch with whole objects when a subscriber needs them, keeping the others primed', async () => {
    await createSecret('a');
    await createSecret('b');
    const metaRec = new Recorder();
    const meta = pool.acquire(SECRETS, metaRec.handler, { metadataOnly: true });
    await until(() => meta.isPrimed() && secretWatches() === 1, 'metadata primed');

    let maxWatches = 0;
    let metaUnprimed = false;
    const sampler = setInterval(() => {
      maxWatches = Math.max(maxWatches, secretWatches());
      if (!meta.isPrimed()) metaUnprimed = true;
    }, 1);
    try {
      await deleteSecret('a');
      await until(() => metaRec.has('deleted shop/a'), 'delete seen');
      const fullRec = new Recorder();
      const full = pool.acquire(SECRETS, fullRec.handler);
      expect(full.isPrimed()).toBe(false); // the store holds metadata only until the whole snapshot is in
      await createSecret('c'); // created while the watch restarts
      await until(() => full.isPrimed() && fullRec.has('added shop/c'), 'whole objects primed');
      expect(fullRec.log.slice(0, 3).sort()).toEqual(['added shop/b', 'added shop/c', 'primed'].sort());
      expect(
        fullRec.events.filter((e) => e.type === 'added').every((e) => e.type === 'added' && 'data' in e.object),
      ).toBe(true);
      await until(() => metaRec.has('added shop/c'), 'metadata subscriber told of c');
      // The metadata subscriber is told only what changed: no second primed, no replay of b.
      expect(metaRec.log).toEqual(['added shop/a', 'added shop/b', 'primed', 'deleted shop/a', 'added shop/c']);
      expect(full.status()).toMatchObject({ metadataOnly: false, subscribers: 2 });
      expect(hasData(meta)).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    expect(metaUnprimed).toBe(false);
    expect(maxWatches).toBe(1);
    expect(secretWatches()).toBe(1);
  });

  it('goes back to metadata only when the last whole-object subscriber leaves, and the data leaves the cache', async () => {
    await createSecret('a');
    const metaRec = new Recorder();
    const meta = pool.acquire(SECRETS, metaRec.handler, { metadataOnly: true });
    const full = pool.acquire(SECRETS, () => {});
    await until(() => meta.isPrimed() && full.isPrimed(), 'primed');
    expect(hasData(meta)).toBe(true);
    await full.release();
    await until(() => meta.status().metadataOnly === true && meta.status().primed, 'metadata-only again');
    await until(() => !hasData(meta), 'data gone');
    expect(meta.isPrimed()).toBe(true);
    await createSecret('b');
    await until(() => metaRec.has('added shop/b'), 'still watching');
    expect(metaRec.log).toEqual(['added shop/a', 'primed', 'added shop/b']);
    await until(() => secretWatches() === 1, 'one watch');
    await meta.release();
    await until(() => secretWatches() === 0, 'watch closed');
    expect(pool.watches()).toEqual([]);
  });

  it('reports a server that cannot send metadata only (406) as Invalid, with the fix', async () => {
    const refusing: KubeTransport = {
      server: client.server,
      getJSON: <T>(path: string, query?: Query, signal?: AbortSignal, opts?: ReadOptions) =>
        opts?.accept
          ? Promise.reject(new KubeRequestError(406, `GET ${path}: 406 Not Acceptable`, { url: path }))
          : client.getJSON<T>(path, query, signal),
      openStream: (path: string, query: Query, signal: AbortSignal, opts?: ReadOptions): Promise<WatchStream> =>
        opts?.accept
          ? Promise.reject(new KubeRequestError(406, `GET ${path}: 406 Not Acceptable`, { url: path }))
          : client.openStream(path, query, signal),
    };
    const p = new SharedInformerPool({ client: refusing, reflector: { watchList: false, invalidRetryMs: 50 } });
    try {
      const rec = new Recorder();
      const sub = p.acquire(SECRETS, rec.handler, { metadataOnly: true });
      const errors = () => rec.events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
      await until(() => errors().length > 0, 'error');
      expect(errors()[0]).toMatchObject({ reason: 'Invalid' });
      expect(errors()[0]!.message).toMatch(/cannot send Secret as metadata only .*406.*metadataOnly: false/);
      expect(sub.isPrimed()).toBe(false);
    } finally {
      await p.stop();
    }
  });
});
