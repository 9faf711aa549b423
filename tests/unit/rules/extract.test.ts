import { describe, expect, it } from 'vitest';
import {
  coversReferrer,
  compileRuleSet,
  extractReferences,
  parseRulesText,
  referrerKinds,
  referrerSelectors,
  scanReferences,
  type RuleSet,
} from '@/lib/rules';
import { validateReference, type KubeObject } from '@/lib/model';

function ruleSet(text: string): RuleSet {
  const r = parseRulesText(`name: test\n${text}`, 'test.yaml');
  if (!r.ok) throw r.error;
  return compileRuleSet([r.value]);
}

const appRules = ruleSet(`
rules:
  - referrer: { group: demo.refwatch.dev, kind: App }
    references:
      - path: spec.databaseRef.name
        referent: { group: demo.refwatch.dev, kind: Database }
        namespaceField: namespace
      - path: spec.secrets[*]
        referent: { kind: Secret }
      - path: spec.links[*].name
        referent: { group: demo.refwatch.dev, kind: Cache }
        kindField: kind
        apiVersionField: apiVersion
        optionalField: optional
      - path: spec.policyName
        referent: { group: demo.refwatch.dev, kind: Policy }
kinds:
  - { group: demo.refwatch.dev, kind: Policy, scope: Cluster }
`);

function app(spec: unknown, namespace = 'shop'): KubeObject {
  return { apiVersion: 'demo.refwatch.dev/v1alpha1', kind: 'App', metadata: { name: 'web', namespace }, spec };
}

describe('extractReferences', () => {
  it("defaults the namespace to the referrer's and reads it from a sibling field when set", () => {
    expect(extractReferences(appRules, app({ databaseRef: { name: 'orders' } }))).toEqual([
      { referent: 'Database.demo.refwatch.dev/shop/orders', fieldPath: 'spec.databaseRef.name' },
    ]);
    expect(extractReferences(appRules, app({ databaseRef: { name: 'orders', namespace: 'data' } }))).toEqual([
      { referent: 'Database.demo.refwatch.dev/data/orders', fieldPath: 'spec.databaseRef.name' },
    ]);
  });

  it('treats an empty namespace field as unset', () => {
    expect(extractReferences(appRules, app({ databaseRef: { name: 'orders', namespace: '' } }))[0]?.referent).toBe(
      'Database.demo.refwatch.dev/shop/orders',
    );
  });

  it('yields one reference per name a wildcard reaches, each with its concrete path', () => {
    expect(extractReferences(appRules, app({ secrets: ['a', 'b'] }))).toEqual([
      { referent: 'Secret/shop/a', fieldPath: 'spec.secrets[0]' },
      { referent: 'Secret/shop/b', fieldPath: 'spec.secrets[1]' },
    ]);
  });

  it('skips empty and null names', () => {
    expect(extractReferences(appRules, app({ secrets: ['', null, 'c'], databaseRef: { name: '' } }))).toEqual([
      { referent: 'Secret/shop/c', fieldPath: 'spec.secrets[2]' },
    ]);
  });

  it('takes kind and group from the object when it says them, and marks optional references', () => {
    const refs = extractReferences(
      appRules,
      app({
        links: [
          { name: 'sessions' },
          { name: 'search', kind: 'Index', apiVersion: 'search.example.com/v1', optional: true },
          { name: 'legacy', kind: 'ConfigMap', apiVersion: 'v1', optional: false },
        ],
      }),
    );
    expect(refs).toEqual([
      { referent: 'Cache.demo.refwatch.dev/shop/sessions', fieldPath: 'spec.links[0].name' },
      { referent: 'Index.search.example.com/shop/search', fieldPath: 'spec.links[1].name', optional: true },
      { referent: 'ConfigMap/shop/legacy', fieldPath: 'spec.links[2].name' },
    ]);
  });

  it('drops the namespace of cluster-scoped referents', () => {
    expect(extractReferences(appRules, app({ policyName: 'strict' }))).toEqual([
      { referent: 'Policy.demo.refwatch.dev//strict', fieldPath: 'spec.policyName' },
    ]);
  });

  it('lets discovery decide the scope when the caller knows it', () => {
    const refs = extractReferences(appRules, app({ databaseRef: { name: 'orders', namespace: 'data' } }), {
      scopeOf: (gk) => (gk.kind === 'Database' ? 'Cluster' : undefined),
    });
    expect(refs[0]?.referent).toBe('Database.demo.refwatch.dev//orders');
  });

  it('returns references that pass validateReference', () => {
    const refs = extractReferences(
      appRules,
      app({ databaseRef: { name: 'orders' }, secrets: ['a'], links: [{ name: 'x' }], policyName: 'p' }),
    );
    expect(refs).toHaveLength(4);
    for (const r of refs) expect(validateReference(r).ok).toBe(true);
  });

  it('reports names that make no valid key instead of returning them', () => {
    const scan = scanReferences(
      appRules,
      app({ secrets: ['Not_A_Name', 42], links: [{ name: 'x', kind: 'lowercase' }] }),
    );
    expect(scan.references).toEqual([]);
    expect(scan.unresolved.map((u) => u.fieldPath)).toEqual([
      'spec.secrets[0]',
      'spec.secrets[1]',
      'spec.links[0].name',
    ]);
    expect(scan.unresolved[0]!.reason).toContain('not a valid name');
    expect(scan.unresolved[1]!.reason).toContain('should hold a name');
    expect(scan.unresolved[2]!.reason).toContain('not a valid kind');
    expect(scan.unresolved[0]!.rule).toBe('test: rules[0].references[1]');
  });

  it('ignores objects of kinds it has no rules for, and malformed objects', () => {
    expect(
      extractReferences(appRules, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'shop' } }),
    ).toEqual([]);
    expect(extractReferences(appRules, { kind: 'App' } as unknown as KubeObject)).toEqual([]);
    expect(extractReferences(appRules, app('not an object'))).toEqual([]);
  });

  it('counts a field that two rules reach once, however their paths write it', () => {
    const rs = ruleSet(`
rules:
  - referrer: { group: demo.refwatch.dev, kind: App }
    references:
      - { path: "spec.links[*].name", referent: { kind: Secret } }
      - { path: "spec.links[0]['name']", referent: { kind: Secret } }
      - { path: "spec.links[1].name", referent: { kind: ConfigMap } }
`);
    expect(extractReferences(rs, app({ links: [{ name: 'a' }, { name: 'b' }] }))).toEqual([
      { referent: 'Secret/shop/a', fieldPath: 'spec.links[0].name' },
      { referent: 'Secret/shop/b', fieldPath: 'spec.links[1].name' },
      { referent: 'ConfigMap/shop/b', fieldPath: 'spec.links[1].name' },
    ]);
  });

  it('matches the referrer by group, not only kind', () => {
    const other = {
      apiVersion: 'other.example.com/v1',
      kind: 'App',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { secrets: ['a'] },
    };
    expect(extractReferences(appRules, other)).toEqual([]);
  });
});

