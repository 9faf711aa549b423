import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InformerEvent } from '@/lib/engine/informer-source';
import { KubeClient, SharedInformerPool } from '@/lib/kube';
import { deepFreeze, type CachedObject } from '@/lib/model';
import { DATABASE, FakeApiServer } from './fake-apiserver';
import { until } from './helpers';

// Cached objects are shared by every reader and frozen once at ingest: a
// mutation throws (modules run in strict mode) and no other reader sees it.

let server: FakeApiServer;
let pool: SharedInformerPool | undefined;

beforeEach(async () => {
  server = await FakeApiServer.start();
});
afterEach(async () => {
  await pool?.stop();
  pool = undefined;
  await server.stop();
});

const KEY = 'Database.demo.refwatch.dev/shop/orders';
const DB = { group: 'demo.refwatch.dev', kind: 'Database', namespace: 'shop' };

async function twoReaders(freeze?: boolean) {
  const client = KubeClient.fromKubeconfig(server.kubeconfig());
  pool = new SharedInformerPool({ client, ...(freeze === undefined ? {} : { reflector: { freeze } }) });
  const seen: CachedObject[] = [];
  const onEvent = (e: InformerEvent) => void (e.type === 'added' && seen.push(e.object));
  const a = pool.acquire(DB, onEvent);
  const b = pool.acquire(DB, onEvent);
  await until(() => a.isPrimed() && b.isPrimed() && seen.length === 2, 'both readers primed');
  return { a, b, seen };
}

describe('cached objects are read-only', () => {
  it('a mutation of a cached object throws and no other reader sees it; nothing is copied per read', async () => {
    server.create(DATABASE, 'orders', { namespace: 'shop', labels: { tier: 'gold' }, spec: { size: 1, zones: ['a'] } });
    const { a, b, seen } = await twoReaders();
    const mine = a.store.get(KEY)! as unknown as {
      metadata: { name: string; labels: Record<string, string> };
      spec: { size: number; zones: string[] };
    };
    expect(() => {
      mine.metadata.labels.tier = 'bronze';
    }).toThrow(TypeError);
    expect(() => {
      mine.spec.size = 2;
    }).toThrow(TypeError);
    expect(() => mine.spec.zones.push('b')).toThrow(TypeError);
    expect(() => {
      delete (mine.metadata as { name?: string }).name;
    }).toThrow(TypeError);
    const theirs = b.store.get(KEY)!;
    expect(theirs.metadata.labels).toEqual({ tier: 'gold' });
    expect(theirs.spec).toEqual({ size: 1, zones: ['a'] });
    // One object for every reader and every read: the store's own, the one the handlers got.
    expect(theirs).toBe(mine);
    expect(seen[0]).toBe(theirs);
    expect(seen[1]).toBe(theirs);
  });

  it('an update replaces the frozen object with a new frozen one; the old one is left as it was', async () => {
    server.create(DATABASE, 'orders', { namespace: 'shop', spec: { size: 1 } });
    const { a } = await twoReaders();
    const before = a.store.get(KEY)!;
    server.update(DATABASE, 'orders', 'shop', (o) => void (o.spec = { size: 2 }));
    await until(() => a.store.get(KEY) !== before, 'the update');
    const after = a.store.get(KEY)!;
    expect(Object.isFrozen(after) && Object.isFrozen(after.metadata) && Object.isFrozen(after.spec)).toBe(true);
    expect(before.spec).toEqual({ size: 1 });
    expect(after.spec).toEqual({ size: 2 });
  });

  it('freeze: false (for the benchmark only) leaves objects mutable', async () => {
    server.create(DATABASE, 'orders', { namespace: 'shop' });
    const { a } = await twoReaders(false);
    expect(Object.isFrozen(a.store.get(KEY))).toBe(false);
  });

  it('the types forbid a mutation at compile time', () => {
    const obj: CachedObject = deepFreeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { a: 'b' } },
    });
    expect(() => {
      // @ts-expect-error metadata.name is read-only
      obj.metadata.name = 'd';
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error labels are read-only all the way down
      obj.metadata.labels!.a = 'c';
    }).toThrow(TypeError);
    expect(obj.metadata).toEqual({ name: 'c', labels: { a: 'b' } });
  });
});

describe('deepFreeze', () => {
  it('freezes every object and array reachable, and returns its argument', () => {
    const value = { a: { b: [{ c: 1 }] }, d: 'e' };
    expect(deepFreeze(value)).toBe(value);
    expect([value, value.a, value.a.b, value.a.b[0]].every((v) => Object.isFrozen(v))).toBe(true);
  });
});
