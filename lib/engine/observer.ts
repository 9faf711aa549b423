import { RefwatchError, kindKey, kindOfKey, nameOfKey, namespaceOfKey, parseKindKey, type ObjectKey } from '../model';
import type { ReferenceRegistry, RegistryDelta } from '../registry';
import type { ChangeLog, ReferenceControllerEntity, ReferenceControllerState, ReferentEntity } from '../changelog';
import type { Clock, TimerHandle } from '../queue';
import type { WatchError } from './informer-source';
import type { Resolution } from './resolution';
import { WAKE_CHANGE, WAKE_GENERATION, WAKE_PRIMED, WAKE_READINESS, WAKE_VERDICT, type WakeFilters } from './wake';

const MAX_ERRORS = 10;
const MAX_HISTORY = 30;

/** ObservedState is what one poll found out about a referent outside Kubernetes. */
export interface ObservedState {
  exists: boolean;
  ready: boolean;
  /** Why it is not ready (or not found), in words a person can act on. */
  message?: string;
}

/** ObservedReferent is the referent a poll is about: its key and the parts of it. */
export interface ObservedReferent {
  key: ObjectKey;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * ObserverOptions declare a referent kind served by polling instead of a
 * watch, for things outside Kubernetes (a cloud database, an HTTP health
 * endpoint). References to the kind look like any other (`Kind.group/ns/name`).
 */
export interface ObserverOptions {
  /** The referent kind, `Kind.group` (for example `HealthCheck.probes.example.com`). */
  kind: string;
  /** Milliseconds between the end of one poll of a referent and the start of its next. */
  interval: number;
  /** A random extra wait of up to jitter × interval before each poll (0–1; default 0), so referents' polls spread out. */
  jitter?: number;
  /** How long one poll may take before it is aborted and reported as a timeout (default: interval). */
  timeout?: number;
  /**
   * observe polls one referent. It must honour `signal`: the next poll of the
   * referent waits for this one to settle, so a poll that ignores the signal
   * and never settles stops that referent's polling (its timeout is reported).
   */
  observe(referent: ObservedReferent, signal: AbortSignal): Promise<ObservedState> | ObservedState;
}

export interface ObserversDeps {
  registry: ReferenceRegistry;
  changelog: ChangeLog;
  clock: Clock;
  /** How long an observer with no referents left keeps running before it is cancelled. */
  grace: number;
  /** Queues one referrer of a changed referent (through its controller's work queue). */
  enqueue: (controller: string, referrer: ObjectKey) => void;
  /** The referrers that asked to be woken by less than every change (wakeOn). */
  wake?: WakeFilters;
  /** Returns a number in [0, 1); for jitter. */
  random?: () => number;
}

/** Observation is one referent's state as its last poll left it. Frozen: readers hold it, polls replace it. */
interface Observation {
  readonly state: 'Ready' | 'NotReady' | 'NotFound';
  readonly reason?: string;
  readonly message?: string;
  readonly at: number;
}

/** Poller polls one referent, one poll at a time. */
interface Poller {
  readonly referent: ObservedReferent;
  observation?: Observation;
  timer?: TimerHandle;
  /** The poll in flight; the next one is scheduled only once it settles. */
  inFlight?: { abort: AbortController; settled: Promise<void> };
  stopped: boolean;
}

interface Observer {
  readonly opts: Required<Omit<ObserverOptions, 'observe'>> & Pick<ObserverOptions, 'observe'>;
  state: ReferenceControllerState;
  reason: string;
  startedAt: number;
  primedAt?: number;
  graceTimer?: TimerHandle;
  graceUntil?: number;
  cancelledAt?: number;
  pollers: Map<ObjectKey, Poller>;
  polls: number;
  dispatches: number;
  lastPollAt?: number;
  errors: WatchError[];
  history: ReferenceControllerEntity['history'];
}

/** ObserverView is what diagnosis reads of one observed referent. */
export interface ObservedReferentView {
  resolution: Resolution;
  intervalMs: number;
  /** When the referent was last polled (epoch ms); undefined before its first poll ended. */
  lastPollAt?: number;
}

/**
 * Observers run one observer per polled referent kind, beside the reference
 * controllers and with the same lifecycle (Active while referenced, Grace,
 * then Cancelled). Each referenced referent has one poller, whatever the
 * number of its referrers; its polls never overlap, and each is aborted after
 * `timeout` without holding up any other referent's.
 *
 * A poll whose outcome differs from the last (state, reason or message) queues
 * the referent's referrers (invariant 5), exactly as a watch event does.
 *
 * Reads and writes of observed state: each outcome is a frozen Observation
 * that a poll's completion replaces whole, on its own turn of the event loop.
 * resolve() is synchronous, so a reconcile reads one consistent observation
 * and no write interleaves with that read; a write that lands while the
 * referrer's reconcile is still running queues the referrer again, and the
 * queue runs that reconcile after the current one ends, never beside it.
 */
export class Observers {
  private readonly byKind = new Map<string, Observer>();
  private stopped = false;
  private readonly random: () => number;

