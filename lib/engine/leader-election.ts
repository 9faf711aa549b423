import { RefwatchError, follow } from '../model';
import type { Clock, TimerHandle } from '../queue';
import { wallClock } from './clock';
import type { LeaderElectionRecord, LockRead, ResourceLock } from './resource-lock';

/** JITTER_FACTOR spreads a candidate's retries over [retryPeriod, retryPeriod × (1 + JITTER_FACTOR)], as client-go does. */
export const JITTER_FACTOR = 1.2;

/** client-go's defaults (controller-runtime's too). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** Why leadership ended: `stopped` by stop(), or `lost` because renewing failed until the renew deadline. */
export type StoppedLeadingReason = 'stopped' | 'lost';

export interface LeaderCallbacks {
  /** Called once when this candidate becomes leader; `signal` aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called once when leadership ends, after `signal` aborted. The elector
   * awaits it before releasing the lock, so whatever it stops (workers,
   * writers) is stopped before another candidate can take over.
   */
  onStoppedLeading(reason: StoppedLeadingReason): void | Promise<void>;
  /** Called whenever the observed holder changes, this candidate included; empty when the lock was released. */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  lock: ResourceLock;
  /** This candidate's name in the lock; unique per replica (a pod name, or hostname plus a random suffix). */
  identity: string;
  /** How long a holder that stops renewing keeps the lock, as judged by the others (whole seconds; default 15 s). */
  leaseDuration?: number;
  /** How long a leader keeps retrying after its last successful renew before it gives up leading (default 10 s). */
  renewDeadline?: number;
  /** Time between attempts (default 2 s); a candidate's retries are jittered by JITTER_FACTOR. */
  retryPeriod?: number;
  /** Release the lock on stop() so another candidate takes over at once (default true, client-go's ReleaseOnCancel). */
  releaseOnStop?: boolean;
  callbacks: LeaderCallbacks;
  /** A failed attempt (request error, conflict, a callback that threw). The elector carries on; this is for logs. */
  onError?(error: unknown): void;
  clock?: Clock;
  /** Source of jitter in [0, 1) (default Math.random). */
  random?: () => number;
}

function invalid(field: string, message: string): RefwatchError {
  return new RefwatchError('InvalidLeaderElection', `leader election: ${field} ${message}`, { field });
}

function positive(field: string, v: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw invalid(field, `must be a positive number of milliseconds, got ${String(v)}`);
  return v;
}

/**
 * validateLeaderElection applies client-go's NewLeaderElector checks and the
 * defaults; the error names the option at fault and what would be valid.
 */
export function validateLeaderElection(
  opts: LeaderElectorOptions,
): Required<Pick<LeaderElectorOptions, 'leaseDuration' | 'renewDeadline' | 'retryPeriod'>> {
  if (!opts.lock) throw invalid('lock', 'is missing: pass a LeaseLock on the Lease the candidates share');
  if (typeof opts.identity !== 'string' || opts.identity.trim() === '') {
    throw invalid('identity', 'must not be empty: give each replica its own, such as its pod name');
  }
  if (typeof opts.callbacks?.onStartedLeading !== 'function')
    throw invalid('callbacks.onStartedLeading', 'must be a function');
  if (typeof opts.callbacks?.onStoppedLeading !== 'function')
    throw invalid('callbacks.onStoppedLeading', 'must be a function');
  const leaseDuration = positive('leaseDuration', opts.leaseDuration ?? DEFAULT_LEASE_DURATION_MS);
  const renewDeadline = positive('renewDeadline', opts.renewDeadline ?? DEFAULT_RENEW_DEADLINE_MS);
  const retryPeriod = positive('retryPeriod', opts.retryPeriod ?? DEFAULT_RETRY_PERIOD_MS);
  if (leaseDuration % 1000 !== 0) {
    throw invalid(
      'leaseDuration',
      `(${leaseDuration} ms) must be a whole number of seconds, since Lease.spec.leaseDurationSeconds is; try ${Math.max(1000, Math.round(leaseDuration / 1000) * 1000)}`,
    );
  }
  if (renewDeadline >= leaseDuration) {
    throw invalid(
      'renewDeadline',
      `(${renewDeadline} ms) must be less than leaseDuration (${leaseDuration} ms), so a leader that cannot renew stops before its lease expires`,
    );
  }
  if (renewDeadline <= JITTER_FACTOR * retryPeriod) {
    throw invalid(
      'renewDeadline',
      `(${renewDeadline} ms) must be greater than retryPeriod × ${JITTER_FACTOR} (${JITTER_FACTOR * retryPeriod} ms), so a leader gets more than one renew attempt`,
    );
  }
  return { leaseDuration, renewDeadline, retryPeriod };
}

