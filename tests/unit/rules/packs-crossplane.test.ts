import { describe, expect, it } from 'vitest';
import {
  builtinRuleSet,
  coversReferrer,
  extractReferences,
  readinessOf,
  referrerSelectors,
  scanReferences,
} from '@/lib/rules';
import type { KubeObject } from '@/lib/model';

const rs = builtinRuleSet(['crossplane']);

/** Crossplane v1 managed resource from the Upbound AWS provider: cluster-scoped. */
const bucket: KubeObject = {
  apiVersion: 's3.aws.upbound.io/v1beta1',
  kind: 'Bucket',
  metadata: { name: 'shop-assets' },
  spec: {
    forProvider: { region: 'eu-west-1', tags: { team: 'shop' } },
    providerConfigRef: { name: 'default' },
    writeConnectionSecretToRef: { name: 'shop-assets-conn', namespace: 'crossplane-system' },
    deletionPolicy: 'Delete',
  },
  status: {
    conditions: [
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
      { type: 'Ready', status: 'False', reason: 'Creating', message: 'Bucket is being created' },
    ],
  },
};

const subnet: KubeObject = {
  apiVersion: 'ec2.aws.upbound.io/v1beta1',
  kind: 'Subnet',
  metadata: { name: 'shop-a' },
  spec: {
    forProvider: {
      region: 'eu-west-1',
      cidrBlock: '10.0.1.0/24',
      vpcIdRef: { name: 'shop-vpc' },
      vpcIdSelector: { matchLabels: { network: 'shop' } },
      routeTableIdsRefs: [{ name: 'rt-a' }, { name: 'rt-b' }],
    },
    providerConfigRef: { name: 'default' },
  },
};

describe('crossplane pack: v1 managed resources', () => {
  it('resolves providerConfigRef to the provider’s cluster-scoped ProviderConfig, and the connection secret', () => {
    expect(extractReferences(rs, bucket)).toEqual([
      { referent: 'ProviderConfig.aws.upbound.io//default', fieldPath: 'spec.providerConfigRef.name' },
      { referent: 'Secret/crossplane-system/shop-assets-conn', fieldPath: 'spec.writeConnectionSecretToRef.name' },
    ]);
  });

  it('reports *Ref fields whose kind the convention cannot know, with field path and name', () => {
    const scan = scanReferences(rs, subnet);
    expect(scan.references).toEqual([
      { referent: 'ProviderConfig.aws.upbound.io//default', fieldPath: 'spec.providerConfigRef.name' },
    ]);
    expect(scan.unresolved.map((u) => [u.fieldPath, u.name])).toEqual([
      ['spec.forProvider.vpcIdRef.name', 'shop-vpc'],
      ['spec.forProvider.routeTableIdsRefs[0].name', 'rt-a'],
      ['spec.forProvider.routeTableIdsRefs[1].name', 'rt-b'],
    ]);
    expect(scan.unresolved[0]!.reason).toContain('does not know which kind');
  });

  it('a provider whose group is its own config group keeps it', () => {
    const obj: KubeObject = {
      apiVersion: 'kubernetes.crossplane.io/v1alpha2',
      kind: 'Object',
      metadata: { name: 'ns' },
      spec: { providerConfigRef: { name: 'in-cluster' }, forProvider: { manifest: {} } },
    };
    expect(extractReferences(rs, obj)).toEqual([
      { referent: 'ProviderConfig.kubernetes.crossplane.io//in-cluster', fieldPath: 'spec.providerConfigRef.name' },
    ]);
  });

  it('a managed resource is ready when Ready=True; ProviderConfig when it exists', () => {
    expect(readinessOf(rs, bucket)).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'Creating',
      message: 'Bucket is being created',
    });
    expect(
      readinessOf(rs, { apiVersion: 'aws.upbound.io/v1beta1', kind: 'ProviderConfig', metadata: { name: 'default' } }),
    ).toEqual({ ready: true });
  });
});

describe('crossplane pack: v2 namespaced managed resources', () => {
  const mr = (providerConfigRef: Record<string, string>): KubeObject => ({
    apiVersion: 's3.aws.m.upbound.io/v1beta1',
    kind: 'Bucket',
    metadata: { name: 'assets', namespace: 'shop' },
    spec: {
      forProvider: { region: 'eu-west-1' },
      providerConfigRef,
      writeConnectionSecretToRef: { name: 'assets-conn' },
    },
  });

  it('ProviderConfig lives in the MR’s namespace; ClusterProviderConfig is cluster-scoped', () => {
    expect(extractReferences(rs, mr({ kind: 'ProviderConfig', name: 'team' }))).toEqual([
      { referent: 'ProviderConfig.aws.m.upbound.io/shop/team', fieldPath: 'spec.providerConfigRef.name' },
      { referent: 'Secret/shop/assets-conn', fieldPath: 'spec.writeConnectionSecretToRef.name' },
    ]);
    expect(extractReferences(rs, mr({ kind: 'ClusterProviderConfig', name: 'default' }))[0]).toEqual({
      referent: 'ClusterProviderConfig.aws.m.upbound.io//default',
      fieldPath: 'spec.providerConfigRef.name',
    });
  });
});