  constructor(private readonly deps: ObserversDeps) {
    this.random = deps.random ?? Math.random;
    deps.registry.subscribe({
      onDelta: (d) => this.onDelta(d),
      onKind: (e) => {
        const o = this.byKind.get(e.kind);
        if (!o) return;
        if (e.type === 'active') this.activate(o);
        else this.beginGrace(o);
      },
    });
  }

  /** add registers an observer; it starts polling with the first reference to its kind. */
  add(options: ObserverOptions): void {
    const opts = validate(options);
    if (this.byKind.has(opts.kind))
      throw new RefwatchError('InvalidObserver', `an observer of ${opts.kind} already exists: one observer per kind`, {
        field: 'kind',
      });
    if (this.deps.registry.kindCount(opts.kind) > 0) {
      throw new RefwatchError(
        'InvalidObserver',
        `${opts.kind} is referenced already and served by a watch: add its observer before the manager starts`,
        { field: 'kind' },
      );
    }
    this.byKind.set(opts.kind, {
      opts,
      state: 'Cancelled',
      reason: 'no references yet',
      startedAt: this.deps.clock.now(),
      pollers: new Map(),
      polls: 0,
      dispatches: 0,
      errors: [],
      history: [],
    });
  }

  /** observes says whether the kind is served by an observer rather than a watch. */
  observes(kind: string): boolean {
    return this.byKind.size > 0 && this.byKind.has(kind);
  }

  /** resolve reads a polled referent's last observation; NotPrimed before its first poll ends. */
  resolve(referent: ObjectKey, fieldPath: string): Resolution {
    const o = this.byKind.get(kindOfKey(referent));
    const observation = o?.pollers.get(referent)?.observation;
    if (!o || !observation) {
      const every = o ? ` (polled every ${o.opts.interval} ms)` : '';
      return {
        state: 'NotPrimed',
        referent,
        fieldPath,
        reason: 'NotPrimed',
        message: `${referent} has not been polled yet${every}`,
      };
    }
    if (observation.state === 'Ready') return { state: 'Ready', referent, fieldPath };
    return { state: observation.state, referent, fieldPath, reason: observation.reason, message: observation.message };
  }

  /** inspect is diagnosis's read-only look at a polled referent; it starts nothing. */
  inspect(referent: ObjectKey, fieldPath: string): ObservedReferentView | undefined {
    const o = this.byKind.get(kindOfKey(referent));
    if (!o) return undefined;
    return {
      resolution: this.resolve(referent, fieldPath),
      intervalMs: o.opts.interval,
      lastPollAt: o.pollers.get(referent)?.observation?.at,
    };
  }

  entities(): ReferenceControllerEntity[] {
    return [...this.byKind.values()].filter((o) => o.history.length > 0).map((o) => this.entity(o));
  }

  /** refreshCounts republishes the observers whose poll counts moved since they were last published. */
  refreshCounts(): void {
    for (const o of this.byKind.values()) {
      const prev = this.deps.changelog.get('controller', o.opts.kind);
      if (
        !prev ||
        (prev.polls === o.polls &&
          prev.dispatches === o.dispatches &&
          prev.references === this.deps.registry.kindCount(o.opts.kind))
      )
        continue;
      this.publish(o);
    }
  }

