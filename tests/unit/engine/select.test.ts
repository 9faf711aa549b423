import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ReconcileContext, type Selection } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';

const SERVICE = { group: '', kind: 'Service' };
const POD = { group: '', kind: 'Pod' };

function service(name: string, selector: Record<string, string> | undefined, namespace = 'shop'): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: selector ? { selector } : {} };
}

function pod(name: string, labels: Record<string, string>, ready = true, namespace = 'shop'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? '' : 'ContainersNotReady' }],
    },
  };
}

function namespace(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** A Manager whose Services select their Pods (map form, at least one Ready); it records each reconcile's Selection. */
function rig(reconcile?: (ctx: ReconcileContext) => Selection) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  manager = new Manager({ source, grace: 20, statsIntervalMs: 0 });
  const last = new Map<string, Selection>();
  const controller = manager.addController({
    name: 'services',
    for: SERVICE,
    reconcile: (ctx) => {
      const s = reconcile
        ? reconcile(ctx)
        : ctx.select({
            kind: POD,
            selector: (ctx.object!.spec as { selector?: unknown }).selector,
            form: 'map',
            minReady: 1,
            unreadyMeans: 'the Service has no ready endpoints',
          });
      last.set(ctx.key, s);
    },
  });
  const woken = vi.spyOn(controller, 'enqueue');
  manager.start();
  const m = manager;
  const idle = () => vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  const referrer = (key: string) => m.changelog.get('referrer', `services|${key}`);
  return { source, manager: m, controller, last, woken, idle, referrer };
}

