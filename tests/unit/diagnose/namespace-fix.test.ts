import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain, type ReferenceExplanation } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, namespaceFieldOf, observeRuleSet } from '@/lib/rules';

// What explain tells a referrer whose referent exists in another namespace
// depends on whether the reference can name a namespace at all: a Pod's
// ConfigMap volume cannot (same namespace only), a Gateway API parentRef can.

const GATEWAY = 'gateway.networking.k8s.io';
let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** The rules observer over the core and gateway packs, on a memory cluster holding objects. */
async function observe(objects: KubeObject[], referrer: string): Promise<ReferenceExplanation> {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core', 'gateway'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  for (const o of objects) source.apply(o);
  let found: ReferenceExplanation | undefined;
  await vi.waitFor(() => {
    const r = explain(manager!, referrer);
    if (!r.ok) throw r.error;
    found = r.value.controllers[0]?.references[0];
    expect(found?.state).toBe('NotFound');
  });
  return found!;
}

describe('the fix for a referent found in another namespace', () => {
  it('a ConfigMap volume names its own namespace only: the fix says so and invents no namespace field', async () => {
    const ref = await observe(
      [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'billing' } },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'shop' },
          spec: { volumes: [{ name: 'config', configMap: { name: 'settings' } }] },
        },
      ],
      'Pod/shop/web',
    );
    expect(ref.fieldPath).toBe('spec.volumes[0].configMap.name');
    expect(ref.message).toBe('ConfigMap/shop/settings not found; settings exists in namespace billing');
    expect(ref.fix).toBe(
      "spec.volumes[0].configMap.name can only name a ConfigMap in the referrer's own namespace shop: create ConfigMap settings in shop (a copy of the one in namespace billing)",
    );
    expect(ref.fix).not.toContain('.namespace');
    expect(ref.suggestions).toEqual(['ConfigMap/billing/settings']);
  });

  it("a Gateway API parentRef can name another namespace: the fix names the rule's namespace field", async () => {
    const ref = await observe(
      [
        { apiVersion: `${GATEWAY}/v1`, kind: 'Gateway', metadata: { name: 'edge', namespace: 'infra' }, spec: {} },
        {
          apiVersion: `${GATEWAY}/v1`,
          kind: 'HTTPRoute',
          metadata: { name: 'web', namespace: 'shop' },
          spec: { parentRefs: [{ name: 'edge' }] },
        },
      ],
      `HTTPRoute.${GATEWAY}/shop/web`,
    );
    expect(ref.fix).toBe('set spec.parentRefs[0].namespace to infra, or move edge to namespace shop');
  });
});

describe('namespaceFieldOf', () => {
  const rs = builtinRuleSet(['core', 'gateway'], []);

  it('is null for a field the rules read without a namespace, the namespace beside the name otherwise, undefined when no rule yields the path', () => {
    expect(namespaceFieldOf(rs, { group: '', kind: 'Pod' }, 'spec.volumes[3].configMap.name')).toBeNull();
    expect(namespaceFieldOf(rs, { group: '', kind: 'Pod' }, 'spec.containers[0].envFrom[1].secretRef.name')).toBeNull();
    expect(namespaceFieldOf(rs, { group: GATEWAY, kind: 'HTTPRoute' }, 'spec.rules[1].backendRefs[0].name')).toBe(
      'spec.rules[1].backendRefs[0].namespace',
    );
    expect(namespaceFieldOf(rs, { group: '', kind: 'Pod' }, 'spec.hostname')).toBeUndefined();
  });
});
