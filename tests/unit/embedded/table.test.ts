import { describe, expect, it } from 'vitest';
import { demoManifests } from '@/server/cluster';
import { humanDuration } from '@/lib/embedded/table';
import { api, DB_PATH, namespace, start } from './harness';

const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };

describe('embedded API server: server-side printing', () => {
  it("prints Pods with kubectl's READY, STATUS, RESTARTS and AGE", async () => {
    const s = await start({ objects: [namespace('shop')] });
    await api(s, 'POST', '/api/v1/namespaces/shop/pods', {
      metadata: { name: 'web' },
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'x' },
        ],
      },
    });
    const t = (await api(s, 'GET', '/api/v1/namespaces/shop/pods', undefined, TABLE)).body;
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
    ]);
    expect(t.rows[0].cells).toEqual(['web', '0/2', 'Pending', '0', expect.stringMatching(/^\d+s$/)]);
  });

  it("prints a custom resource with its CRD's additionalPrinterColumns", async () => {
    const s = await start({ objects: [...demoManifests(), namespace('shop')] });
    await api(s, 'POST', `${DB_PATH}/namespaces/shop/databases`, {
      apiVersion: 'demo.refwatch.dev/v1alpha1',
      kind: 'Database',
      metadata: { name: 'orders' },
    });
    await api(
      s,
      'PATCH',
      `${DB_PATH}/namespaces/shop/databases/orders/status`,
      {
        status: {
          conditions: [
            { type: 'Synced', status: 'False' },
            { type: 'Ready', status: 'True' },
          ],
        },
      },
      { 'content-type': 'application/merge-patch+json' },
    );
    const t = (await api(s, 'GET', `${DB_PATH}/namespaces/shop/databases/orders`, undefined, TABLE)).body;
    expect(t.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Ready', 'Age']);
    expect(t.rows[0].cells.slice(0, 2)).toEqual(['orders', 'True']);
  });

  it('prints ages as kubectl does', () => {
    const s = 1000;
    expect(
      [
        45 * s,
        320 * s,
        42 * 60 * s,
        (5 * 60 + 10) * 60 * s,
        30 * 3600 * s,
        (3 * 24 + 4) * 3600 * s,
        200 * 86400 * s,
        (3 * 365 + 10) * 86400 * s,
        9 * 365 * 86400 * s,
      ].map(humanDuration),
    ).toEqual(['45s', '5m20s', '42m', '5h10m', '30h', '3d4h', '200d', '3y10d', '9y']);
  });
});
