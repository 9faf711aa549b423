import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElector, type LeaderElectorOptions, type StoppedLeadingReason } from '@/lib/engine';
import { isRefwatchError } from '@/lib/model';
import { FakeClock } from '@/lib/queue';
import { attachments } from '../kube/helpers';
import { Conflict, LockServer, MemoryLock } from './leader-election-lock';

interface Candidate {
  elector: LeaderElector;
  lock: MemoryLock;
  log: string[];
  startedAt: number[];
  stoppedAt: { at: number; reason: StoppedLeadingReason }[];
  leaders: string[];
}

const clock = new FakeClock(1_000_000);
const electors: LeaderElector[] = [];
afterEach(async () => {
  const stopping = electors.splice(0).map((e) => e.stop());
  for (let i = 0; i < 100; i++) await advance(100);
  await Promise.all(stopping);
});

async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** advance moves the fake clock in 10 ms steps, letting the electors' promises settle between steps. */
async function advance(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    await flush();
    clock.advance(Math.min(10, ms - t));
  }
  await flush();
}

function candidate(
  server: LockServer,
  identity: string,
  opts: Partial<LeaderElectorOptions> & { watchable?: boolean } = {},
): Candidate {
  const lock = new MemoryLock(server, opts.watchable);
  const c: Candidate = {
    lock,
    log: [],
    startedAt: [],
    stoppedAt: [],
    leaders: [],
    elector: undefined as unknown as LeaderElector,
  };
  c.elector = new LeaderElector({
    lock,
    identity,
    leaseDuration: 3_000,
    renewDeadline: 2_000,
    retryPeriod: 500,
    clock,
    random: () => 0,
    callbacks: {
      onStartedLeading: () => {
        c.startedAt.push(clock.now());
        c.log.push('started');
      },
      onStoppedLeading: (reason) => {
        c.stoppedAt.push({ at: clock.now(), reason });
        c.log.push(`stopped:${reason}:holder=${server.record?.holderIdentity}`);
      },
      onNewLeader: (id) => c.leaders.push(id),
    },
    ...opts,
  });
  electors.push(c.elector);
  return c;
}

function refused(opts: Partial<LeaderElectorOptions>): { field: string | undefined; message: string } {
  try {
    new LeaderElector({
      lock: new MemoryLock(new LockServer()),
      identity: 'a',
      callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
      ...opts,
    });
  } catch (e) {
    if (!isRefwatchError(e)) throw e;
    return { field: e.field, message: e.message };
  }
  throw new Error('options were accepted');
}

describe('LeaderElector options', () => {
  it('refuses a renew deadline not shorter than the lease duration, naming both', () => {
    const e = refused({ leaseDuration: 15_000, renewDeadline: 15_000 });
    expect(e.field).toBe('renewDeadline');
    expect(e.message).toMatch(/renewDeadline \(15000 ms\) must be less than leaseDuration \(15000 ms\)/);
  });

  it('refuses an empty identity', () => {
    expect(refused({ identity: '' })).toMatchObject({
      field: 'identity',
      message: expect.stringMatching(/identity must not be empty/),
    });
    expect(refused({ identity: '  ' }).field).toBe('identity');
  });

  it('refuses a renew deadline within one jittered retry period', () => {
    const e = refused({ renewDeadline: 2_400, retryPeriod: 2_000 });
    expect(e.field).toBe('renewDeadline');
    expect(e.message).toMatch(/greater than retryPeriod × 1.2 \(2400 ms\)/);
  });

  it('refuses durations that are not positive, and lease durations in fractions of a second', () => {
    expect(refused({ retryPeriod: 0 }).field).toBe('retryPeriod');
    expect(refused({ leaseDuration: Number.NaN }).field).toBe('leaseDuration');
    expect(refused({ leaseDuration: 2_500, renewDeadline: 2_000, retryPeriod: 500 })).toMatchObject({
      field: 'leaseDuration',
      message: expect.stringMatching(/whole number of seconds.*try 3000/),
    });
  });

  it('takes client-go defaults: 15 s, 10 s, 2 s', () => {
    const e = new LeaderElector({
      lock: new MemoryLock(new LockServer()),
      identity: 'a',
      callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
    });
    expect([e.leaseDuration, e.renewDeadline, e.retryPeriod]).toEqual([15_000, 10_000, 2_000]);
  });
});

