import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '@/lib/testing';

const root = path.resolve(import.meta.dirname, '../../..');
const demoCrds = parseAllDocuments(readFileSync(path.join(root, 'deploy/demo/crds.yaml'), 'utf8'))
  .map((d) => d.toJS() as object)
  .filter(Boolean);

const running: TestCluster[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function start(opts: Parameters<typeof startTestCluster>[0] = {}): Promise<TestCluster> {
  const c = await startTestCluster({ mode: 'embedded', ...opts });
  running.push(c);
  return c;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('startTestCluster (embedded)', () => {
  it('seeds CRDs, namespaces and objects, and serves them through client, get, apply, waitFor and delete', async () => {
    const c = await start({
      crds: demoCrds,
      namespaces: ['shop'],
      objects: [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'shop' }, stringData: { a: 'b' } },
      ],
    });
    expect(c.mode).toBe('embedded');
    expect(readFileSync(c.kubeconfigPath, 'utf8')).toContain(c.url);
    const list = (await c.client.getJSON('/apis/demo.refwatch.dev/v1alpha1/namespaces/shop/databases')) as {
      items: unknown[];
    };
    expect(list.items).toEqual([]);
    expect((await c.get('Secret/shop/db'))?.metadata.name).toBe('db');

    const seen = c.waitFor('Database.demo.refwatch.dev/shop/orders', (o) => o !== undefined);
    await c.apply({
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'Database',
      metadata: { name: 'orders', namespace: 'shop' },
      spec: { engine: 'postgres' },
    });
    expect((await seen)?.metadata.uid).toBeTruthy();

    // Applying again replaces what exists.
    const [cm1] = await c.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', namespace: 'shop' },
      data: { v: '1' },
    });
    const [cm2] = await c.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', namespace: 'shop' },
      data: { v: '2' },
    });
    expect(cm2!.metadata.uid).toBe(cm1!.metadata.uid);
    expect((await c.get('ConfigMap/shop/x'))?.data).toEqual({ v: '2' });

    await c.delete('ConfigMap/shop/x');
    await c.delete('ConfigMap/shop/x'); // already gone: not an error
    expect(await c.waitFor('ConfigMap/shop/x', (o) => o === undefined)).toBeUndefined();
  });

  it('runs independent clusters side by side, each on its own port', async () => {
    const [a, b] = await Promise.all([start({ namespaces: ['one'] }), start({ namespaces: ['two'] })]);
    expect(a.url).not.toBe(b.url);
    expect(await a.get('Namespace//one')).toBeDefined();
    expect(await b.get('Namespace//one')).toBeUndefined();
    expect(await b.get('Namespace//two')).toBeDefined();
  });

  it('stop() leaves no port, timer or file behind, and ends a pending waitFor', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'TCPServerWrap').length;
    const c = await startTestCluster({ mode: 'embedded' });
    const port = Number(new URL(c.url).port);
    const pending = c.waitFor('ConfigMap/default/never', (o) => o !== undefined, 60_000);
    await c.get('Namespace//default');
    await c.stop();
    await expect(pending).rejects.toThrow(/stopped/);
    expect(existsSync(c.kubeconfigPath)).toBe(false);
    expect(existsSync(path.dirname(c.kubeconfigPath))).toBe(false);
    expect(await refused(port)).toBe(true);
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'TCPServerWrap').length;
    expect(after).toBeLessThanOrEqual(before);
    await expect(c.waitFor('ConfigMap/default/x', () => true)).rejects.toThrow(/stopped/);
  });

  it('waitFor rejects after its timeout, saying what it saw last', async () => {
    const c = await start({ namespaces: ['shop'] });
    await expect(c.waitFor('Namespace//shop', (o) => o?.metadata.labels?.ready === 'yes', 100)).rejects.toThrow(
      /Namespace\/\/shop: predicate still false after 100 ms \(last seen: resourceVersion \d+\)/,
    );
  });

  it('refuses bad input, naming the field and the fix', async () => {
    await expect(startTestCluster({ mode: 'embedded', namespaces: 'shop' as unknown as string[] })).rejects.toThrow(
      /namespaces must be an array/,
    );
    await expect(startTestCluster({ mode: 'embedded', namespaces: [''] })).rejects.toThrow(/namespaces\[0\]/);
    await expect(startTestCluster({ mode: 'bogus' as 'real' })).rejects.toThrow(
      /REFWATCH_TEST_CLUSTER=bogus.*embedded.*real/,
    );
    await expect(startTestCluster({ mode: 'real', gc: true })).rejects.toThrow(/kube-controller-manager/);
    await expect(
      start({ objects: [{ apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'Database', metadata: { name: 'x' } }] }),
    ).rejects.toThrow(/list its CRD before it/);
    const c = await start();
    await expect(c.get('ConfigMap/default')).rejects.toThrow(/key .*three '\/'-separated parts/);
    await expect(c.apply({ kind: 'ConfigMap' })).rejects.toThrow(/apiVersion, kind and metadata.name/);
  });

  it('in real mode, a missing binary says how to get it', async () => {
    const saved = process.env.REFWATCH_KUBE_ASSETS;
    process.env.REFWATCH_KUBE_ASSETS = path.join(root, 'no-such-dir');
    try {
      await expect(startTestCluster({ mode: 'real' })).rejects.toThrow(
        /kube-apiserver and etcd not found in REFWATCH_KUBE_ASSETS=.*no-such-dir.*build-real-cluster\.sh.*REFWATCH_KUBE_ASSETS/s,
      );
    } finally {
      if (saved === undefined) delete process.env.REFWATCH_KUBE_ASSETS;
      else process.env.REFWATCH_KUBE_ASSETS = saved;
    }
  });
});
