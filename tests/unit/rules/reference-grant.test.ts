import { describe, expect, it } from 'vitest';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, extractReferences, grantAllows, grantRequest } from '@/lib/rules';

const GW = 'gateway.networking.k8s.io';
const route: KubeObject = {
  apiVersion: `${GW}/v1`,
  kind: 'HTTPRoute',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    parentRefs: [{ name: 'edge', namespace: 'infra' }],
    rules: [{ backendRefs: [{ name: 'api', namespace: 'backend' }, { name: 'local' }] }],
  },
};
const req = grantRequest(route, 'Service/backend/api')!;
const grant = (spec: Record<string, unknown>, namespace = 'backend'): KubeObject => ({
  apiVersion: `${GW}/v1beta1`,
  kind: 'ReferenceGrant',
  metadata: { name: 'g', namespace },
  spec,
});
const fromShop = { group: GW, kind: 'HTTPRoute', namespace: 'shop' };

describe('ReferenceGrant', () => {
  it('only backendRefs and certificateRefs into another namespace need a grant; parentRefs do not', () => {
    const refs = extractReferences(builtinRuleSet(['gateway']), route);
    expect(refs.map((r) => [r.referent, r.needsGrant])).toEqual([
      [`Gateway.${GW}/infra/edge`, undefined],
      ['Service/backend/api', true],
      ['Service/shop/local', undefined],
    ]);
    const gateway: KubeObject = {
      apiVersion: `${GW}/v1`,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'infra' },
      spec: { listeners: [{ name: 'https', tls: { certificateRefs: [{ name: 'shop-tls', namespace: 'shop' }] } }] },
    };
    expect(extractReferences(builtinRuleSet(['gateway']), gateway)).toContainEqual({
      referent: 'Secret/shop/shop-tls',
      fieldPath: 'spec.listeners[0].tls.certificateRefs[0].name',
      needsGrant: true,
    });
  });

  it('a grant in the referent’s namespace allows a matching from and to, by kind or by name', () => {
    expect(req).toEqual({
      from: { group: GW, kind: 'HTTPRoute', namespace: 'shop' },
      to: { group: '', kind: 'Service', namespace: 'backend', name: 'api' },
    });
    expect(grantAllows(grant({ from: [fromShop], to: [{ group: '', kind: 'Service' }] }), req)).toBe(true);
    expect(grantAllows(grant({ from: [fromShop], to: [{ group: '', kind: 'Service', name: 'api' }] }), req)).toBe(true);
  });

  it.each([
    ['another name', { from: [fromShop], to: [{ group: '', kind: 'Service', name: 'other' }] }, 'backend'],
    [
      'another namespace in from',
      { from: [{ ...fromShop, namespace: 'billing' }], to: [{ group: '', kind: 'Service' }] },
      'backend',
    ],
    [
      'another referrer kind',
      { from: [{ ...fromShop, kind: 'GRPCRoute' }], to: [{ group: '', kind: 'Service' }] },
      'backend',
    ],
    ['another referent kind', { from: [fromShop], to: [{ group: '', kind: 'Secret' }] }, 'backend'],
    ['a grant in the referrer’s namespace', { from: [fromShop], to: [{ group: '', kind: 'Service' }] }, 'shop'],
  ])('does not allow %s', (_, spec, namespace) => {
    expect(grantAllows(grant(spec, namespace), req)).toBe(false);
  });

  it('asks for no grant within one namespace or from a cluster-scoped referrer', () => {
    expect(grantRequest(route, 'Service/shop/local')).toBeUndefined();
    expect(grantRequest({ ...route, metadata: { name: 'x' } }, 'Service/backend/api')).toBeUndefined();
  });
});
