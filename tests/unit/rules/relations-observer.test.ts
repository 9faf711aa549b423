import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, stuck } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, observeRuleSet } from '@/lib/rules';

// The rules observer end to end on a memory cluster: what the new relations
// make a referrer's state, its explanation and the stuck list say.

let manager: Manager | undefined;
let source: MemoryInformerSource | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
  source = undefined;
});

function start(objects: KubeObject[]): Manager {
  source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core', 'gateway'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  for (const o of objects) source.apply(o);
  return manager;
}

const stateOf = (m: Manager, controller: string, key: string) =>
  m.changelog.get('referrer', `${controller}|${key}`)?.state;

describe('relations through the rules observer', () => {
  it('a Deployment whose ServiceAccount is missing is stuck on it, and resolves when it is created', async () => {
    const m = start([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'checkout', namespace: 'shop' },
        spec: { template: { spec: { serviceAccountName: 'checkout', containers: [{ name: 'c', image: 'x' }] } } },
      },
    ]);
    const controller = 'rules/Deployment.apps';
    await vi.waitFor(() => expect(stateOf(m, controller, 'Deployment.apps/shop/checkout')).toBe('NotFound'));
    const entry = stuck(m, { olderThan: 0 }).find((e) => e.key === 'Deployment.apps/shop/checkout');
    expect(entry).toMatchObject({
      reason: 'NotFound',
      referent: 'ServiceAccount/shop/checkout',
      message: expect.stringContaining('ServiceAccount/shop/checkout not found'),
    });
    expect(entry?.fix).not.toBe('');
    source!.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'checkout', namespace: 'shop' } });
    await vi.waitFor(() => expect(stateOf(m, controller, 'Deployment.apps/shop/checkout')).toBe('Resolved'));
  });

  it('a Pod whose controller owner is gone is orphaned: explained, but Resolved and never stuck', async () => {
    const m = start([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web-1',
          namespace: 'shop',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4', uid: 'u', controller: true }],
        },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
    ]);
    await vi.waitFor(() => expect(stateOf(m, 'rules/Pod', 'Pod/shop/web-1')).toBe('Resolved'));
    const r = explain(m, 'Pod/shop/web-1');
    if (!r.ok) throw r.error;
    const ref = r.value.controllers[0]!.references[0]!;
    expect(ref).toMatchObject({ state: 'NotFound', referent: 'ReplicaSet.apps/shop/web-7d4', blocking: false });
    expect(ref.message).toMatch(/^orphaned: ReplicaSet\.apps\/shop\/web-7d4 not found/);
    expect(stuck(m, { olderThan: 0 }).map((e) => e.key)).not.toContain('Pod/shop/web-1');
  });

  it('a Pod on a NotReady Node whose owner is gone is stuck on the Node, not on the owner', async () => {
    const m = start([
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1' },
        status: {
          conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'PLEG is not healthy' }],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web-2',
          namespace: 'shop',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone', uid: 'u', controller: true }],
        },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
      },
    ]);
    await vi.waitFor(() => expect(stateOf(m, 'rules/Pod', 'Pod/shop/web-2')).toBe('Waiting'));
    const entry = stuck(m, { olderThan: 0 }).find((e) => e.key === 'Pod/shop/web-2');
    expect(entry).toMatchObject({ reason: 'NotReady', referent: 'Node//n1' });
  });

  it('a webhook configuration whose Service is gone is stuck with its blast radius', async () => {
    const m = start([
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'policy' },
        webhooks: [
          {
            name: 'pods.policy.example.com',
            clientConfig: { service: { namespace: 'policy', name: 'policy-webhook' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          },
        ],
      },
    ]);
    const key = 'ValidatingWebhookConfiguration.admissionregistration.k8s.io//policy';
    await vi.waitFor(() =>
      expect(stateOf(m, 'rules/ValidatingWebhookConfiguration.admissionregistration.k8s.io', key)).toBe('NotFound'),
    );
    const entry = stuck(m, { olderThan: 0 }).find((e) => e.key === key);
    expect(entry?.referent).toBe('Service/policy/policy-webhook');
    expect(entry?.message).toContain(
      'failurePolicy Fail: every CREATE of pods in all namespaces fails while this Service is missing',
    );
  });

  it('a Service whose selector matches no Pod is stuck as NoMatch, naming what would match and the fix', async () => {
    // More Pods without the label than with it: the one with app=web is still what the selector likely meant.
    const unlabelled = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'shop' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    const m = start([
      unlabelled('worker'),
      unlabelled('reporter'),
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web-v2', namespace: 'shop' },
        spec: { selector: { app: 'web-v2' } },
      },
    ]);
    await vi.waitFor(() => expect(stateOf(m, 'rules/Service', 'Service/shop/web-v2')).toBe('NoMatch'));
    expect(stuck(m, { olderThan: 0 }).find((e) => e.key === 'Service/shop/web-v2')).toMatchObject({
      reason: 'NoMatch',
      message: '0 Pods in shop match app=web-v2; 1 Pod has app=web: did you mean app=web?',
      fix: 'set spec.selector to app=web, or label a Pod in shop with app=web-v2',
    });
  });

  describe('a webhook whose Service has no ready Pod', () => {
    const WEBHOOK = 'rules/ValidatingWebhookConfiguration.admissionregistration.k8s.io';
    const KEY = 'ValidatingWebhookConfiguration.admissionregistration.k8s.io//policy';
    const webhook: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'policy' },
      webhooks: [
        {
          name: 'pods.policy.example.com',
          clientConfig: { service: { namespace: 'policy', name: 'policy-webhook' } },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        },
      ],
    };
    const service = (app: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'policy-webhook', namespace: 'policy' },
      spec: { selector: { app } },
    });
    const pod = (ready: boolean, extra: Record<string, unknown> = {}): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'policy-1', namespace: 'policy', labels: { app: 'policy' } },
      spec: { containers: [{ name: 'c', image: 'x' }], ...extra },
      status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    });

    it('whose selector matches nothing is NotReady, says what would match and the blast radius, and resolves once it matches', async () => {
      const m = start([pod(true), service('policy-v2'), webhook]);
      await vi.waitFor(() => expect(stateOf(m, WEBHOOK, KEY)).toBe('Waiting'));
      const r = explain(m, KEY);
      if (!r.ok) throw r.error;
      expect(r.value.controllers[0]!.references[0]).toMatchObject({
        referent: 'Service/policy/policy-webhook',
        state: 'NotReady',
        reason: 'NoReadyEndpoints',
        message: expect.stringMatching(
          /^Service\/policy\/policy-webhook has no ready endpoints: 0 Pods in policy match app=policy-v2; .*did you mean app=policy\?.*failurePolicy Fail: every CREATE of pods in all namespaces fails while this Service is not available$/,
        ),
        fix: expect.stringContaining('app=policy-v2 in policy'),
      });
      expect(stuck(m, { olderThan: 0 }).find((e) => e.key === KEY)).toMatchObject({
        referent: 'Service/policy/policy-webhook',
        message: expect.stringContaining('has no ready endpoints: 0 Pods in policy match app=policy-v2'),
      });
      source!.apply(service('policy'));
      await vi.waitFor(() => expect(stateOf(m, WEBHOOK, KEY)).toBe('Resolved'));
    });

    it('whose Pods are all NotReady waits on them, the root cause is what the Pod waits on, and a Pod turning Ready resolves it', async () => {
      const waiting = pod(false, { volumes: [{ name: 's', secret: { secretName: 'db-passwd' } }] });
      const m = start([waiting, service('policy'), webhook]);
      await vi.waitFor(() => expect(stateOf(m, 'rules/Pod', 'Pod/policy/policy-1')).toBe('NotFound'));
      await vi.waitFor(() => expect(stateOf(m, WEBHOOK, KEY)).toBe('Waiting'));
      const r = explain(m, KEY);
      if (!r.ok) throw r.error;
      expect(r.value.controllers[0]!.references[0]!.message).toMatch(
        /^Service\/policy\/policy-webhook has no ready endpoints: it selects 1 Pod, 0 Ready/,
      );
      expect(r.value.controllers[0]!.rootCause).toMatchObject({
        path: [KEY, 'Service/policy/policy-webhook', 'Pod/policy/policy-1', 'Secret/policy/db-passwd'],
        state: 'NotFound',
      });
      // Only the Pod changes: the Service object stays as it was, yet the webhook wakes.
      source!.apply(pod(true));
      await vi.waitFor(() => expect(stateOf(m, WEBHOOK, KEY)).toBe('Resolved'));
    });
  });

  it('a cross-namespace backendRef is RefNotPermitted until a ReferenceGrant allows it, and again once it goes', async () => {
    const GW = 'gateway.networking.k8s.io';
    const m = start([
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'backend' } },
      {
        apiVersion: `${GW}/v1`,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { rules: [{ backendRefs: [{ name: 'api', namespace: 'backend', port: 80 }] }] },
      },
    ]);
    const key = `HTTPRoute.${GW}/shop/web`;
    const controller = `rules/HTTPRoute.${GW}`;
    await vi.waitFor(() =>
      expect(m.changelog.get('referrer', `${controller}|${key}`)?.reason).toBe('NotReady: Service/backend/api'),
    );
    expect(stateOf(m, controller, key)).toBe('Waiting');
    const entry = stuck(m, { olderThan: 0 }).find((e) => e.key === key);
    expect(entry).toMatchObject({
      reason: 'RefNotPermitted',
      referent: 'Service/backend/api',
      message:
        'RefNotPermitted: no ReferenceGrant in namespace backend allows HTTPRoute shop/web to refer to Service backend/api',
    });
    expect(entry?.fix).toContain(
      'create a ReferenceGrant in namespace backend with from {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}',
    );

    // A grant that allows another namespace changes nothing.
    const grant = (fromNamespace: string) => ({
      apiVersion: `${GW}/v1beta1`,
      kind: 'ReferenceGrant',
      metadata: { name: `from-${fromNamespace}`, namespace: 'backend' },
      spec: {
        from: [{ group: GW, kind: 'HTTPRoute', namespace: fromNamespace }],
        to: [{ group: '', kind: 'Service' }],
      },
    });
    source!.apply(grant('billing'));
    source!.apply(grant('shop'));
    await vi.waitFor(() => expect(stateOf(m, controller, key)).toBe('Resolved'));
    const r = explain(m, key);
    if (!r.ok) throw r.error;
    const states = r.value.controllers[0]!.references.map((x) => [x.referent, x.state]);
    expect(states).toHaveLength(2);
    expect(states).toEqual(
      expect.arrayContaining([
        [`ReferenceGrant.${GW}/backend/from-shop`, 'Ready'],
        ['Service/backend/api', 'Ready'],
      ]),
    );

    source!.delete(`ReferenceGrant.${GW}/backend/from-shop`);
    await vi.waitFor(() => expect(stateOf(m, controller, key)).toBe('Waiting'));
    expect(stuck(m, { olderThan: 0 }).find((e) => e.key === key)?.reason).toBe('RefNotPermitted');
  });

  it('a backendRef in the route’s own namespace needs no grant', async () => {
    const GW = 'gateway.networking.k8s.io';
    const m = start([
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'shop' } },
      {
        apiVersion: `${GW}/v1`,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { rules: [{ backendRefs: [{ name: 'api', port: 80 }] }] },
      },
    ]);
    await vi.waitFor(() => expect(stateOf(m, `rules/HTTPRoute.${GW}`, `HTTPRoute.${GW}/shop/web`)).toBe('Resolved'));
  });
});