describe('crossplane pack: composites and claims', () => {
  it('a claim refers to its composite, which is cluster-scoped in v1', () => {
    const claim: KubeObject = {
      apiVersion: 'platform.example.org/v1alpha1',
      kind: 'Database',
      metadata: { name: 'orders', namespace: 'shop' },
      spec: {
        compositionRef: { name: 'xdatabases.aws' },
        resourceRef: { apiVersion: 'platform.example.org/v1alpha1', kind: 'XDatabase', name: 'orders-x7k2' },
        writeConnectionSecretToRef: { name: 'orders-conn' },
      },
    };
    // Without discovery the composite's scope is unknown; the runtime passes scopeOf.
    const scopeOf = (gk: { kind: string }) => (gk.kind === 'XDatabase' ? ('Cluster' as const) : undefined);
    expect(extractReferences(rs, claim, { scopeOf })).toEqual([
      { referent: 'Composition.apiextensions.crossplane.io//xdatabases.aws', fieldPath: 'spec.compositionRef.name' },
      { referent: 'XDatabase.platform.example.org//orders-x7k2', fieldPath: 'spec.resourceRef.name' },
      { referent: 'Secret/shop/orders-conn', fieldPath: 'spec.writeConnectionSecretToRef.name' },
    ]);
  });

  const xr: KubeObject = {
    apiVersion: 'platform.example.org/v1alpha1',
    kind: 'XDatabase',
    metadata: { name: 'orders-x7k2' },
    spec: {
      parameters: { size: 'small' },
      compositionRef: { name: 'xdatabases.aws' },
      compositionRevisionRef: { name: 'xdatabases.aws-8f3a1c2' },
      claimRef: { apiVersion: 'platform.example.org/v1alpha1', kind: 'Database', name: 'orders', namespace: 'shop' },
      resourceRefs: [
        { apiVersion: 'rds.aws.upbound.io/v1beta1', kind: 'Instance', name: 'orders-x7k2-db' },
        { apiVersion: 'ec2.aws.upbound.io/v1beta1', kind: 'SecurityGroup', name: 'orders-x7k2-sg' },
      ],
      writeConnectionSecretToRef: { name: 'orders-conn', namespace: 'crossplane-system' },
    },
  };

  it('a composite refers to its Composition, revision, composed resources and connection secret', () => {
    const scan = scanReferences(rs, xr);
    expect(scan.references).toEqual([
      { referent: 'Composition.apiextensions.crossplane.io//xdatabases.aws', fieldPath: 'spec.compositionRef.name' },
      {
        referent: 'CompositionRevision.apiextensions.crossplane.io//xdatabases.aws-8f3a1c2',
        fieldPath: 'spec.compositionRevisionRef.name',
      },
      { referent: 'Instance.rds.aws.upbound.io//orders-x7k2-db', fieldPath: 'spec.resourceRefs[0].name' },
      { referent: 'SecurityGroup.ec2.aws.upbound.io//orders-x7k2-sg', fieldPath: 'spec.resourceRefs[1].name' },
      { referent: 'Secret/crossplane-system/orders-conn', fieldPath: 'spec.writeConnectionSecretToRef.name' },
    ]);
    // claimRef points back at the claim: not a dependency, so neither a reference nor reported.
    expect(scan.unresolved).toEqual([]);
  });

  it('a v2 composite keeps its Crossplane fields under spec.crossplane', () => {
    const v2: KubeObject = {
      apiVersion: 'platform.example.org/v1alpha1',
      kind: 'Database',
      metadata: { name: 'orders', namespace: 'shop' },
      spec: {
        crossplane: {
          compositionRef: { name: 'databases.aws' },
          resourceRefs: [{ apiVersion: 'rds.aws.m.upbound.io/v1beta1', kind: 'Instance', name: 'orders-db' }],
        },
      },
    };
    expect(extractReferences(rs, v2)).toEqual([
      {
        referent: 'Composition.apiextensions.crossplane.io//databases.aws',
        fieldPath: 'spec.crossplane.compositionRef.name',
      },
      { referent: 'Instance.rds.aws.m.upbound.io/shop/orders-db', fieldPath: 'spec.crossplane.resourceRefs[0].name' },
    ]);
  });

  it('with discovery at hand, the convention covers only managed, composite and claim kinds', () => {
    const categories = (gk: { kind: string }) =>
      gk.kind === 'Deployment' ? ['all'] : ['crossplane', 'managed', 'aws'];
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { templateRef: { name: 'x' } },
    };
    expect(scanReferences(rs, deployment, { categoriesOf: categories })).toEqual({ references: [], unresolved: [] });
    expect(extractReferences(rs, bucket, { categoriesOf: categories })).toHaveLength(2);
    expect(coversReferrer(rs, { group: 'apps', kind: 'Deployment' }, ['all'])).toBe(false);
    expect(coversReferrer(rs, { group: 's3.aws.upbound.io', kind: 'Bucket' }, ['crossplane', 'managed'])).toBe(true);
    expect(referrerSelectors(rs)).toEqual([
      { convention: 'crossplane-namespaced', groupSuffixes: ['m.upbound.io', 'm.crossplane.io'] },
      { convention: 'crossplane', categories: ['managed', 'composite', 'claim'] },
    ]);
  });
});

describe('all packs together', () => {
  const all = builtinRuleSet();

  it('rules and the convention do not double-count a field', () => {
    const route: KubeObject = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'r', namespace: 'shop' },
      spec: { parentRefs: [{ name: 'gw' }] },
    };
    expect(scanReferences(all, route)).toEqual({
      references: [{ referent: 'Gateway.gateway.networking.k8s.io/shop/gw', fieldPath: 'spec.parentRefs[0].name' }],
      unresolved: [],
    });
  });

  it('an HPA is read by the core rule, not reported by the convention', () => {
    const hpa: KubeObject = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
    };
    expect(scanReferences(all, hpa)).toEqual({
      references: [{ referent: 'Deployment.apps/shop/web', fieldPath: 'spec.scaleTargetRef.name' }],
      unresolved: [],
    });
  });
});
