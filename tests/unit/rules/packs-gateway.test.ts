import { describe, expect, it } from 'vitest';
import { builtinRuleSet, extractReferences, readinessOf } from '@/lib/rules';
import type { KubeObject } from '@/lib/model';

const rs = builtinRuleSet(['gateway']);
const GW = 'gateway.networking.k8s.io';

const httpRoute: KubeObject = {
  apiVersion: `${GW}/v1`,
  kind: 'HTTPRoute',
  metadata: { name: 'storefront', namespace: 'shop' },
  spec: {
    parentRefs: [
      { name: 'public', namespace: 'infra', sectionName: 'https' },
      { name: 'internal' },
      { group: '', kind: 'Service', name: 'web', port: 80 },
    ],
    hostnames: ['shop.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [
          { name: 'web', port: 80, weight: 90 },
          { name: 'web-canary', port: 80, weight: 10 },
        ],
        filters: [
          { type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', namespace: 'test', port: 80 } } },
        ],
      },
      {
        matches: [{ path: { type: 'PathPrefix', value: '/assets' } }],
        backendRefs: [{ group: 'storage.example.com', kind: 'Bucket', name: 'assets' }],
      },
    ],
  },
};

describe('gateway pack: routes', () => {
  it('finds parents (Gateway by default, with namespace/group/kind when given) and backends (Service by default)', () => {
    expect(extractReferences(rs, httpRoute)).toEqual([
      { referent: `Gateway.${GW}/infra/public`, fieldPath: 'spec.parentRefs[0].name' },
      { referent: `Gateway.${GW}/shop/internal`, fieldPath: 'spec.parentRefs[1].name' },
      { referent: 'Service/shop/web', fieldPath: 'spec.parentRefs[2].name' },
      { referent: 'Service/shop/web', fieldPath: 'spec.rules[0].backendRefs[0].name' },
      { referent: 'Service/shop/web-canary', fieldPath: 'spec.rules[0].backendRefs[1].name' },
      { referent: 'Bucket.storage.example.com/shop/assets', fieldPath: 'spec.rules[1].backendRefs[0].name' },
      {
        referent: 'Service/test/shadow',
        fieldPath: 'spec.rules[0].filters[0].requestMirror.backendRef.name',
        needsGrant: true,
      },
    ]);
  });

  it.each(['GRPCRoute', 'TCPRoute', 'TLSRoute', 'UDPRoute'])('%s has parents and backends too', (kind) => {
    const route: KubeObject = {
      apiVersion: `${GW}/v1alpha2`,
      kind,
      metadata: { name: 'r', namespace: 'shop' },
      spec: {
        parentRefs: [{ name: 'edge', sectionName: 'l4' }],
        rules: [{ backendRefs: [{ name: 'backend', port: 5432 }] }],
      },
    };
    expect(extractReferences(rs, route)).toEqual([
      { referent: `Gateway.${GW}/shop/edge`, fieldPath: 'spec.parentRefs[0].name' },
      { referent: 'Service/shop/backend', fieldPath: 'spec.rules[0].backendRefs[0].name' },
    ]);
  });

  it('a route of a kind the pack does not know is ignored', () => {
    expect(extractReferences(rs, { ...httpRoute, kind: 'MeshRoute' })).toEqual([]);
  });
});

describe('gateway pack: Gateway', () => {
  const gateway: KubeObject = {
    apiVersion: `${GW}/v1`,
    kind: 'Gateway',
    metadata: { name: 'public', namespace: 'infra' },
    spec: {
      gatewayClassName: 'istio',
      listeners: [
        { name: 'http', protocol: 'HTTP', port: 80 },
        {
          name: 'https',
          protocol: 'HTTPS',
          port: 443,
          tls: {
            mode: 'Terminate',
            certificateRefs: [
              { kind: 'Secret', name: 'shop-cert' },
              { name: 'api-cert', namespace: 'certs' },
            ],
          },
        },
      ],
    },
    status: {
      conditions: [
        { type: 'Accepted', status: 'True' },
        {
          type: 'Programmed',
          status: 'False',
          reason: 'AddressNotAssigned',
          message: 'No addresses have been assigned to the Gateway',
        },
      ],
    },
  };

  it('refers to its cluster-scoped GatewayClass and its listeners’ certificates', () => {
    expect(extractReferences(rs, gateway)).toEqual([
      { referent: `GatewayClass.${GW}//istio`, fieldPath: 'spec.gatewayClassName' },
      { referent: 'Secret/infra/shop-cert', fieldPath: 'spec.listeners[1].tls.certificateRefs[0].name' },
      {
        referent: 'Secret/certs/api-cert',
        fieldPath: 'spec.listeners[1].tls.certificateRefs[1].name',
        needsGrant: true,
      },
    ]);
  });

  it('a Gateway is ready when Programmed, and says why not', () => {
    expect(readinessOf(rs, gateway)).toEqual({
      ready: false,
      condition: 'Programmed',
      reason: 'AddressNotAssigned',
      message: 'No addresses have been assigned to the Gateway',
    });
  });

  it('a GatewayClass is ready when Accepted', () => {
    const gc = (status: string): KubeObject => ({
      apiVersion: `${GW}/v1`,
      kind: 'GatewayClass',
      metadata: { name: 'istio' },
      status: { conditions: [{ type: 'Accepted', status, reason: 'Waiting' }] },
    });
    expect(readinessOf(rs, gc('True'))).toEqual({ ready: true });
    expect(readinessOf(rs, gc('Unknown'))).toMatchObject({ ready: false, condition: 'Accepted', reason: 'Waiting' });
  });
});
