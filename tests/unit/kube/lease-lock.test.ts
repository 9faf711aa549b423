import { afterEach, describe, expect, it } from 'vitest';
import type { LeaderElectionRecord } from '@/lib/engine';
import { KubeClient, KubeRequestError, LeaseLock, formatMicroTime, parseMicroTime } from '@/lib/kube';
import { startEmbeddedServer, type EmbeddedServer } from '@/server/embedded';

let server: EmbeddedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const record = (holder: string, at: number, transitions = 0): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaseTransitions: transitions,
});

describe('LeaseLock', () => {
  it('writes MicroTime with six fractional digits and reads it back', () => {
    expect(formatMicroTime(Date.UTC(2026, 10, 23, 13, 0, 0, 123))).toBe('2026-11-23T13:00:00.123000Z');
    expect(parseMicroTime('2026-11-23T13:00:00.123456Z')).toBe(Date.UTC(2026, 10, 23, 13, 0, 0, 123));
    expect(parseMicroTime(undefined)).toBe(0);
  });

  it('creates, reads and updates a Lease, and a write on a stale version fails with 409', async () => {
    server = await startEmbeddedServer({
      objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } }],
    });
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    const a = new LeaseLock(client, 'ops', 'controller');
    const b = new LeaseLock(client, 'ops', 'controller');
    const signal = new AbortController().signal;
    expect(await a.get(signal)).toBeUndefined();
    const t0 = Date.UTC(2026, 10, 23, 13, 0, 0, 0);
    await a.create(record('a', t0), signal);
    const seen = await b.get(signal);
    expect(seen?.record).toEqual(record('a', t0));
    const lease = (await client.request('GET', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/controller')) as {
      spec: Record<string, unknown>;
    };
    expect(lease.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-23T13:00:00.000000Z',
      renewTime: '2026-11-23T13:00:00.000000Z',
      leaseTransitions: 0,
    });

    await a.update({ ...record('a', t0), renewTime: t0 + 2_000 }, signal);
    const lost = await b.update(record('b', t0 + 2_500, 1), signal).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(KubeRequestError);
    expect((lost as KubeRequestError).status).toBe(409);
    expect((await b.get(signal))?.record.renewTime).toBe(t0 + 2_000);
    client.close();
  });

  it('watch reports each write, a release included', async () => {
    server = await startEmbeddedServer({
      objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } }],
    });
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    const lock = new LeaseLock(client, 'ops', 'controller');
    const stop = new AbortController();
    await lock.create(record('a', Date.now()), stop.signal);
    const holders: (string | undefined)[] = [];
    const watching = lock.watch((read) => holders.push(read?.record.holderIdentity), stop.signal);
    await expect.poll(() => holders).toEqual(['a']);
    await lock.update({ ...record('', Date.now()), leaseDurationSeconds: 1 }, stop.signal);
    await expect.poll(() => holders).toEqual(['a', '']);
    await client.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/controller');
    await expect.poll(() => holders).toEqual(['a', '', undefined]);
    stop.abort();
    await watching;
    client.close();
  });
});