  /** publishReferent records a polled referent's state in the change log, as the reference controllers do for watched ones. */
  publishReferent(referent: ObjectKey): void {
    const referencedBy = this.deps.registry.referrerCountOf(referent);
    if (referencedBy === 0) {
      this.deps.changelog.remove('referent', referent);
      return;
    }
    const r = this.resolve(referent, '');
    const value: ReferentEntity = {
      id: referent,
      key: referent,
      kind: kindOfKey(referent),
      namespace: namespaceOfKey(referent),
      state: r.state,
      referencedBy,
      changedAt: this.deps.clock.now(),
    };
    if (r.state !== 'Ready') value.message = [r.reason, r.message].filter(Boolean).join(': ');
    this.deps.changelog.put('referent', referent, value);
  }

  /** stop cancels every poll and timer and awaits the polls in flight; an observe that ignores its signal is not waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    const settling: Promise<void>[] = [];
    for (const o of this.byKind.values()) {
      this.clearGrace(o);
      for (const p of o.pollers.values()) {
        const s = this.stopPoller(p);
        if (s) settling.push(s);
      }
      o.pollers.clear();
    }
    await Promise.all(settling);
  }

  private onDelta(d: RegistryDelta): void {
    if (this.byKind.size === 0) return;
    for (const r of d.added) {
      const o = this.byKind.get(kindOfKey(r.referent));
      if (o && !o.pollers.has(r.referent)) this.startPoller(o, r.referent);
    }
    for (const r of d.removed) {
      const o = this.byKind.get(kindOfKey(r.referent));
      const p = o?.pollers.get(r.referent);
      if (!o || !p || this.deps.registry.isReferenced(r.referent)) continue;
      o.pollers.delete(r.referent);
      void this.stopPoller(p);
    }
  }

  private activate(o: Observer): void {
    if (o.state === 'Active') return;
    const reason =
      o.state === 'Grace'
        ? 'referenced again within the grace period'
        : o.history.length === 0
          ? 'first reference'
          : 'referenced again after cancellation';
    this.clearGrace(o);
    if (o.state === 'Cancelled') {
      o.startedAt = this.deps.clock.now();
      o.primedAt = undefined;
      o.cancelledAt = undefined;
    }
    this.transition(o, 'Active', `${reason}; polling every ${o.opts.interval} ms`);
  }

  private beginGrace(o: Observer): void {
    if (o.state !== 'Active') return;
    const grace = this.deps.grace;
    o.graceUntil = this.deps.clock.now() + grace;
    this.transition(o, 'Grace', `no referents left; cancelling in ${grace} ms unless referenced again`);
    o.graceTimer = this.deps.clock.setTimeout(() => {
      o.graceTimer = undefined;
      if (o.state !== 'Grace' || this.deps.registry.kindCount(o.opts.kind) > 0) return;
      o.cancelledAt = this.deps.clock.now();
      o.graceUntil = undefined;
      this.transition(o, 'Cancelled', `no references for ${grace} ms`);
    }, grace);
  }

  private clearGrace(o: Observer): void {
    if (o.graceTimer !== undefined) this.deps.clock.clearTimeout(o.graceTimer);
    o.graceTimer = undefined;
    o.graceUntil = undefined;
  }

  private startPoller(o: Observer, key: ObjectKey): void {
    if (this.stopped) return;
    const p: Poller = {
      referent: { key, kind: o.opts.kind, namespace: namespaceOfKey(key), name: nameOfKey(key) },
      stopped: false,
    };
    o.pollers.set(key, p);
    // Polled on a timer, not here: this runs inside the reconcile that declared the reference.
    p.timer = this.deps.clock.setTimeout(() => this.poll(o, p), 0);
  }

  private stopPoller(p: Poller): Promise<void> | undefined {
    p.stopped = true;
    if (p.timer !== undefined) this.deps.clock.clearTimeout(p.timer);
    p.timer = undefined;
    p.inFlight?.abort.abort(new Error('the observer stopped'));
    return p.inFlight?.settled;
  }

  private poll(o: Observer, p: Poller): void {
    p.timer = undefined;
    if (p.stopped) return;
    const abort = new AbortController();
    const { timeout } = o.opts;
    const deadline = this.deps.clock.setTimeout(() => abort.abort(new ObserveTimeout(timeout)), timeout);
    const call = Promise.resolve().then(() => o.opts.observe(p.referent, abort.signal));
    const aborted = new Promise<never>((_, reject) =>
      abort.signal.addEventListener('abort', () => reject(abort.signal.reason), { once: true }),
    );
    // The outcome is known at the answer or at the timeout, whichever comes first.
    const done = Promise.race([call, aborted])
      .then(
        (state) => this.outcomeOf(p.referent.key, state),
        (e: unknown) => this.failureOf(o, p, e),
      )
      .then((observation) => {
        this.deps.clock.clearTimeout(deadline);
        if (!p.stopped) this.record(o, p, observation);
      });
    p.inFlight = { abort, settled: done };
    // The next poll waits for the observe call itself to settle too: two polls of one referent never overlap.
    void Promise.allSettled([call, done]).then(() => {
      if (p.inFlight?.settled === done) p.inFlight = undefined;
      if (!p.stopped && !this.stopped)
        p.timer = this.deps.clock.setTimeout(
          () => this.poll(o, p),
          o.opts.interval * (1 + o.opts.jitter * this.random()),
        );
    });
  }

  private outcomeOf(key: ObjectKey, state: unknown): Observation {
    const at = this.deps.clock.now();
    if (!isObservedState(state)) {
      return freeze({
        state: 'NotReady',
        reason: 'ObserveFailed',
        message: `observe returned ${JSON.stringify(state) ?? String(state)} for ${key}; return { exists: boolean, ready: boolean, message?: string }`,
        at,
      });
    }
    if (!state.exists)
      return freeze({ state: 'NotFound', reason: 'NotFound', message: state.message || `${key} not found`, at });
    if (state.ready) return freeze({ state: 'Ready', at });
    return freeze({ state: 'NotReady', reason: 'NotReady', message: state.message || 'not ready', at });
  }

  private failureOf(o: Observer, p: Poller, e: unknown): Observation {
    const key = p.referent.key;
    const at = this.deps.clock.now();
    const timedOut = e instanceof ObserveTimeout;
    const reason = timedOut ? 'ObserveTimeout' : 'ObserveFailed';
    const message = timedOut ? `no answer within ${o.opts.timeout} ms` : `observe failed: ${describeError(e)}`;
    if (!p.stopped) this.recordError(o, { reason, message: `${key}: ${message}`, at });
    return freeze({ state: 'NotReady', reason, message, at });
  }

  /** record stores a poll's outcome and, when it changed, queues the referent's referrers. */
  private record(o: Observer, p: Poller, observation: Observation): void {
    const prev = p.observation;
    p.observation = observation;
    o.polls++;
    o.lastPollAt = observation.at;
    if (o.primedAt === undefined) {
      o.primedAt = observation.at;
      this.publish(o);
    }
    if (
      prev &&
      prev.state === observation.state &&
      prev.reason === observation.reason &&
      prev.message === observation.message
    )
      return;
    o.dispatches++;
    this.publishReferent(p.referent.key);
    const enqueue = this.deps.enqueue;
    const key = p.referent.key;
    const wake = this.deps.wake;
    const bits = wakeBits(prev, observation);
    if (!wake?.filtered(key)) this.deps.registry.forEachReferrerOf(key, (r) => enqueue(r.controller, r.key));
    else this.deps.registry.forEachReferrerOf(key, (r) => wake.dispatch(key, r, bits, enqueue));
  }