/**
 * LeaderElector campaigns for a ResourceLock with client-go's
 * tools/leaderelection semantics:
 * - A candidate retries every retryPeriod (jittered) and takes the lock when
 *   it is free, released, or expired. Expiry is judged by the candidate's own
 *   clock from when it last saw the record change, never by the record's
 *   renewTime, so clock skew between machines cannot hand the lock over early.
 *   Where the lock can be watched, a candidate sees each renew as it happens
 *   and a release at once; it also retries at the moment the observed lease
 *   expires rather than at its next jittered retry, so a dead leader is
 *   replaced within leaseDuration of its last renew.
 * - A takeover increments leaseTransitions; a renew keeps acquireTime.
 * - The leader renews every retryPeriod. If no renew succeeds within
 *   renewDeadline of the last successful one (client-go counts from the start
 *   of a renew round; counting from the last success is stricter), or it sees
 *   another holder, it stops leading. Since renewDeadline < leaseDuration it
 *   stops before anyone else may take over.
 * - An elector leads at most once: after leadership ends it is done. Build a
 *   new one (client-go exits the process) to campaign again.
 * - stop() ends leadership (awaiting onStoppedLeading) and then releases the
 *   lock: no holder and a one-second duration, so a standby takes over at its
 *   next attempt, or at once when the lock can be watched.
 */
export class LeaderElector {
  readonly identity: string;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  /** Resolves when the elector has ended: stopped, or leadership lost. */
  readonly done: Promise<void>;
  private readonly lock: ResourceLock;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly releaseOnStop: boolean;
  private readonly stopAbort = new AbortController();
  private started = false;
  private startRun!: () => void;
  private leadAbort: AbortController | undefined;
  private observed: LeaderElectionRecord | undefined;
  private observedRaw: string | undefined;
  /** When, by this candidate's clock, the observed record last changed. */
  private observedTime = 0;
  private reportedLeader: string | undefined;
  private wake: (() => void) | undefined;
  private wakePending = false;

  constructor(private readonly opts: LeaderElectorOptions) {
    const d = validateLeaderElection(opts);
    this.leaseDuration = d.leaseDuration;
    this.renewDeadline = d.renewDeadline;
    this.retryPeriod = d.retryPeriod;
    this.identity = opts.identity;
    this.lock = opts.lock;
    this.clock = opts.clock ?? wallClock;
    this.random = opts.random ?? Math.random;
    this.releaseOnStop = opts.releaseOnStop ?? true;
    this.done = new Promise<void>((resolve) => (this.startRun = resolve)).then(() => this.run());
  }

  /** start begins campaigning; idempotent. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.startRun();
  }

  /** isLeader reports whether this candidate leads now (between onStartedLeading and onStoppedLeading). */
  isLeader(): boolean {
    return this.leadAbort !== undefined && !this.leadAbort.signal.aborted;
  }

  /** leader is the holder last observed in the lock: empty when released, undefined before the first read. */
  leader(): string | undefined {
    return this.observed?.holderIdentity;
  }

  /** stop ends the campaign: leadership ends (onStoppedLeading awaited), then the lock is released; awaited, idempotent. */
  stop(): Promise<void> {
    this.stopAbort.abort();
    this.wake?.();
    if (!this.started) {
      this.started = true;
      this.startRun();
    }
    return this.done;
  }

  private get stopped(): boolean {
    return this.stopAbort.signal.aborted;
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    const acquiredAt = await this.acquire();
    if (acquiredAt === undefined) return;
    this.leadAbort = new AbortController();
    this.callback(() => this.opts.callbacks.onStartedLeading(this.leadAbort!.signal));
    const reason = await this.renew(acquiredAt);
    this.leadAbort.abort();
    await this.callback(() => this.opts.callbacks.onStoppedLeading(reason));
    if (reason === 'stopped' && this.releaseOnStop) await this.release();
  }

  /** acquire retries until the lock is ours (resolving with when the winning attempt began) or stop. */
  private async acquire(): Promise<number | undefined> {
    const watching = new AbortController();
    const unlink = follow(this.stopAbort.signal, watching);
    const watch = this.lock
      .watch?.((read) => this.watched(read), watching.signal)
      .catch((e: unknown) => this.opts.onError?.(e));
    try {
      while (!this.stopped) {
        const at = this.clock.now();
        const ok = await this.tryAcquireOrRenew(this.stopAbort.signal);
        this.reportTransition();
        if (ok) return at;
        // Retry jittered, but no later than the moment the observed lease expires.
        const retry = this.retryPeriod * (1 + this.random() * JITTER_FACTOR);
        const untilExpiry =
          this.observed && this.observed.holderIdentity !== ''
            ? this.observedTime + this.observed.leaseDurationSeconds * 1000 - this.clock.now() + 1
            : retry;
        await this.sleep(Math.min(retry, Math.max(1, untilExpiry)), true);
      }
      return undefined;
    } finally {
      watching.abort();
      unlink();
      await watch;
    }
  }

  /** renew keeps the lock until stop ('stopped') or until renewing fails past the deadline ('lost'). */
  private async renew(lastRenew: number): Promise<StoppedLeadingReason> {
    for (;;) {
      await this.sleep(this.retryPeriod, false);
      if (this.stopped) return 'stopped';
      const deadline = lastRenew + this.renewDeadline;
      for (;;) {
        const remaining = deadline - this.clock.now();
        if (remaining <= 0) return 'lost';
        const at = this.clock.now();
        const ok = await this.withTimeout(remaining, true, (signal) => this.tryAcquireOrRenew(signal));
        this.reportTransition();
        if (this.stopped) return 'stopped';
        if (ok) {
          lastRenew = at;
          break;
        }
        // Someone else holds the lock: there is nothing left to renew.
        if (this.observed !== undefined && this.observed.holderIdentity !== this.identity) return 'lost';
        await this.sleep(Math.min(this.retryPeriod, deadline - this.clock.now()), false);
        if (this.stopped) return 'stopped';
      }
    }
  }

