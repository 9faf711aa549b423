import { afterEach, describe, expect, it, vi } from 'vitest';
import { explain } from '@/lib/diagnose';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, compileRuleSet, extractSelectors, observeRuleSet, parseRulesText } from '@/lib/rules';

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

function pod(name: string, labels: Record<string, string>, ready = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', labels },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

/** The rules observer over the core pack, on a memory cluster holding objects. */
function observe(objects: KubeObject[]) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  const observer = observeRuleSet(builtinRuleSet(['core'], []));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (kind) => observer.readiness(kind) });
  observer.attach(manager);
  manager.start();
  for (const o of objects) source.apply(o);
  const m = manager;
  return { source, referrer: (controller: string, key: string) => m.changelog.get('referrer', `${controller}|${key}`) };
}

describe('selector rules', () => {
  it('read selector entries strictly, naming the field and the fix', () => {
    const r = parseRulesText(
      `rules:
  - referrer: { kind: Service }
    references:
      - selector: spec.selector
        form: hash
        referent: { kind: Pod }
`,
      'rules.yaml',
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.issues).toHaveLength(1);
      expect(r.error.issues[0]).toMatchObject({
        path: 'rules[0].references[0].form',
        line: 5,
        reason: "form must be 'labelSelector' or 'map'",
      });
    }
    const typo = parseRulesText(
      `rules:
  - referrer: { kind: Service }
    references:
      - selector: spec.selector
        referent: { kind: Pod }
        onNoMatch: warn
        emtpy: all
`,
      'rules.yaml',
    );
    expect(!typo.ok && typo.error.issues.map((i) => `${i.path}: ${i.reason}`)).toEqual([
      'rules[0].references[0].emtpy: unknown field; remove it or fix its spelling (docs/rules.md lists the fields)',
    ]);
  });

  it('find a selector with what the rule says of it, and skip an absent one', () => {
    const doc = parseRulesText(
      `rules:
  - referrer: { group: policy, kind: PodDisruptionBudget }
    references:
      - { selector: spec.selector, referent: { kind: Pod }, minMatchesField: spec.minAvailable }
`,
      'rules.yaml',
    );
    if (!doc.ok) throw doc.error;
    const rs = compileRuleSet([doc.value]);
    const pdb = (spec: object): KubeObject => ({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec,
    });
    expect(extractSelectors(rs, pdb({ selector: { matchLabels: { app: 'web' } }, minAvailable: 2 }))).toMatchObject([
      { fieldPath: 'spec.selector', kind: { group: '', kind: 'Pod' }, minMatches: 2, form: 'labelSelector' },
    ]);
    // A percentage is not a count of Pods this rule can check.
    expect(extractSelectors(rs, pdb({ selector: {}, minAvailable: '50%' }))[0]!.minMatches).toBeUndefined();
    expect(extractSelectors(rs, pdb({}))).toEqual([]);
  });

  it('core: a Service selecting nothing is NoMatch, and says what would match', async () => {
    const { referrer } = observe([
      pod('web-1', { app: 'web' }),
      pod('web-2', { app: 'web' }),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { selector: { app: 'web-v2' } },
      },
    ]);
    await vi.waitFor(() =>
      expect(referrer('rules/Service', 'Service/shop/web')).toMatchObject({
        state: 'NoMatch',
        message: '0 Pods in shop match app=web-v2; 2 Pods have app=web: did you mean app=web?',
      }),
    );
    const r = explain(manager!, 'Service/shop/web');
    if (!r.ok) throw r.error;
    expect(r.value.controllers[0]).toMatchObject({
      state: 'NoMatch',
      message: '0 Pods in shop match app=web-v2; 2 Pods have app=web: did you mean app=web?',
      selections: [{ fieldPath: 'spec.selector', kind: 'Pod', selector: 'app=web-v2', state: 'NoMatch', matched: 0 }],
      references: [],
    });
  });

  it('core: a Service whose Pods are all NotReady waits, and resolves when one is Ready', async () => {
    const { source, referrer } = observe([
      pod('web-1', { app: 'web' }, false),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { selector: { app: 'web' } },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'external', namespace: 'shop' },
        spec: { type: 'ExternalName' },
      },
    ]);
    await vi.waitFor(() =>
      expect(referrer('rules/Service', 'Service/shop/web')).toMatchObject({
        state: 'Waiting',
        message: 'selects 1 Pod, 0 Ready: the Service has no ready endpoints',
      }),
    );
    // Without a selector a Service is no reference: resolved, with nothing to wait for.
    expect(referrer('rules/Service', 'Service/shop/external')).toMatchObject({ state: 'Resolved', references: 0 });
    source.apply(pod('web-1', { app: 'web' }, true));
    await vi.waitFor(() => expect(referrer('rules/Service', 'Service/shop/web')!.state).toBe('Resolved'));
  });

  it('core: a PDB whose integer minAvailable exceeds its matches waits; an empty selector counts every Pod', async () => {
    const { source, referrer } = observe([
      pod('a', { app: 'web' }),
      pod('b', { app: 'api' }),
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'all', namespace: 'shop' },
        spec: { selector: {}, minAvailable: 3 },
      },
    ]);
    const pdb = () => referrer('rules/PodDisruptionBudget.policy', 'PodDisruptionBudget.policy/shop/all');
    await vi.waitFor(() =>
      expect(pdb()).toMatchObject({ state: 'Waiting', message: 'selects 2 Pods, fewer than the 3 it needs' }),
    );
    source.apply(pod('c', {}));
    await vi.waitFor(() => expect(pdb()!.state).toBe('Resolved'));
  });

  it('core: a NetworkPolicy selecting nothing is a warning, not stuck', async () => {
    const { referrer } = observe([
      pod('a', { app: 'web' }),
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'db', namespace: 'shop' },
        spec: { podSelector: { matchLabels: { role: 'db' } } },
      },
    ]);
    await vi.waitFor(() =>
      expect(
        referrer('rules/NetworkPolicy.networking.k8s.io', 'NetworkPolicy.networking.k8s.io/shop/db'),
      ).toMatchObject({
        state: 'Resolved',
        warning: 'spec.podSelector: 0 Pods in shop match role=db; no Pod has the label role',
      }),
    );
  });
});
