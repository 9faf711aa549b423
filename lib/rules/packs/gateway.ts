import { definePack } from '../rule-set';
import type { RulesDocumentInput } from '../schema';

type ReferenceInput = NonNullable<RulesDocumentInput['rules']>[number]['references'][number];

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** Gateway API refs carry group, kind and namespace next to the name; absent fields take these defaults. */
const refFields = { namespaceField: 'namespace', kindField: 'kind', groupField: 'group' } as const;

const parentRef: ReferenceInput = {
  path: 'spec.parentRefs[*].name',
  referent: { group: GATEWAY_GROUP, kind: 'Gateway' },
  ...refFields,
};
/** A backend or certificate in another namespace needs a ReferenceGrant there; a parent does not (its listeners decide). */
const backendRef = (path: string): ReferenceInput => ({
  path,
  referent: { group: '', kind: 'Service' },
  ...refFields,
  needsGrant: true,
});

/** Routes whose filters can mirror requests to another backend. */
const mirrorRefs = [
  backendRef('spec.rules[*].filters[*].requestMirror.backendRef.name'),
  backendRef('spec.rules[*].backendRefs[*].filters[*].requestMirror.backendRef.name'),
];

const route = (kind: string, extra: ReferenceInput[] = []) => ({
  referrer: { group: GATEWAY_GROUP, kind },
  references: [parentRef, backendRef('spec.rules[*].backendRefs[*].name'), ...extra],
});

/**
 * gateway: Gateway API routes to their parents and backends, and Gateways to
 * their class and certificates. A backend or certificate in another namespace
 * is RefNotPermitted until a ReferenceGrant there allows it (see observer.ts).
 */
export const gatewayPack = definePack('gateway', {
  rules: [
    route('HTTPRoute', mirrorRefs),
    route('GRPCRoute', mirrorRefs),
    route('TCPRoute'),
    route('TLSRoute'),
    route('UDPRoute'),
    {
      referrer: { group: GATEWAY_GROUP, kind: 'Gateway' },
      references: [
        { path: 'spec.gatewayClassName', referent: { group: GATEWAY_GROUP, kind: 'GatewayClass' } },
        {
          path: 'spec.listeners[*].tls.certificateRefs[*].name',
          referent: { group: '', kind: 'Secret' },
          ...refFields,
          needsGrant: true,
        },
      ],
    },
  ],
  kinds: [
    { group: GATEWAY_GROUP, kind: 'GatewayClass', scope: 'Cluster', ready: { condition: 'Accepted' } },
    { group: GATEWAY_GROUP, kind: 'Gateway', ready: { condition: 'Programmed' } },
    { kind: 'Service', ready: 'exists' },
    { kind: 'Secret', ready: 'exists' },
    // Not 'exists': that would cache grants as metadata only, and the observer reads their spec.
    { group: GATEWAY_GROUP, kind: 'ReferenceGrant', ready: 'default' },
  ],
});
