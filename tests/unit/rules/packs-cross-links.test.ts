import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import { builtinRuleSet, observeRuleSet, scanReferences } from '@/lib/rules';
import type { KubeObject } from '@/lib/model';

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

const CM = 'cert-manager.io';
const ESO = 'external-secrets.io';

describe('cert-manager pack: Ingress annotations', () => {
  const rs = builtinRuleSet(['core', 'cert-manager']);
  const ingress = (annotations: Record<string, string>): KubeObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop', annotations },
    spec: { rules: [{ host: 'shop.example.com' }] },
  });

  it('cert-manager.io/issuer names an Issuer in the Ingress’s namespace', () => {
    expect(scanReferences(rs, ingress({ 'cert-manager.io/issuer': 'ca' })).references).toContainEqual({
      referent: `Issuer.${CM}/shop/ca`,
      fieldPath: "metadata.annotations['cert-manager.io/issuer']",
    });
  });

  it('cert-manager.io/cluster-issuer names a ClusterIssuer', () => {
    expect(
      scanReferences(rs, ingress({ 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' })).references,
    ).toContainEqual({
      referent: `ClusterIssuer.${CM}//letsencrypt-prod`,
      fieldPath: "metadata.annotations['cert-manager.io/cluster-issuer']",
    });
  });

  it('an Ingress whose ClusterIssuer is missing is unresolved until it is created and Ready', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    const observer = observeRuleSet(rs);
    manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
    observer.attach(manager);
    manager.start();
    source.apply(ingress({ 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' }));
    const state = () =>
      manager!.changelog.get('referrer', 'rules/Ingress.networking.k8s.io|Ingress.networking.k8s.io/shop/web')?.state;
    await vi.waitFor(() => expect(state()).toBe('NotFound'));
    source.apply({
      apiVersion: `${CM}/v1`,
      kind: 'ClusterIssuer',
      metadata: { name: 'letsencrypt-prod' },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    await vi.waitFor(() => expect(state()).toBe('Resolved'));
  });

  it('issuer-kind and issuer-group name an external issuer', () => {
    const refs = scanReferences(
      rs,
      ingress({
        'cert-manager.io/issuer': 'pca',
        'cert-manager.io/issuer-kind': 'AWSPCAClusterIssuer',
        'cert-manager.io/issuer-group': 'awspca.cert-manager.io',
      }),
    ).references;
    expect(refs.map((r) => r.referent)).toContain('AWSPCAClusterIssuer.awspca.cert-manager.io/shop/pca');
  });
});

describe('external-secrets pack: the produced Secret', () => {
  const rs = builtinRuleSet(['external-secrets']);
  const es = (target?: Record<string, unknown>): KubeObject => ({
    apiVersion: `${ESO}/v1`,
    kind: 'ExternalSecret',
    metadata: { name: 'db', namespace: 'shop' },
    spec: { secretStoreRef: { name: 'vault' }, ...(target ? { target } : {}) },
  });

  it('is named after the ExternalSecret when spec.target.name is absent or empty', () => {
    for (const target of [undefined, {}, { name: '' }, { creationPolicy: 'Owner' }])
      expect(scanReferences(rs, es(target)).produced).toEqual([
        { referent: 'Secret/shop/db', fieldPath: 'metadata.name' },
      ]);
  });

  it('is spec.target.name when given, and then only that', () => {
    expect(scanReferences(rs, es({ name: 'db-credentials' })).produced).toEqual([
      { referent: 'Secret/shop/db-credentials', fieldPath: 'spec.target.name' },
    ]);
  });
});
