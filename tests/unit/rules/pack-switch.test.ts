import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { PackSwitch, builtinRuleSet, observeRuleSet, referrerKinds } from '@/lib/rules';

const crd = (
  group: string,
  plural: string,
  extra: Partial<{ established: string; deleting: boolean }> = {},
): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${group}`, ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: {
    group,
    versions: [
      { name: 'v1alpha1', served: false },
      { name: 'v1', served: true },
    ],
  },
  ...(extra.established ? { status: { conditions: [{ type: 'Established', status: extra.established }] } } : {}),
});

let manager: Manager | undefined;
let packs: PackSwitch | undefined;
afterEach(async () => {
  await packs?.stop();
  await manager?.stop();
  packs = manager = undefined;
});

function start(objects: KubeObject[]) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  for (const o of objects) source.apply(o);
  const observer = observeRuleSet(builtinRuleSet());
  manager = new Manager({ source, statsIntervalMs: 0, readiness: (k) => observer.readiness(k) });
  // Core's own CustomResourceDefinition referrers (conversion webhooks) are left out, so that the
  // CRD watch is the switch's alone and its stop can be seen.
  const alwaysOn = referrerKinds(builtinRuleSet(['core'])).filter((gk) => gk.kind !== 'CustomResourceDefinition');
  observer.attach(manager, { kinds: alwaysOn });
  const changes: string[][] = [];
  packs = new PackSwitch({
    manager,
    source,
    observer,
    packs: ['cert-manager', 'external-secrets'],
    alwaysOn,
    onChange: (s) => changes.push(s.map((x) => x.why)),
  });
  manager.start();
  packs.start();
  return { source, changes, packs, manager };
}

describe('PackSwitch (--packs auto)', () => {
  it('turns a pack on while an established CRD serves its group, with the served version as the reason', () => {
    const { packs, manager } = start([crd('cert-manager.io', 'certificates', { established: 'True' })]);
    expect(packs.packStates()).toEqual([
      { pack: 'cert-manager', on: true, why: 'cert-manager: on, cert-manager.io/v1 served' },
      { pack: 'external-secrets', on: false, why: 'external-secrets: off, external-secrets.io not served' },
    ]);
    expect(manager.controllerNames()).toContain('rules/Certificate.cert-manager.io');
    expect(manager.controllerNames()).not.toContain('rules/ExternalSecret.external-secrets.io');
  });

  it('ignores a CRD not yet established or being deleted', () => {
    const { packs } = start([
      crd('cert-manager.io', 'certificates', { established: 'False' }),
      crd('external-secrets.io', 'externalsecrets', { deleting: true }),
    ]);
    expect(packs.packStates().map((s) => s.on)).toEqual([false, false]);
  });

  it('switches live as CRDs come and go, removing only the pack’s own controllers', async () => {
    const { source, changes, manager } = start([]);
    source.apply(crd('external-secrets.io', 'externalsecrets'));
    expect(manager.controllerNames()).toContain('rules/ExternalSecret.external-secrets.io');
    source.delete('CustomResourceDefinition.apiextensions.k8s.io//externalsecrets.external-secrets.io');
    await vi.waitFor(() => expect(manager.controllerNames()).not.toContain('rules/ExternalSecret.external-secrets.io'));
    expect(manager.controllerNames()).toContain('rules/Pod');
    expect(changes.map((c) => c[1])).toEqual([
      'external-secrets: off, external-secrets.io not served',
      'external-secrets: on, external-secrets.io/v1 served',
      'external-secrets: off, external-secrets.io not served',
    ]);
  });

  it('a Forbidden CRD watch leaves every pack off, saying which rule to grant', async () => {
    const source = new MemoryInformerSource({ priming: 'sync' });
    source.forbid('CustomResourceDefinition.apiextensions.k8s.io');
    const observer = observeRuleSet(builtinRuleSet());
    manager = new Manager({ source, statsIntervalMs: 0, readiness: (k) => observer.readiness(k) });
    packs = new PackSwitch({ manager, source, observer, packs: ['keda'], alwaysOn: [] });
    manager.start();
    packs.start();
    await vi.waitFor(() => expect(packs!.packStates()[0]!.why).toContain('undecided'));
    const [keda] = packs.packStates();
    expect(keda).toMatchObject({ pack: 'keda', on: false });
    expect(keda!.why).toMatch(
      /^keda: off, undecided: the CustomResourceDefinition watch fails with Forbidden: .*; grant apiGroups: \["apiextensions.k8s.io"\], resources: \["customresourcedefinitions"\], verbs: \["list","watch"\], or give --packs explicitly$/,
    );
  });

  it('stop releases the CRD watch', async () => {
    const { source, packs } = start([]);
    expect(source.openWatches('CustomResourceDefinition.apiextensions.k8s.io')).toBe(1);
    await packs.stop();
    expect(source.openWatches('CustomResourceDefinition.apiextensions.k8s.io')).toBe(0);
  });
});
