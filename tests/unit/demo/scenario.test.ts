import { describe, expect, it } from 'vitest';
import type { KubeObject } from '@/lib/model';
import { appManifest, appReferences, parseDemoConfig, planScenario, UNINSTALLED_KIND } from '@/server/demo';

const ns = 'refwatch-demo-abc123';

describe('scenario', () => {
  it('plans the same objects for the same seed', () => {
    const c = parseDemoConfig({ apps: 50, dangling: { typo: 0.1 } });
    expect(planScenario(c, ns, 7)).toEqual(planScenario(c, ns, 7));
    expect(planScenario(c, ns, 7)).not.toEqual(planScenario(c, ns, 8));
  });

  it('draws delays within the distribution, and Secrets are ready at once', () => {
    const s = planScenario(
      parseDemoConfig({ apps: 200, readyAfter: { distribution: 'uniform', minMs: 1000, maxMs: 2000 } }),
      ns,
      1,
    );
    for (const r of [...s.databases, ...s.caches]) expect(r.readyAfterMs).toBeGreaterThanOrEqual(1000);
    for (const r of [...s.databases, ...s.caches]) expect(r.readyAfterMs).toBeLessThanOrEqual(2000);
    expect(new Set(s.databases.map((d) => d.readyAfterMs)).size).toBeGreaterThan(50);
    expect(s.secrets.every((r) => r.readyAfterMs === 0)).toBe(true);
  });

  it('shares referents among Apps when there are fewer of them', () => {
    const s = planScenario(parseDemoConfig({ apps: 10, databases: 3, caches: 2, secrets: 1 }), ns, 1);
    expect(s.databases).toHaveLength(3);
    expect(s.apps.map((a) => a.database)).toEqual([
      'orders-0',
      'orders-1',
      'orders-2',
      'orders-0',
      'orders-1',
      'orders-2',
      'orders-0',
      'orders-1',
      'orders-2',
      'orders-0',
    ]);
    expect(new Set(s.apps.map((a) => a.secret))).toEqual(new Set(['credentials-0']));
  });

  it('makes the configured share of Apps dangle, each in its own way', () => {
    const s = planScenario(
      parseDemoConfig({ apps: 100, dangling: { typo: 0.05, wrongNamespace: 0.03, kindNotInstalled: 0.02 } }),
      ns,
      3,
    );
    const by = (k: string) => s.apps.filter((a) => a.dangling === k);
    expect(by('typo')).toHaveLength(5);
    expect(by('wrongNamespace')).toHaveLength(3);
    expect(by('kindNotInstalled')).toHaveLength(2);
    for (const a of by('typo')) expect(a.spec.databaseRef.name).toBe(a.database.replace('orders', 'ordrs'));
    for (const a of by('wrongNamespace'))
      expect(a.spec.databaseRef).toEqual({ name: a.database, namespace: 'default' });
    for (const a of by('kindNotInstalled'))
      expect(a.spec.databaseRef).toEqual({ ...UNINSTALLED_KIND, name: a.database });
    expect(s.apps.filter((a) => !a.dangling).every((a) => a.spec.databaseRef.name === a.database)).toBe(true);
  });
});

describe('appReferences', () => {
  const app = (spec: unknown): KubeObject => ({
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'web', namespace: 'shop' },
    spec,
  });

  it("reads the three refs as keys in the App's namespace", () => {
    const refs = appReferences(
      app({ databaseRef: { name: 'orders' }, cacheRef: { name: 'sessions' }, secretRef: { name: 'creds' } }),
    );
    expect(refs.map((r) => [r.fieldPath, r.key])).toEqual([
      ['spec.databaseRef', 'Database.demo.refwatch.dev/shop/orders'],
      ['spec.cacheRef', 'Cache.demo.refwatch.dev/shop/sessions'],
      ['spec.secretRef', 'Secret/shop/creds'],
    ]);
  });

  it('honours an explicit namespace, kind and apiVersion', () => {
    const refs = appReferences(
      app({
        databaseRef: { apiVersion: 'db.example.com/v1', kind: 'PostgresDatabase', name: 'x', namespace: 'other' },
      }),
    );
    expect(refs).toEqual([
      {
        field: 'databaseRef',
        fieldPath: 'spec.databaseRef',
        group: 'db.example.com',
        version: 'v1',
        kind: 'PostgresDatabase',
        namespace: 'other',
        name: 'x',
        key: 'PostgresDatabase.db.example.com/other/x',
      },
    ]);
  });

  it('skips a dropped or malformed ref', () => {
    expect(
      appReferences(app({ databaseRef: { name: 'orders' }, cacheRef: null, secretRef: { namespace: 'x' } })).map(
        (r) => r.field,
      ),
    ).toEqual(['databaseRef']);
    expect(appReferences(app(undefined))).toEqual([]);
  });

  it('reads back the App the run creates', () => {
    const s = planScenario(parseDemoConfig({ apps: 1 }), ns, 1);
    const refs = appReferences(appManifest(ns, 'abc123', s.apps[0]!));
    expect(refs.map((r) => r.key)).toEqual([
      `Database.demo.refwatch.dev/${ns}/orders-0`,
      `Cache.demo.refwatch.dev/${ns}/sessions-0`,
      `Secret/${ns}/credentials-0`,
    ]);
  });
});