  private transition(o: Observer, state: ReferenceControllerState, reason: string): void {
    o.state = state;
    o.reason = reason;
    o.history.push({ at: this.deps.clock.now(), state, reason });
    if (o.history.length > MAX_HISTORY) o.history.splice(0, o.history.length - MAX_HISTORY);
    this.publish(o);
  }

  private recordError(o: Observer, error: WatchError): void {
    o.errors.push(error);
    if (o.errors.length > MAX_ERRORS) o.errors.splice(0, o.errors.length - MAX_ERRORS);
    this.publish(o);
  }

  private entity(o: Observer): ReferenceControllerEntity {
    const e: ReferenceControllerEntity = {
      id: o.opts.kind,
      kind: o.opts.kind,
      state: o.state,
      reason: o.reason,
      references: this.deps.registry.kindCount(o.opts.kind),
      referents: o.pollers.size,
      startedAt: o.startedAt,
      primedAt: o.primedAt,
      primingMs: o.primedAt !== undefined ? o.primedAt - o.startedAt : undefined,
      graceUntil: o.graceUntil,
      cancelledAt: o.cancelledAt,
      dispatches: o.dispatches,
      errors: o.errors.slice(),
      history: o.history.slice(),
      source: 'poll',
      intervalMs: o.opts.interval,
      polls: o.polls,
    };
    if (o.lastPollAt !== undefined) e.lastPollAt = o.lastPollAt;
    return e;
  }