  /**
   * tryAcquireOrRenew is one attempt: renew the record if this candidate
   * holds it, take it if it is free or expired, otherwise note what it saw.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDuration / 1000,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    // Fast path: a leader whose lease is still valid renews without reading first.
    if (this.holds() && this.leaseValid(now)) {
      const record = {
        ...desired,
        acquireTime: this.observed!.acquireTime,
        leaseTransitions: this.observed!.leaseTransitions,
      };
      if (await this.attempt(() => this.lock.update(record, signal))) {
        this.observe(record, undefined);
        return true;
      }
      if (signal.aborted) return false;
    }
    let read;
    try {
      read = await this.lock.get(signal);
    } catch (e) {
      this.fail(e, signal);
      return false;
    }
    if (read === undefined) {
      if (!(await this.attempt(() => this.lock.create(desired, signal)))) return false;
      this.observe(desired, undefined);
      return true;
    }
    if (read.raw !== this.observedRaw) this.observe(read.record, read.raw);
    if (read.record.holderIdentity !== '' && this.leaseValid(now) && !this.holds()) return false;
    const record = this.holds()
      ? { ...desired, acquireTime: read.record.acquireTime, leaseTransitions: read.record.leaseTransitions }
      : { ...desired, leaseTransitions: read.record.leaseTransitions + 1 };
    if (!(await this.attempt(() => this.lock.update(record, signal)))) return false;
    this.observe(record, undefined);
    return true;
  }

  /** release gives the lock up: no holder, a one-second lease, transitions kept. */
  private async release(): Promise<void> {
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: this.observed?.leaseTransitions ?? 0,
    };
    // Runs after stop, so only the deadline cuts it short.
    await this.withTimeout(this.renewDeadline, false, async (signal) => {
      if (!this.holds()) return;
      if (await this.attempt(() => this.lock.update(record, signal))) return this.observe(record, undefined);
      // A renew cut short by stop may have landed: read the lock again and release if it is still ours.
      const read = await this.lock.get(signal).catch((e: unknown) => this.fail(e, signal));
      if (
        read &&
        read.record.holderIdentity === this.identity &&
        (await this.attempt(() => this.lock.update(record, signal)))
      )
        this.observe(record, undefined);
    });
  }

  /** watched takes a change seen on the lock's watch as an observation; a released or deleted lock is tried at once. */
  private watched(read: LockRead | undefined): void {
    if (read && read.raw !== this.observedRaw) {
      this.observe(read.record, read.raw);
      this.reportTransition();
    }
    if (!read || read.record.holderIdentity === '') {
      // Seen during an attempt that may have read the record before the release: retry straight after it.
      if (this.wake) this.wake();
      else this.wakePending = true;
    }
  }

  private holds(): boolean {
    return this.observed !== undefined && this.observed.holderIdentity === this.identity;
  }

  private leaseValid(now: number): boolean {
    return this.observed !== undefined && this.observedTime + this.observed.leaseDurationSeconds * 1000 > now;
  }

  private observe(record: LeaderElectionRecord, raw: string | undefined): void {
    this.observed = record;
    this.observedRaw = raw;
    this.observedTime = this.clock.now();
  }

  private reportTransition(): void {
    const holder = this.observed?.holderIdentity;
    if (holder === undefined || holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    void this.callback(() => this.opts.callbacks.onNewLeader?.(holder));
  }

  private async attempt(write: () => Promise<void>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (e) {
      return this.fail(e, undefined);
    }
  }

  private fail(e: unknown, signal: AbortSignal | undefined): false {
    if (!signal?.aborted && !this.stopped) this.opts.onError?.(e);
    return false;
  }

  /** callback runs a user callback; what it throws or rejects with goes to onError, never into the elector. */
  private async callback(fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.opts.onError?.(e);
    }
  }

  /** withTimeout runs fn with a signal that aborts after ms on this elector's clock, and on stop when stoppable. */
  private async withTimeout<T>(ms: number, stoppable: boolean, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const timer = this.clock.setTimeout(
      () => deadline.abort(new DOMException('renew deadline passed', 'TimeoutError')),
      ms,
    );
    const unlink = stoppable ? follow(this.stopAbort.signal, deadline) : undefined;
    try {
      return await fn(deadline.signal);
    } finally {
      this.clock.clearTimeout(timer);
      unlink?.();
    }
  }

  /** sleep waits ms on this elector's clock; stop ends it early, and so does the lock's watch when wakeable. */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (wakeable && this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      let timer: TimerHandle = undefined;
      const done = () => {
        this.clock.clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      timer = this.clock.setTimeout(done, Math.max(0, ms));
      this.wake = wakeable ? done : () => (this.stopped ? done() : undefined);
    });
  }
}