describe('LeaderElector', () => {
  it('creates a missing lock and leads, renewing every retry period with acquireTime kept', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    a.elector.start();
    await advance(10);
    expect(a.log).toEqual(['started']);
    expect(a.elector.isLeader()).toBe(true);
    expect(server.record).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 3, leaseTransitions: 0 });
    const acquired = server.record!.acquireTime;
    await advance(2_000);
    expect(server.writes.length).toBeGreaterThanOrEqual(4);
    expect(server.record!.acquireTime).toBe(acquired);
    expect(server.record!.renewTime).toBeGreaterThan(acquired);
    expect(a.leaders).toEqual(['a']);
  });

  it('leaves nothing attached to its stop signal, however many times it renews', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a', { watchable: true });
    const b = candidate(server, 'b', { watchable: true });
    const stopSignal = (c: Candidate) => (c.elector as unknown as { stopAbort: AbortController }).stopAbort.signal;
    a.elector.start();
    await advance(10);
    b.elector.start();
    await advance(1_000);
    const early = [attachments(stopSignal(a)), attachments(stopSignal(b))];
    // 400 renewals by the leader, 400 watched renewals and jittered retries by the standby.
    await advance(200_000);
    expect(server.writes.length).toBeGreaterThanOrEqual(400);
    expect(a.elector.isLeader()).toBe(true);
    expect([attachments(stopSignal(a)), attachments(stopSignal(b))]).toEqual(early);
    for (const n of early) expect(n).toBeLessThanOrEqual(1);
  });

  it('lets one of two candidates lead; the other sees it as leader and waits', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    const b = candidate(server, 'b');
    a.elector.start();
    b.elector.start();
    await advance(5_000);
    expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    const leader = a.elector.isLeader() ? 'a' : 'b';
    expect(b.elector.leader()).toBe(leader);
    expect(a.leaders).toEqual([leader]);
    expect(b.leaders).toEqual([leader]);
    expect(server.record!.leaseTransitions).toBe(0);
  });

  it('a leader that cannot renew stops before its lease expires, then the standby takes over with a transition', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    a.elector.start();
    await advance(10);
    const b = candidate(server, 'b');
    b.elector.start();
    await advance(1_000);
    a.lock.down = true;
    const lastRenew = server.record!.renewTime;
    await advance(6_000);
    expect(a.stoppedAt).toEqual([{ at: expect.any(Number), reason: 'lost' }]);
    expect(a.stoppedAt[0]!.at).toBeLessThanOrEqual(lastRenew + a.elector.renewDeadline);
    expect(b.startedAt).toHaveLength(1);
    // b judged expiry from when it saw a's last renew, so it cannot start before that renew plus the lease duration.
    expect(b.startedAt[0]!).toBeGreaterThanOrEqual(lastRenew + 3_000);
    expect(a.stoppedAt[0]!.at).toBeLessThan(b.startedAt[0]!);
    expect(server.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await a.elector.done;
    // Leading once only: even with the network back, a stays out.
    a.lock.down = false;
    const requests = a.lock.requests;
    await advance(3_000);
    expect(a.lock.requests).toBe(requests);
    expect(a.startedAt).toHaveLength(1);
  });

  it('a standby that watches the lock sees each renew and takes over within leaseDuration of the last one', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    a.elector.start();
    await advance(10);
    const b = candidate(server, 'b', { watchable: true, random: () => 0.999 });
    b.elector.start();
    await advance(1_230);
    a.lock.down = true;
    const lastRenew = server.record!.renewTime;
    await advance(4_000);
    expect(b.startedAt).toHaveLength(1);
    expect(b.startedAt[0]! - lastRenew).toBeGreaterThanOrEqual(3_000);
    expect(b.startedAt[0]! - lastRenew).toBeLessThanOrEqual(3_000 + 20);
  });

  it('judges expiry by its own clock from when it saw the record change, not by renewTime', async () => {
    const server = new LockServer();
    // A holder whose clock ran an hour behind: by renewTime the lease expired long ago.
    server.write({
      holderIdentity: 'skewed',
      leaseDurationSeconds: 3,
      acquireTime: clock.now() - 3_600_000,
      renewTime: clock.now() - 3_600_000,
      leaseTransitions: 4,
    });
    const b = candidate(server, 'b');
    const seenAt = clock.now();
    b.elector.start();
    await advance(2_900);
    expect(b.startedAt).toEqual([]);
    await advance(2_000);
    expect(b.startedAt).toHaveLength(1);
    expect(b.startedAt[0]!).toBeGreaterThanOrEqual(seenAt + 3_000);
    expect(server.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 5 });
  });

  it('a record that keeps changing keeps its holder, however old its renewTime', async () => {
    const server = new LockServer();
    const b = candidate(server, 'b');
    b.elector.start();
    await advance(10);
    await b.elector.stop();
    const c = candidate(server, 'c');
    c.elector.start();
    for (let i = 0; i < 10; i++) {
      server.write({
        holderIdentity: 'other',
        leaseDurationSeconds: 3,
        acquireTime: 0,
        renewTime: i,
        leaseTransitions: 9,
      });
      await advance(1_000);
    }
    expect(c.startedAt).toEqual([]);
  });

  it('on stop, awaits onStoppedLeading, then releases so the standby takes over at its next retry', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    a.elector.start();
    await advance(10);
    const b = candidate(server, 'b', { random: () => 0.999 });
    b.elector.start();
    await advance(1_000);
    const stoppedAt = clock.now();
    await a.elector.stop();
    expect(a.log).toEqual(['started', 'stopped:stopped:holder=a']);
    expect(server.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    await advance(500 * 2.2 + 20);
    expect(b.startedAt).toHaveLength(1);
    expect(b.startedAt[0]! - stoppedAt).toBeLessThanOrEqual(500 * 2.2 + 20);
    expect(server.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(b.leaders).toEqual(['a', 'b']);
  });

  it('a standby that watches the lock takes a released lock at once', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    a.elector.start();
    await advance(10);
    const b = candidate(server, 'b', { watchable: true, random: () => 0.999 });
    b.elector.start();
    await advance(1_000);
    const stoppedAt = clock.now();
    await a.elector.stop();
    await advance(20);
    expect(b.startedAt).toEqual([expect.any(Number)]);
    expect(b.startedAt[0]! - stoppedAt).toBeLessThanOrEqual(20);
  });

  it('without releaseOnStop, a stopped leader leaves the lock to expire', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a', { releaseOnStop: false });
    a.elector.start();
    await advance(10);
    await a.elector.stop();
    expect(server.record!.holderIdentity).toBe('a');
  });

  it('of two candidates racing for a free lock, the conflict lets one win', async () => {
    const server = new LockServer();
    server.write({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: 0, renewTime: 0, leaseTransitions: 2 });
    const errors: unknown[] = [];
    const a = candidate(server, 'a', { onError: (e) => errors.push(e) });
    const b = candidate(server, 'b', { onError: (e) => errors.push(e) });
    a.elector.start();
    b.elector.start();
    await advance(3_000);
    expect(a.startedAt.length + b.startedAt.length).toBe(1);
    expect(server.record!.leaseTransitions).toBe(3);
    expect(errors.some((e) => e instanceof Conflict)).toBe(true);
  });

  it('jitters retries between retryPeriod and retryPeriod × 2.2', async () => {
    const server = new LockServer();
    server.write({
      holderIdentity: 'other',
      leaseDurationSeconds: 3600,
      acquireTime: 0,
      renewTime: 0,
      leaseTransitions: 0,
    });
    const slow = candidate(server, 'slow', { random: () => 0.999 });
    const fast = candidate(server, 'fast', { random: () => 0 });
    slow.elector.start();
    fast.elector.start();
    await advance(11_000);
    // 11 s / 0.5 s = 22 attempts; 11 s / 1.1 s = 10 attempts (each plus the first).
    expect(fast.lock.requests).toBe(23);
    expect(slow.lock.requests).toBe(11);
  });

  it('stop before start ends at once without touching the lock', async () => {
    const server = new LockServer();
    const a = candidate(server, 'a');
    await a.elector.stop();
    expect(a.lock.requests).toBe(0);
    expect(a.log).toEqual([]);
  });
});