  private publish(o: Observer): void {
    this.deps.changelog.put('controller', o.opts.kind, this.entity(o));
  }
}

/** ObserveTimeout is the abort reason of a poll that took longer than its timeout. */
class ObserveTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * wakeBits is what a changed observation changed: the first one wakes everyone
 * (as a primed cache does), existence every wakeOn but 'resolution', which
 * wakes when Ready flips; a new state wakes 'readiness', a new message only 'change'.
 */
function wakeBits(prev: Observation | undefined, next: Observation): number {
  if (!prev) return WAKE_PRIMED;
  const verdict = (prev.state === 'Ready') !== (next.state === 'Ready') ? WAKE_VERDICT : 0;
  if ((prev.state === 'NotFound') !== (next.state === 'NotFound'))
    return WAKE_CHANGE | WAKE_READINESS | WAKE_GENERATION | verdict;
  return prev.state !== next.state ? WAKE_CHANGE | WAKE_READINESS | verdict : WAKE_CHANGE;
}

function freeze(o: Observation): Observation {
  return Object.freeze(o);
}

function isObservedState(v: unknown): v is ObservedState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return (
    typeof s.exists === 'boolean' &&
    typeof s.ready === 'boolean' &&
    (s.message === undefined || typeof s.message === 'string')
  );
}

/** describeError names the cause of a failed observe, down to the system error (ECONNREFUSED…) that fetch wraps. */
function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return `${e.message} (${typeof code === 'string' && !cause.message.includes(code) ? `${code}: ` : ''}${cause.message})`;
  }
  return e.message;
}

function validate(o: ObserverOptions): Observer['opts'] {
  if (typeof o !== 'object' || o === null)
    throw new RefwatchError('InvalidObserver', 'addObserver needs { kind, interval, observe }', { field: 'observer' });
  const kind = parseKindKey(typeof o.kind === 'string' ? o.kind : '', 'kind');
  if (!kind.ok)
    throw new RefwatchError('InvalidObserver', `observer kind: ${kind.error.message}`, {
      field: 'kind',
      example: 'HealthCheck.probes.example.com',
    });
  const positive = (field: 'interval' | 'timeout', v: unknown) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new RefwatchError(
        'InvalidObserver',
        `observer ${field} must be a positive number of milliseconds, got ${String(v)}`,
        { field, example: '5000' },
      );
    }
  };
  positive('interval', o.interval);
  if (o.timeout !== undefined) positive('timeout', o.timeout);
  const jitter = o.jitter ?? 0;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) {
    throw new RefwatchError(
      'InvalidObserver',
      `observer jitter must be a fraction of the interval between 0 and 1, got ${String(jitter)}`,
      { field: 'jitter', example: '0.1' },
    );
  }
  if (typeof o.observe !== 'function')
    throw new RefwatchError(
      'InvalidObserver',
      'observer observe must be a function (referent, signal) => { exists, ready, message? }',
      { field: 'observe' },
    );
  return {
    kind: kindKey(kind.value),
    interval: o.interval,
    jitter,
    timeout: o.timeout ?? o.interval,
    observe: o.observe,
  };
}