describe('ctx.select', () => {
  it('answers from the label index, registers each match as a selector edge, and wakes on every match-set change', async () => {
    const { source, manager, last, idle, referrer } = rig();
    source.apply(pod('web-1', { app: 'web' }));
    source.apply(pod('web-2', { app: 'web', tier: 'x' }));
    source.apply(pod('api-1', { app: 'api' }));
    source.apply(service('web', { app: 'web' }));
    await idle();
    expect(last.get('Service/shop/web')).toMatchObject({ state: 'Ready', selector: 'app=web', ready: 2 });
    expect(last.get('Service/shop/web')!.keys).toEqual(['Pod/shop/web-1', 'Pod/shop/web-2']);
    const edges = manager.changelog.snapshot({ entities: ['reference'] }).entities.reference!;
    expect(edges.map((e) => [e.referent, e.fieldPath, e.selector]).sort()).toEqual([
      ['Pod/shop/web-1', 'spec.selector', 'app=web'],
      ['Pod/shop/web-2', 'spec.selector', 'app=web'],
    ]);
    expect(source.openWatches('Pod')).toBe(1);

    // Relabel out, relabel in, create, delete: each is seen.
    source.apply(pod('web-1', { app: 'api' }));
    await idle();
    expect(last.get('Service/shop/web')!.keys).toEqual(['Pod/shop/web-2']);
    source.apply(pod('api-1', { app: 'web' }));
    await idle();
    expect(last.get('Service/shop/web')!.keys).toEqual(['Pod/shop/api-1', 'Pod/shop/web-2']);
    source.apply(pod('web-3', { app: 'web' }));
    await idle();
    expect(last.get('Service/shop/web')!.keys).toHaveLength(3);
    source.delete('Pod/shop/web-2');
    source.delete('Pod/shop/web-3');
    source.delete('Pod/shop/api-1');
    await idle();
    expect(last.get('Service/shop/web')).toMatchObject({ state: 'NoMatch', keys: [] });
    expect(referrer('Service/shop/web')).toMatchObject({
      state: 'NoMatch',
      message: expect.stringMatching(/^0 Pods in shop match app=web; 1 Pod has app=api: did you mean app=api\?/),
    });
  });

  it('wakes only the Services whose selectors name a changed label key', async () => {
    const { source, woken, idle } = rig();
    source.apply(pod('web-1', { app: 'web', tier: 'front' }));
    source.apply(service('web', { app: 'web' }));
    source.apply(service('front', { tier: 'front' }));
    source.apply(service('other', { team: 'x' }));
    await idle();
    woken.mockClear();
    source.apply(pod('web-1', { app: 'web', tier: 'back' }));
    await idle();
    expect(woken.mock.calls.map(([k]) => k)).toEqual(['Service/shop/front']);
  });

  it('restates nothing for a Service that sleeps through a change of one of its Pods', async () => {
    const { source, controller, woken, idle, referrer } = rig();
    source.apply(pod('web-1', { app: 'web', tier: 'front' }));
    source.apply(service('web', { app: 'web' }));
    await idle();
    const restated = vi.spyOn(controller, 'restate');
    woken.mockClear();
    // A label its selector does not name, on a matched Pod: neither its match set nor its readiness moves.
    source.apply(pod('web-1', { app: 'web', tier: 'back' }));
    await idle();
    expect(woken).not.toHaveBeenCalled();
    expect(restated).not.toHaveBeenCalled();
    expect(referrer('Service/shop/web')).toMatchObject({ state: 'Resolved', reconciles: 1 });
    // Its readiness still wakes it, through the same filter.
    source.apply(pod('web-1', { app: 'web', tier: 'back' }, false));
    await idle();
    expect(woken.mock.calls.map(([k]) => k)).toEqual(['Service/shop/web']);
    expect(referrer('Service/shop/web')).toMatchObject({ state: 'Waiting', reconciles: 2 });
  });

  it('says NoMatch with the nearest label sets, and resolves the moment a Pod matches', async () => {
    const { source, last, idle, referrer } = rig();
    for (const n of ['a', 'b', 'c']) source.apply(pod(`web-${n}`, { app: 'web' }));
    source.apply(service('web', { app: 'web-v2' }));
    await idle();
    expect(referrer('Service/shop/web')).toMatchObject({
      state: 'NoMatch',
      reason: 'NoMatch: Pod app=web-v2 in shop (spec.selector)',
      message: '0 Pods in shop match app=web-v2; 3 Pods have app=web: did you mean app=web?',
    });
    source.apply(pod('web-a', { app: 'web-v2' }));
    await idle();
    expect(last.get('Service/shop/web')!.state).toBe('Ready');
    expect(referrer('Service/shop/web')!.state).toBe('Resolved');
  });

  it('is NotReady when no matched Pod is Ready, and wakes when one becomes Ready', async () => {
    const { source, idle, referrer } = rig();
    for (const n of ['a', 'b', 'c']) source.apply(pod(`web-${n}`, { app: 'web' }, false));
    source.apply(service('web', { app: 'web' }));
    await idle();
    expect(referrer('Service/shop/web')).toMatchObject({
      state: 'Waiting',
      message: 'selects 3 Pods, 0 Ready: the Service has no ready endpoints',
    });
    source.apply(pod('web-b', { app: 'web' }, true));
    await idle();
    expect(referrer('Service/shop/web')!.state).toBe('Resolved');
  });

  it('treats a Service without a selector as no reference', async () => {
    const { source, manager, last, idle, referrer } = rig();
    source.apply(service('external', undefined));
    await idle();
    expect(last.get('Service/shop/external')!.state).toBe('NoSelector');
    expect(referrer('Service/shop/external')!.state).toBe('Resolved');
    expect(manager.referenceControllers.state('Pod')).toBeUndefined();
  });

  it('keeps the kind watched while a selector matches nothing, and cancels it after grace once the selector goes', async () => {
    const { source, manager, idle, last } = rig();
    source.apply(pod('web-1', { app: 'web' }));
    source.apply(service('web', { app: 'web' }));
    await idle();
    // Its last match leaves: no name reference to Pods remains, only the selector.
    source.apply(pod('web-1', { app: 'moved' }));
    await idle();
    expect(last.get('Service/shop/web')!.state).toBe('NoMatch');
    await new Promise((r) => setTimeout(r, 60)); // past the grace period: the selector alone holds the watch
    expect(manager.referenceControllers.state('Pod')).toBe('Active');
    expect(source.openWatches('Pod')).toBe(1);
    source.delete('Service/shop/web');
    await vi.waitFor(() => expect(manager.referenceControllers.state('Pod')).toBe('Cancelled'));
    const history = manager.changelog.get('controller', 'Pod')!.history.map((h) => h.state);
    expect(history.slice(-2)).toEqual(['Grace', 'Cancelled']);
    expect(source.openWatches('Pod')).toBe(0);
  });

  it('matches everything with an empty label selector, and counts a PDB minAvailable against its matches', async () => {
    const { source, idle, referrer } = rig((ctx) =>
      ctx.select({ kind: POD, selector: {}, minMatches: 3, fieldPath: 'spec.selector' }),
    );
    source.apply(pod('a', { x: '1' }));
    source.apply(pod('b', {}));
    source.apply(service('pdb', {}));
    await idle();
    expect(referrer('Service/shop/pdb')).toMatchObject({
      state: 'Waiting',
      message: 'selects 2 Pods, fewer than the 3 it needs',
    });
    source.apply(pod('c', {}));
    await idle();
    expect(referrer('Service/shop/pdb')!.state).toBe('Resolved');
  });

  it('warns without blocking when onNoMatch is warn', async () => {
    const { source, idle, referrer } = rig((ctx) =>
      ctx.select({
        kind: POD,
        selector: { matchLabels: { role: 'db' } },
        onNoMatch: 'warn',
        fieldPath: 'spec.podSelector',
      }),
    );
    source.apply(service('policy', {}));
    await idle();
    expect(referrer('Service/shop/policy')).toMatchObject({
      state: 'Resolved',
      warning: 'spec.podSelector: 0 Pods in shop match role=db',
    });
  });

  it('selects across namespaces by their labels, and wakes when a Namespace is relabelled', async () => {
    const { source, last, idle } = rig((ctx) =>
      ctx.select({
        kind: POD,
        selector: { matchLabels: { app: 'web' } },
        namespaceSelector: { matchLabels: { team: 'shop' } },
      }),
    );
    source.apply(namespace('a', { team: 'shop' }));
    source.apply(namespace('b', { team: 'other' }));
    source.apply(pod('web', { app: 'web' }, true, 'a'));
    source.apply(pod('web', { app: 'web' }, true, 'b'));
    source.apply(service('monitor', {}));
    await idle();
    expect(last.get('Service/shop/monitor')).toMatchObject({ keys: ['Pod/a/web'], where: 'namespaces with team=shop' });
    source.apply(namespace('b', { team: 'shop' }));
    await idle();
    expect(last.get('Service/shop/monitor')!.keys).toEqual(['Pod/a/web', 'Pod/b/web']);
  });

  it('reads the Prometheus Operator namespace forms', async () => {
    const { source, last, idle } = rig((ctx) =>
      ctx.select({ kind: POD, selector: { matchLabels: { app: 'web' } }, namespaceSelector: { matchNames: ['b'] } }),
    );
    source.apply(pod('web', { app: 'web' }, true, 'a'));
    source.apply(pod('web', { app: 'web' }, true, 'b'));
    source.apply(service('monitor', {}));
    await idle();
    expect(last.get('Service/shop/monitor')!.keys).toEqual(['Pod/b/web']);
  });

  it('fails the reconcile with an error naming the field for an invalid selector', async () => {
    const { source, idle, referrer } = rig((ctx) =>
      ctx.select({ kind: POD, selector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['x'] }] } }),
    );
    source.apply(service('bad', {}));
    await idle();
    expect(referrer('Service/shop/bad')).toMatchObject({
      state: 'Error',
      message: expect.stringMatching(
        /spec\.selector\.matchExpressions\[0\]\.operator must be In, NotIn, Exists or DoesNotExist/,
      ),
    });
  });
});
