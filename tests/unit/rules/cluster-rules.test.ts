import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, existsReadiness } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import {
  ClusterRules,
  builtinRuleSet,
  observeRuleSet,
  referrerKinds,
  type ReferenceRulesState,
  type RulesDocument,
} from '@/lib/rules';

const GROUP = 'acme.example';
const WIDGET = `rules/Widget.${GROUP}`;

function referenceRules(name: string, spec: unknown, generation = 1, namespace = 'platform'): KubeObject {
  return {
    apiVersion: 'refwatch.dev/v1alpha1',
    kind: 'ReferenceRules',
    metadata: { name, namespace, generation },
    ...(spec === undefined ? {} : { spec }),
  } as KubeObject;
}

const widgetRules = (path = 'spec.configRef.name') => ({
  rules: [{ referrer: { group: GROUP, kind: 'Widget' }, references: [{ path, referent: { kind: 'ConfigMap' } }] }],
});

const widget = (name: string, spec: object): KubeObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: 'shop' },
  spec,
});

const crd = (extra: Partial<{ established: string }> = {}): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'referencerules.refwatch.dev' },
  spec: { group: 'refwatch.dev', versions: [{ name: 'v1alpha1', served: true, storage: true }] },
  ...(extra.established ? { status: { conditions: [{ type: 'Established', status: extra.established }] } } : {}),
});
const CRD_KEY = 'CustomResourceDefinition.apiextensions.k8s.io//referencerules.refwatch.dev';

let manager: Manager | undefined;
let rules: ClusterRules | undefined;
afterEach(async () => {
  await rules?.stop();
  await manager?.stop();
  rules = manager = undefined;
});

/** start runs core's rules and the ReferenceRules watch on a cluster with their CRD, then applies the objects in order. */
function start(
  objects: KubeObject[],
  source = new MemoryInformerSource({ priming: 'sync' }),
  crds: KubeObject[] = [crd({ established: 'True' })],
) {
  for (const c of crds) source.apply(c);
  const packs = ['core'] as const;
  const observer = observeRuleSet(builtinRuleSet(packs));
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (k) => observer.readiness(k) });
  observer.attach(manager);
  const changes: ReferenceRulesState[][] = [];
  rules = new ClusterRules({
    manager,
    source,
    observer,
    compile: (docs: readonly RulesDocument[]) => builtinRuleSet(packs, docs),
    managed: referrerKinds(builtinRuleSet(packs)),
    onChange: (s) => changes.push(s),
  });
  manager.start();
  rules.start();
  for (const o of objects) source.apply(o);
  return { source, observer, manager, rules, changes };
}

function referents(m: Manager, controller: string, key: string): string[] {
  return m.registry.referencesOf(controller, key).map((r) => `${r.fieldPath} → ${r.referent}`);
}

