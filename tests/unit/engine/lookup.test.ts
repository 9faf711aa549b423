import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, projectFields, type LookupSpec, type Selection } from '@/lib/engine';
import type { CachedObject, KubeObject } from '@/lib/model';

const APP = { group: 'demo.refwatch.dev', kind: 'App' };
const LABEL = 'example.dev/secret-type=cluster';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function app(name: string, cluster: string | undefined): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'App',
    metadata: { name, namespace: 'ops' },
    spec: cluster === undefined ? {} : { cluster },
  };
}

function clusterSecret(name: string, clusterName: string, labelled = true): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'ops', labels: labelled ? { 'example.dev/secret-type': 'cluster' } : {} },
    data: { name: b64(clusterName), config: b64('{"bearerToken":"s3cret"}') },
  };
}

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** Apps name a cluster Secret by its decoded data.name among the Secrets labelled LABEL. */
function rig(spec: Partial<LookupSpec> = {}) {
  const source = new MemoryInformerSource({ priming: 'sync' });
  manager = new Manager({ source, grace: 20, statsIntervalMs: 0 });
  const last = new Map<string, Selection | undefined>();
  const controller = manager.addController({
    name: 'apps',
    for: APP,
    reconcile: (ctx) => {
      const cluster = (ctx.object!.spec as { cluster?: string }).cluster;
      last.set(
        ctx.key,
        cluster === undefined
          ? undefined
          : ctx.lookup({
              kind: { group: '', kind: 'Secret' },
              labelSelector: LABEL,
              field: 'data.name',
              decode: 'base64',
              equals: cluster,
              fieldPath: 'spec.cluster',
              noun: 'cluster',
              by: 'named',
              ...spec,
            }),
      );
    },
  });
  manager.start();
  const m = manager;
  const idle = () => vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  const referrer = (name: string) => m.changelog.get('referrer', `apps|App.demo.refwatch.dev/ops/${name}`);
  const lookupTargets = () => source.openedTargets.filter((t) => t.startsWith('Secret|ops|'));
  return { source, manager: m, controller, last, idle, referrer, lookupTargets };
}

describe('ctx.lookup', () => {
  it('is NoMatch with the nearest value until a labelled object holds the value, then resolves to it, and NoMatch again once renamed', async () => {
    const { source, manager, last, idle, referrer } = rig();
    source.apply(clusterSecret('cluster-prod-eu1', 'prod-eu1'));
    source.apply(app('web', 'prod-eu'));
    await idle();
    expect(last.get('App.demo.refwatch.dev/ops/web')).toMatchObject({ state: 'NoMatch', keys: [] });
    expect(referrer('web')).toMatchObject({
      state: 'NoMatch',
      message:
        'no cluster named "prod-eu" is registered (Secrets labelled example.dev/secret-type=cluster in ops); did you mean "prod-eu1"?',
    });

    // An unlabelled Secret holding the value is no candidate.
    source.apply(clusterSecret('stray', 'prod-eu', false));
    await idle();
    expect(referrer('web')).toMatchObject({ state: 'NoMatch' });

    source.apply(clusterSecret('cluster-prod-eu', 'prod-eu'));
    await idle();
    expect(referrer('web')).toMatchObject({ state: 'Resolved' });
    expect(last.get('App.demo.refwatch.dev/ops/web')!.keys).toEqual(['Secret/ops/cluster-prod-eu']);
    const edges = manager.changelog.snapshot({ entities: ['reference'] }).entities.reference!;
    expect(edges.map((e) => [e.referrer, e.referent, e.fieldPath])).toEqual([
      ['App.demo.refwatch.dev/ops/web', 'Secret/ops/cluster-prod-eu', 'spec.cluster'],
    ]);

    source.apply(clusterSecret('cluster-prod-eu', 'prod-eu2'));
    await idle();
    expect(referrer('web')).toMatchObject({ state: 'NoMatch' });
    expect(referrer('web')!.message).toMatch(/no cluster named "prod-eu" is registered/);
  });

  it('watches only the labelled objects, holding their metadata and the compared field but never the rest of their data', async () => {
    const { source, idle, lookupTargets } = rig();
    source.apply(clusterSecret('cluster-prod', 'prod'));
    source.apply(app('web', 'prod'));
    await idle();
    expect(lookupTargets()).toEqual(['Secret|ops|example.dev/secret-type=cluster|data.name']);
    const held: CachedObject[] = [];
    const sub = source.acquire(
      { group: '', kind: 'Secret', namespace: 'ops', labelSelector: LABEL, fields: ['data.name'] },
      (e) => {
        if (e.type === 'added') held.push(e.object);
      },
    );
    expect(held).toHaveLength(1);
    expect(held[0]!.data).toEqual({ name: b64('prod') });
    expect(JSON.stringify(held)).not.toContain(b64('{"bearerToken":"s3cret"}'));
    await sub.release();
  });

  it('releases its watch when no referrer looks any more, and on stop', async () => {
    const { source, idle, manager: m } = rig();
    source.apply(app('web', 'prod'));
    await idle();
    const id = 'Secret|ops|example.dev/secret-type=cluster|data.name';
    expect(source.openWatches('Secret')).toBeGreaterThanOrEqual(1);
    expect(source.openedTargets).toContain(id);
    source.apply(app('web', undefined));
    await idle();
    await vi.waitFor(() => expect(source.openWatches('Secret')).toBe(0));

    source.apply(app('web', 'prod'));
    await idle();
    expect(source.openWatches('Secret')).toBe(1);
    await m.stop();
    expect(source.openWatches()).toBe(0);
  });

  it('rejects an empty labelSelector with an error naming the field', async () => {
    const { source, idle, referrer } = rig({ labelSelector: '' });
    source.apply(app('web', 'prod'));
    await idle();
    expect(referrer('web')).toMatchObject({ state: 'Error' });
    expect(referrer('web')!.message).toMatch(/labelSelector is empty/);
  });
});

describe('projectFields', () => {
  it('keeps identity, metadata and the named paths only', () => {
    const obj = clusterSecret('c', 'prod') as CachedObject;
    expect(projectFields(obj, ['data.name', 'data.missing'])).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: obj.metadata,
      data: { name: b64('prod') },
    });
  });
});
