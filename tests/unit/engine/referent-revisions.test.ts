import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type WakeOn } from '@/lib/engine';
import type { KubeObject } from '@/lib/model';
import { FakeClock } from '@/lib/queue';
import { APP_KIND, app, appKey, dbKey } from './fixtures';

/** Database shop/orders, Ready or not, with a status field (a heartbeat) that changes nothing a client shows. */
function db(ready: boolean, heartbeat: number, message = ''): KubeObject {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop' },
    status: {
      observedAt: heartbeat,
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Provisioned' : 'Provisioning', message },
      ],
    },
  };
}

let manager: Manager | undefined;
afterEach(async () => {
  await manager?.stop();
  manager = undefined;
});

/** One App referencing Database shop/orders with the given wakeOn, resolved against a Ready Database. */
async function rig(wakeOn: WakeOn) {
  const clock = new FakeClock(1_000_000);
  const source = new MemoryInformerSource({ priming: 'sync' });
  manager = new Manager({ source, clock, statsIntervalMs: 0 });
  const controller = manager.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: (ctx) => void ctx.resolve(dbKey('orders'), 'spec.databaseRef', { wakeOn }),
  });
  manager.start();
  source.apply(db(true, 0));
  source.apply(app('web', { databaseRef: 'orders' }));
  const log = manager.changelog;
  await vi.waitFor(() => expect(log.get('referrer', `watch|${appKey('web')}`)?.state).toBe('Resolved'));
  await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));
  return { clock, source, log, controller };
}

describe('referent revisions', () => {
  it('1,000 status-only updates of a Ready referent write no revision, so the stream gets no delta', async () => {
    const { clock, source, log } = await rig('readiness');
    const before = log.get('referent', dbKey('orders'))!;
    const revision = log.revision;

    for (let i = 1; i <= 1_000; i++) {
      clock.advance(10);
      source.apply(db(true, i));
    }

    expect(log.revision).toBe(revision);
    const since = log.changesSince(revision);
    expect(since.resnapshot === false && since.changes).toEqual([]);
    expect(log.get('referent', dbKey('orders'))).toEqual(before);
  });

  it('a referrer woken by every change still finds the referent entity unchanged', async () => {
    const { source, log, controller } = await rig('change');
    const before = log.get('referent', dbKey('orders'))!;
    const reconciles = controller.stats.reconciles;

    for (let i = 1; i <= 100; i++) source.apply(db(true, i));
    await vi.waitFor(() => expect(controller.stats.reconciles).toBeGreaterThan(reconciles));
    await vi.waitFor(() => expect(controller.queue.stats()).toMatchObject({ depth: 0, processing: 0 }));

    // The reconciles are real work and the referrer says so; the referent's shown state did not move.
    expect(log.get('referent', dbKey('orders'))).toBe(before);
  });

  it("a change of verdict records the manager that made it (managedFields' latest entry), and only its name", async () => {
    const { source, log } = await rig('readiness');
    const withManagers = db(false, 1, 'resizing volume');
    withManagers.metadata.managedFields = [
      { manager: 'helm', operation: 'Update', time: '2026-01-01T10:00:00Z', fieldsV1: { 'f:spec': {} } },
      { manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T11:00:00Z' },
    ];
    source.apply(withManagers);
    const referent = log.get('referent', dbKey('orders'))!;
    expect(referent).toMatchObject({ state: 'NotReady', manager: 'kubectl-client-side-apply' });
    expect(JSON.stringify(referent)).not.toContain('f:spec');
  });

  it('a change of verdict or message writes, with changedAt and resourceVersion of that change', async () => {
    const { clock, source, log } = await rig('readiness');
    const first = log.get('referent', dbKey('orders'))!;

    clock.advance(1_000);
    const notReady = source.apply(db(false, 1, 'resizing volume'));
    const second = log.get('referent', dbKey('orders'))!;
    expect(second).toMatchObject({ state: 'NotReady', message: 'Provisioning: resizing volume' });
    expect(second.changedAt).toBe(first.changedAt + 1_000);
    expect(second.resourceVersion).toBe(notReady.metadata.resourceVersion);

    clock.advance(1_000);
    const revision = log.revision;
    source.apply(db(false, 2, 'resizing volume'));
    expect(log.revision).toBe(revision);

    clock.advance(1_000);
    source.apply(db(false, 3, 'copying data'));
    expect(log.revision).toBeGreaterThan(revision);
    expect(log.get('referent', dbKey('orders'))).toMatchObject({
      message: 'Provisioning: copying data',
      changedAt: second.changedAt + 2_000,
    });
  });

  it('a second referrer changes referencedBy and keeps changedAt', async () => {
    const { clock, source, log } = await rig('readiness');
    const first = log.get('referent', dbKey('orders'))!;
    clock.advance(1_000);
    source.apply(app('api', { databaseRef: 'orders' }));
    await vi.waitFor(() => expect(log.get('referent', dbKey('orders'))?.referencedBy).toBe(2));
    expect(log.get('referent', dbKey('orders'))!.changedAt).toBe(first.changedAt);
  });
});