const conventionRules = ruleSet(`
rules:
  - referrer: { group: demo.refwatch.dev, kind: App }
    references:
      - { path: spec.databaseRef.name, referent: { group: demo.refwatch.dev, kind: Database } }
conventions:
  - name: demo
    referrers: { groupSuffixes: [refwatch.dev] }
    under: [spec, spec.forProvider]
    fields:
      - { field: secretRef, referent: { kind: Secret }, namespaceField: namespace }
      - { field: cacheRefs, referent: { group: demo.refwatch.dev, kind: Cache } }
`);

describe('conventions', () => {
  it('finds *Ref and *Refs fields under each path, and reports the ones whose kind it does not know', () => {
    const obj = app({
      secretRef: { name: 'db-password', namespace: 'vault' },
      cacheRefs: [{ name: 'a' }, { name: 'b' }, {}],
      forProvider: { subnetRef: { name: 'subnet-1' }, secretRef: { name: 'inner' }, region: 'eu' },
      notARef: 'x',
    });
    const scan = scanReferences(conventionRules, obj);
    expect(scan.references).toEqual([
      { referent: 'Secret/vault/db-password', fieldPath: 'spec.secretRef.name' },
      { referent: 'Cache.demo.refwatch.dev/shop/a', fieldPath: 'spec.cacheRefs[0].name' },
      { referent: 'Cache.demo.refwatch.dev/shop/b', fieldPath: 'spec.cacheRefs[1].name' },
      { referent: 'Secret/shop/inner', fieldPath: 'spec.forProvider.secretRef.name' },
    ]);
    expect(scan.unresolved).toEqual([
      {
        fieldPath: 'spec.forProvider.subnetRef.name',
        name: 'subnet-1',
        reason: expect.stringContaining('subnetRef'),
        rule: 'convention demo',
      },
    ]);
  });

  it('does not report a field a rule already resolved', () => {
    const scan = scanReferences(conventionRules, app({ databaseRef: { name: 'orders' } }));
    expect(scan.references).toEqual([
      { referent: 'Database.demo.refwatch.dev/shop/orders', fieldPath: 'spec.databaseRef.name' },
    ]);
    expect(scan.unresolved).toEqual([]);
  });

  it('applies only to referrers its selector matches', () => {
    const outside = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't', namespace: 'shop' },
      spec: { secretRef: { name: 's' } },
    };
    expect(scanReferences(conventionRules, outside)).toEqual({ references: [], unresolved: [] });
    expect(coversReferrer(conventionRules, { group: 'example.com', kind: 'Thing' })).toBe(false);
    expect(coversReferrer(conventionRules, { group: 'x.refwatch.dev', kind: 'Thing' })).toBe(true);
  });

  it('lists referrer kinds from rules and selectors from conventions', () => {
    expect(referrerKinds(conventionRules)).toEqual([{ group: 'demo.refwatch.dev', kind: 'App' }]);
    expect(referrerSelectors(conventionRules)).toEqual([{ convention: 'demo', groupSuffixes: ['refwatch.dev'] }]);
  });
});