describe('ClusterRules (ReferenceRules objects)', () => {
  it('applies a good object: its referrer kind is watched and its references found', async () => {
    const { manager } = start([
      referenceRules('acme', widgetRules()),
      widget('w1', { configRef: { name: 'settings' } }),
    ]);
    expect(manager.controllerNames()).toContain(WIDGET);
    await vi.waitFor(() =>
      expect(referents(manager, WIDGET, `Widget.${GROUP}/shop/w1`)).toEqual([
        'spec.configRef.name → ConfigMap/shop/settings',
      ]),
    );
    expect(rules!.states()).toEqual([
      {
        object: 'platform/acme',
        applied: true,
        message: `ReferenceRules platform/acme: applied (generation 1): 1 rule for Widget.${GROUP}`,
        problems: [],
      },
    ]);
    expect(rules!.warnings()).toEqual([]);
  });

  it('reports a bad object with the field named and keeps the other objects’ rules', async () => {
    const bad = {
      rules: [
        ...widgetRules().rules,
        {
          referrer: { group: GROUP, kind: 'Gadget' },
          references: [{ path: 'spec..name', referent: { kind: 'Secret' } }],
        },
        { referrer: { group: GROUP, kind: 'gizmo' }, references: [{ path: 'spec.x', referent: { kind: 'Secret' } }] },
      ],
    };
    const { manager } = start([
      referenceRules('acme', widgetRules()),
      referenceRules('broken', bad, 4, 'team-b'),
      widget('w1', { configRef: { name: 'settings' } }),
    ]);
    await vi.waitFor(() => expect(referents(manager, WIDGET, `Widget.${GROUP}/shop/w1`)).toHaveLength(1));
    expect(manager.controllerNames()).not.toContain(`rules/Gadget.${GROUP}`);
    const [acme, broken] = rules!.states();
    expect(acme).toMatchObject({ object: 'platform/acme', applied: true, problems: [] });
    expect(broken).toMatchObject({
      object: 'team-b/broken',
      applied: false,
      message: 'ReferenceRules team-b/broken: rejected, nothing of it applies',
    });
    expect(broken!.problems).toHaveLength(2);
    expect(broken!.problems[0]).toMatch(/^ReferenceRules team-b\/broken spec\.rules\[1\]\.references\[0\]\.path: .+/);
    expect(broken!.problems[1]).toBe(
      'ReferenceRules team-b/broken spec.rules[2].referrer.kind: "gizmo" is not a kind: use CamelCase, starting with an uppercase letter (ConfigMap)',
    );
    expect(rules!.warnings()).toEqual(broken!.problems);
  });

  it('an object without a spec is reported, not thrown', () => {
    start([referenceRules('empty', undefined)]);
    expect(rules!.warnings()).toEqual([
      'ReferenceRules platform/empty spec: is required; give it rules:, conventions: or kinds: as in a rules file',
    ]);
  });

  it('an edit takes effect without a restart; a bad edit keeps the last good version in force', async () => {
    const { source, manager } = start([
      referenceRules('acme', widgetRules()),
      widget('w1', { configRef: { name: 'settings' }, secretRef: { name: 'creds' } }),
    ]);
    const w1 = `Widget.${GROUP}/shop/w1`;
    await vi.waitFor(() =>
      expect(referents(manager, WIDGET, w1)).toEqual(['spec.configRef.name → ConfigMap/shop/settings']),
    );

    source.apply(referenceRules('acme', widgetRules('spec.secretRef.name'), 2));
    await vi.waitFor(() =>
      expect(referents(manager, WIDGET, w1)).toEqual(['spec.secretRef.name → ConfigMap/shop/creds']),
    );

    source.apply(referenceRules('acme', widgetRules('spec[oops'), 3));
    const [acme] = rules!.states();
    expect(acme!.applied).toBe(true);
    expect(acme!.message).toBe(
      `ReferenceRules platform/acme: generation 3 rejected; its last good version (generation 2) stays in force: 1 rule for Widget.${GROUP}`,
    );
    expect(acme!.problems[0]).toMatch(/^ReferenceRules platform\/acme spec\.rules\[0\]\.references\[0\]\.path: /);
    expect(manager.controllerNames()).toContain(WIDGET);
    expect(referents(manager, WIDGET, w1)).toEqual(['spec.secretRef.name → ConfigMap/shop/creds']);
  });

  it('deleting the object stops watching its referrer kind and drops its references', async () => {
    const { source, manager, changes } = start([
      referenceRules('acme', widgetRules()),
      widget('w1', { configRef: { name: 'settings' } }),
    ]);
    const w1 = `Widget.${GROUP}/shop/w1`;
    await vi.waitFor(() => expect(referents(manager, WIDGET, w1)).toHaveLength(1));
    source.delete('ReferenceRules.refwatch.dev/platform/acme');
    await vi.waitFor(() => expect(manager.controllerNames()).not.toContain(WIDGET));
    await vi.waitFor(() => expect(referents(manager, WIDGET, w1)).toEqual([]));
    expect(source.openWatches(`Widget.${GROUP}`)).toBe(0);
    expect(rules!.states()).toEqual([]);
    expect(changes.at(-1)).toEqual([]);
  });

  it('merges with the packs: rules for a pack’s kind join its controller, and kinds entries override readiness', async () => {
    const { source, manager, observer } = start([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'shop' },
        spec: {
          subdomain: 'extra',
          containers: [{ name: 'c', image: 'x', envFrom: [{ configMapRef: { name: 'base' } }] }],
        },
      },
    ]);
    expect(observer.readiness(`Widget.${GROUP}`)).not.toBe(existsReadiness);
    source.apply(
      referenceRules('pods', {
        rules: [
          {
            referrer: { kind: 'Pod' },
            references: [{ path: 'spec.subdomain', referent: { kind: 'ConfigMap' } }],
          },
        ],
        kinds: [{ group: GROUP, kind: 'Widget', ready: 'exists' }],
      }),
    );
    await vi.waitFor(() =>
      expect(referents(manager, 'rules/Pod', 'Pod/shop/p')).toEqual([
        'spec.containers[0].envFrom[0].configMapRef.name → ConfigMap/shop/base',
        'spec.subdomain → ConfigMap/shop/extra',
      ]),
    );
    // The pack's kind keeps its one controller: none added, none removed.
    expect(manager.controllerNames().filter((n) => n === 'rules/Pod')).toHaveLength(1);
    expect(observer.readiness(`Widget.${GROUP}`)).toBe(existsReadiness);
    source.delete('ReferenceRules.refwatch.dev/platform/pods');
    await vi.waitFor(() =>
      expect(referents(manager, 'rules/Pod', 'Pod/shop/p')).toEqual([
        'spec.containers[0].envFrom[0].configMapRef.name → ConfigMap/shop/base',
      ]),
    );
    expect(manager.controllerNames()).toContain('rules/Pod');
  });

  it('names the field whose kind the cluster does not serve', () => {
    const { source } = start([referenceRules('acme', widgetRules())]);
    source.fail(`Widget.${GROUP}`, { reason: 'KindUnknown', message: `no resource serves Widget.${GROUP}` });
    expect(rules!.warnings()).toEqual([
      `ReferenceRules platform/acme spec.rules[0].referrer: the cluster does not serve Widget.${GROUP}; install its CustomResourceDefinition or fix the kind and group`,
    ]);
  });

  it('a Forbidden watch is a clear warning with the rule to grant, and nothing else changes', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.forbid('ReferenceRules.refwatch.dev');
    const { manager } = start([], source);
    await vi.waitFor(() => expect(rules!.watchState()).toBeDefined());
    expect(rules!.watchState()).toMatch(
      /^ReferenceRules: not watched \(Forbidden\): .*; grant apiGroups: \["refwatch.dev"\], resources: \[".+"\], verbs: \["list","watch"\]; the rules files and packs stay in force$/,
    );
    expect(rules!.states()).toEqual([]);
    expect(manager.controllerNames()).toContain('rules/Pod');
  });

  it('watches ReferenceRules only while their CRD is served, and drops their rules when it goes', async () => {
    const { source, manager } = start([], new MemoryInformerSource({ priming: 'sync' }), [
      crd({ established: 'False' }),
    ]);
    expect(source.openWatches('ReferenceRules.refwatch.dev')).toBe(0);
    expect(rules!.watchState()).toMatch(
      /^ReferenceRules: not watched, the cluster does not serve refwatch.dev\/v1alpha1/,
    );
    source.apply(crd({ established: 'True' }));
    expect(source.openWatches('ReferenceRules.refwatch.dev')).toBe(1);
    expect(rules!.watchState()).toBeUndefined();
    source.apply(referenceRules('acme', widgetRules()));
    expect(manager.controllerNames()).toContain(WIDGET);
    source.delete(CRD_KEY);
    expect(source.openWatches('ReferenceRules.refwatch.dev')).toBe(0);
    await vi.waitFor(() => expect(manager.controllerNames()).not.toContain(WIDGET));
    expect(rules!.states()).toEqual([]);
  });

  it('watches ReferenceRules directly when CustomResourceDefinitions may not be listed', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.forbid('CustomResourceDefinition.apiextensions.k8s.io');
    const { manager } = start([referenceRules('acme', widgetRules())], source, []);
    await vi.waitFor(() => expect(manager.controllerNames()).toContain(WIDGET));
    expect(rules!.states().map((s) => s.object)).toEqual(['platform/acme']);
  });

  it('stop releases the CRD and ReferenceRules watches', async () => {
    const { source } = start([]);
    const CRDS = 'CustomResourceDefinition.apiextensions.k8s.io';
    // core's own CRD referrers share the CRD watch: stop gives up this subscriber's share, the only one here.
    await manager!.removeController(`rules/${CRDS}`);
    expect(source.openWatches('ReferenceRules.refwatch.dev')).toBe(1);
    expect(source.openWatches(CRDS)).toBe(1);
    await rules!.stop();
    expect(source.openWatches('ReferenceRules.refwatch.dev')).toBe(0);
    expect(source.openWatches(CRDS)).toBe(0);
  });
});
