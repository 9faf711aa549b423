import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ManagerLeaderElection, type StoppedLeadingReason } from '@/lib/engine';
import { isRefwatchError } from '@/lib/model';
import { LogCapture } from '../kube/helpers';
import { APP_KIND, app, appKey } from './fixtures';
import { LockServer, MemoryLock } from './leader-election-lock';

const managers: Manager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

interface Replica {
  manager: Manager;
  source: MemoryInformerSource;
  lock: MemoryLock;
  reconciled: string[];
  stopped: StoppedLeadingReason[];
  log: LogCapture;
}

function replica(server: LockServer, identity: string): Replica {
  const source = new MemoryInformerSource({ priming: 'microtask' });
  const lock = new MemoryLock(server);
  const r: Replica = {
    source,
    lock,
    reconciled: [],
    stopped: [],
    log: new LogCapture(),
    manager: undefined as unknown as Manager,
  };
  r.manager = new Manager({
    source,
    statsIntervalMs: 0,
    logger: r.log,
    leaderElection: {
      lock,
      identity,
      leaseDuration: 1_000,
      renewDeadline: 800,
      retryPeriod: 100,
      onStoppedLeading: (reason) => r.stopped.push(reason),
    },
  });
  r.manager.addController({ name: 'apps', for: APP_KIND, reconcile: (ctx) => void r.reconciled.push(ctx.key) });
  source.apply(app('web', {}));
  managers.push(r.manager);
  return r;
}

describe('Manager with leader election', () => {
  it('only the leader reconciles; the standby keeps its cache primed and takes over when the leader stops', async () => {
    const server = new LockServer();
    const a = replica(server, 'a');
    a.manager.start();
    await vi.waitFor(() => expect(a.reconciled).toEqual([appKey('web')]));
    const b = replica(server, 'b');
    b.manager.start();
    await vi.waitFor(() =>
      expect(b.manager.leadership()).toMatchObject({ identity: 'b', isLeader: false, holder: 'a' }),
    );
    expect(b.source.watches()).toEqual([expect.objectContaining({ primed: true, objects: 1 })]);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.reconciled).toEqual([]);
    expect(a.manager.leadership()).toMatchObject({ isLeader: true, holder: 'a' });

    await a.manager.stop();
    expect(a.stopped).toEqual(['stopped']);
    expect(a.manager.leadership()).toMatchObject({ isLeader: false, ended: 'stopped' });
    await vi.waitFor(() => expect(b.reconciled).toEqual([appKey('web')]));
    expect(b.source.watches()[0]!.lists).toBe(1);
    expect(server.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(a.log.text).toEqual([
      'info a started leading of Lease test/lock: reconciling',
      'info a stopped leading of Lease test/lock: stopped',
    ]);
    // b may also see the released Lease ("new leader: (none: released)") before taking it.
    expect(b.log.text[0]).toBe('info new leader of Lease test/lock: a');
    expect(b.log.text.at(-1)).toBe('info b started leading of Lease test/lock: reconciling');
    expect(b.log.lines.at(-1)!.fields).toEqual({ identity: 'b', lock: 'Lease test/lock', event: 'leading_started' });
  });

  it('a leader that cannot renew stops reconciling and does not lead again', async () => {
    const server = new LockServer();
    const a = replica(server, 'a');
    a.manager.start();
    await vi.waitFor(() => expect(a.reconciled).toHaveLength(1));
    a.lock.down = true;
    await vi.waitFor(() => expect(a.stopped).toEqual(['lost']), { timeout: 2_000 });
    a.lock.down = false;
    a.source.apply(app('shop', {}));
    await new Promise((r) => setTimeout(r, 400));
    expect(a.reconciled).toEqual([appKey('web')]);
    expect(a.manager.leadership()).toMatchObject({ isLeader: false, ended: 'lost' });
    expect(a.log.text).toContain(
      'warn a stopped leading of Lease test/lock: lost the lease (renewal failed): this manager will not lead again; restart the process',
    );
  });

  it('refuses leader election without a lock, naming the field and the LeaseLock to pass', () => {
    try {
      new Manager({
        source: new MemoryInformerSource(),
        // The shape older releases took: the engine cannot build a Lease lock from a client.
        leaderElection: { client: {}, namespace: 'ops', name: 'controller' } as unknown as ManagerLeaderElection,
      });
      expect.unreachable('the options were accepted');
    } catch (e) {
      expect(isRefwatchError(e) && e.field).toBe('leaderElection.lock');
      expect((e as Error).message).toMatch(/given client, namespace and name\): pass a LeaseLock from refwatch\/kube/);
      expect((e as Error).message).toContain("lock: new LeaseLock(client, 'kube-system', 'my-controller')");
    }
  });

  it('refuses bad timings before anything starts', () => {
    expect(
      () =>
        new Manager({
          source: new MemoryInformerSource(),
          leaderElection: { lock: new MemoryLock(new LockServer()), renewDeadline: 20_000 },
        }),
    ).toThrow(/renewDeadline \(20000 ms\) must be less than leaseDuration \(15000 ms\)/);
  });
});
