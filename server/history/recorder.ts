import 'server-only';
import type { ChangeLog } from '../../lib/changelog';
import type {
  AnyEntity,
  EntityKind,
  ReferenceControllerEntity,
  ReferenceEntity,
  ReferentEntity,
  ReferrerEntity,
} from '../../lib/changelog/entities';
import { RefwatchError } from '../../lib/model';
import {
  namespaceOf,
  stateKey,
  type HistoryStore,
  type StoredTransition,
  type TimelinePage,
  type TimelineQuery,
  type Transition,
} from './store';

export interface HistoryRecorderOptions {
  changelog: ChangeLog;
  /** Opens the store; called again, with backoff, after the database failed. */
  open: () => Promise<HistoryStore>;
  /** Flush at least this often (ms). Default 100. */
  flushMs?: number;
  /** Flush as soon as this many transitions wait. Default 1,000. */
  batchRows?: number;
  /** Transitions held while the database is slow or down; beyond it they are dropped and counted. Default 100,000. */
  queueRows?: number;
  /** Transitions older than this are pruned (ms). Default 14 days. */
  retentionMs?: number;
  /** SQLite: the oldest transitions are pruned while the file uses more (bytes). Default 1 GiB. */
  maxBytes?: number;
  /** How often retention is enforced (ms). Default 60 s. */
  pruneIntervalMs?: number;
  /** Reconnect backoff: first and longest wait (ms). Default 500 ms and 30 s. */
  reconnectMs?: { initial: number; max: number };
  /** Only the leader writes; a follower keeps its state current and writes nothing. Default: always. */
  writable?: () => boolean;
  now?: () => number;
  /** Where the recorder says that the database failed or came back. Default console.warn. */
  log?: (line: string) => void;
}

export interface HistoryStatus {
  /** 'off' before start and after stop. */
  state: 'up' | 'down' | 'off';
  where?: string;
  /** Why the database is down, when it is. */
  error?: string;
  downSince?: number;
  written: number;
  dropped: number;
  pruned: number;
  queued: number;
  rows?: number;
  bytes?: number;
  oldestAt?: number;
}

const DAY_MS = 86_400_000;
/** The writer says it is alive this often, so a restart can say when an object was last seen. */
const TOUCH_MS = 10_000;

interface Last {
  signature: string;
  at: number;
  state: string;
}

/**
 * HistoryRecorder turns the change log's puts into transitions and writes
 * them in batches, off the dispatch path: observing a change only compares
 * it with the last state and appends to a bounded queue, and a timer flushes
 * the queue every flushMs or at batchRows. A put that changes no recorded
 * field writes nothing.
 *
 * When the database fails, the batch is dropped and counted, the live engine
 * is untouched, and the store is reopened with backoff. At start, the last
 * stored states are read back, so an object first seen in another state
 * records that it changed while refwatch was down, and a referrer stuck
 * before the restart keeps its since.
 */
export class HistoryRecorder {
  readonly #opts: HistoryRecorderOptions;
  readonly #now: () => number;
  readonly #log: (line: string) => void;
  readonly #last = new Map<string, Last>();
  /** States read back at start and not seen again yet. */
  readonly #restored = new Set<string>();
  #queue: Transition[] = [];
  #store: HistoryStore | undefined;
  #where: string | undefined;
  #lastSeen: number | undefined;
  #state: HistoryStatus['state'] = 'off';
  #error: string | undefined;
  #downSince: number | undefined;
  #written = 0;
  #dropped = 0;
  #pruned = 0;
  #stats: { rows: number; bytes: number; oldestAt?: number } | undefined;
  #lastTouch = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #reconnectWait: number;
  #unobserve: (() => void) | undefined;
  #stopped = false;

  constructor(opts: HistoryRecorderOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? ((line) => console.warn(line));
    this.#reconnectWait = opts.reconnectMs?.initial ?? 500;
    for (const [field, v] of [
      ['flushMs', opts.flushMs],
      ['batchRows', opts.batchRows],
      ['queueRows', opts.queueRows],
      ['retentionMs', opts.retentionMs],
      ['maxBytes', opts.maxBytes],
      ['pruneIntervalMs', opts.pruneIntervalMs],
    ] as const)
      if (v !== undefined && !(Number.isFinite(v) && v > 0))
        throw new RefwatchError('InvalidOption', `HistoryRecorder ${field} must be a number above 0, got ${v}`, {
          field,
        });
  }

  /**
   * start opens the store, reads back the last states and starts recording.
   * A database that cannot be opened does not fail the start: the recorder
   * is down, counts drops and retries.
   */
  async start(): Promise<void> {
    if (this.#unobserve || this.#stopped) return;
    await this.#connect();
    this.#unobserve = this.#opts.changelog.observe((entity, id, previous, next) =>
      this.#observe(entity, id, previous, next),
    );
    for (const e of ['referrer', 'referent', 'reference', 'controller'] as const)
      for (const v of this.#opts.changelog.snapshot({ entities: [e] }).entities[e])
        this.#observe(e, v.id, undefined, v);
    this.#pruneTimer = setInterval(() => void this.prune(), this.#opts.pruneIntervalMs ?? 60_000);
    this.#pruneTimer.unref?.();
  }

  /** stop stops recording, writes what is queued (if the database answers) and closes it. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unobserve?.();
    this.#unobserve = undefined;
    clearTimeout(this.#flushTimer);
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#pruneTimer);
    await this.#flushing;
    if (this.#store) {
      await this.#flush();
      await this.#store.touch(this.#now()).catch(() => {});
      await this.#store.close();
    }
    this.#store = undefined;
    this.#state = 'off';
  }

  /**
   * lead is called when this replica becomes the writer: the store's last
   * states are read again, since the previous writer wrote them, and what
   * the change log holds now and differs from them is written, so a change
   * seen while following is not lost.
   */
  async lead(): Promise<void> {
    const store = this.#store;
    if (!store || this.#state !== 'up' || this.#stopped) return;
    try {
      const states = await store.lastStates();
      this.#last.clear();
      this.#restored.clear();
      for (const [key, t] of states) this.#last.set(key, { signature: signatureOf(t), at: t.at, state: t.state });
    } catch (e) {
      return this.#fail(e);
    }
    for (const e of ['referrer', 'referent', 'reference', 'controller'] as const)
      for (const v of this.#opts.changelog.snapshot({ entities: [e] }).entities[e])
        this.#observe(e, v.id, undefined, v);
  }

  /**
   * warning records an admission warning about an object: the hook the
   * admission handler calls. Warnings are not deduplicated: each is an event.
   */
  warning(object: string, message: string, at = this.#now()): void {
    this.#enqueue({ at, type: 'warning', object, namespace: namespaceOf(object), state: 'Warning', message });
  }

  /**
   * since is when a referrer entered its current state, as far as the
   * history knows: across restarts, unlike the change log's since.
   */
  since(controller: string, key: string): number | undefined {
    return this.#last.get(stateKey({ type: 'referrer', controller, object: key }))?.at;
  }

  /** timeline reads the store; it throws HistoryUnavailable while the database is down. */
  async timeline(q: TimelineQuery): Promise<TimelinePage> {
    return this.#up().timeline(q);
  }

  /**
   * statesAt reads what the history knew at an instant: the last recorded
   * state of every object, reference and reference controller at `at`; it
   * throws HistoryUnavailable while the database is down.
   */
  async statesAt(at: number, namespace?: string): Promise<StoredTransition[]> {
    const store = this.#up();
    const states = await store.lastStates({ at, ...(namespace !== undefined ? { namespace } : {}) });
    return [...states.values()].sort((a, b) => a.id - b.id);
  }

  #up(): HistoryStore {
    if (!this.#store || this.#state !== 'up')
      throw new RefwatchError(
        'HistoryUnavailable',
        `history is unavailable${this.#error ? `: ${this.#error}` : ''}; live state is unaffected, see /api/v1/snapshot`,
      );
    return this.#store;
  }

  status(): HistoryStatus {
    const s: HistoryStatus = {
      state: this.#state,
      written: this.#written,
      dropped: this.#dropped,
      pruned: this.#pruned,
      queued: this.#queue.length,
      ...this.#stats,
    };
    if (this.#where !== undefined) s.where = this.#where;
    if (this.#error !== undefined) s.error = this.#error;
    if (this.#downSince !== undefined) s.downSince = this.#downSince;
    return s;
  }

  /** flush writes what is queued now; resolved once written (or dropped). */
  async flush(): Promise<void> {
    await this.#flushing;
    await this.#flush();
  }

  /** prune enforces retention once and refreshes the figures on /metrics. */
  async prune(): Promise<void> {
    const store = this.#store;
    if (!store || this.#state !== 'up') return;
    try {
      const retention = this.#opts.retentionMs ?? 14 * DAY_MS;
      this.#pruned += await store.prune(this.#now() - retention, this.#opts.maxBytes ?? 2 ** 30);
      this.#stats = await store.stats();
    } catch (e) {
      this.#fail(e);
    }
  }

  #observe(entity: EntityKind, id: string, previous: AnyEntity | undefined, next: AnyEntity | undefined): void {
    let t: Transition | undefined;
    switch (entity) {
      case 'referrer':
        t = next ? referrerTransition(next as ReferrerEntity) : undefined;
        break;
      case 'referent':
        t = next ? referentTransition(next as ReferentEntity) : undefined;
        break;
      case 'reference': {
        const ref = (next ?? previous) as ReferenceEntity | undefined;
        if (!ref) return;
        t = {
          at: this.#now(),
          type: 'reference',
          object: ref.referrer,
          namespace: ref.namespace,
          state: next ? 'Added' : 'Removed',
          related: ref.referent,
          controller: ref.controller,
          message: ref.fieldPath,
        };
        break;
      }
      case 'controller':
        t = next ? controllerTransition(next as ReferenceControllerEntity) : undefined;
        break;
      default:
        return;
    }
    if (!t) return;
    const key = stateKey(t);
    const signature = signatureOf(t);
    const last = this.#last.get(key);
    const restored = this.#restored.delete(key);
    if (restored && last && t.type === 'referrer' && last.state === t.state && last.at < t.at)
      this.#continueSince(id, last.at);
    if (last && last.signature === signature) return;
    if (restored && last && t.type === 'referent') {
      // Seen for the first time since the restart, in another state: it changed while refwatch was down.
      t.at = this.#now();
      t.reason = 'WhileDown';
      t.message = `${t.object} ${t.state === 'NotFound' ? 'was deleted' : `became ${t.state}`} while refwatch was down (last seen ${clock(this.#lastSeen ?? last.at)})${t.message ? `: ${t.message}` : ''}`;
    }
    // In place: one object fewer per transition on the dispatch path.
    if (last) {
      last.signature = signature;
      last.at = t.at;
      last.state = t.state;
    } else this.#last.set(key, { signature, at: t.at, state: t.state });
    if (this.#opts.writable?.() === false) return;
    this.#enqueue(t);
  }

  /**
   * #continueSince gives a referrer that is in the state it was in before the
   * restart its since from then, in the change log itself, so the API, the
   * dashboard and `refwatch stuck` show an age that survives the restart. The
   * put waits for the change log's current put to end.
   */
  #continueSince(id: string, since: number): void {
    queueMicrotask(() => {
      const log = this.#opts.changelog;
      const current = log.get('referrer', id);
      if (!current || current.since <= since) return;
      const restored = this.#last.get(
        stateKey({ type: 'referrer', controller: current.controller, object: current.key }),
      );
      if (restored?.state !== current.state) return;
      log.put('referrer', id, { ...current, since });
    });
  }

  #enqueue(t: Transition): void {
    if (this.#stopped) return;
    if (this.#queue.length >= (this.#opts.queueRows ?? 100_000)) {
      this.#dropped++;
      return;
    }
    this.#queue.push(t);
    if (this.#queue.length >= (this.#opts.batchRows ?? 1000)) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = setTimeout(() => void this.#flush(), 0);
    } else this.#flushTimer ??= setTimeout(() => void this.#flush(), this.#opts.flushMs ?? 100);
  }

  #flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#flushing) return this.#flushing;
    const store = this.#store;
    if (!store || this.#state !== 'up' || this.#queue.length === 0) return Promise.resolve();
    const batchRows = this.#opts.batchRows ?? 1000;
    this.#flushing = (async () => {
      while (this.#queue.length > 0 && this.#state === 'up') {
        const batch = this.#queue.splice(0, batchRows);
        try {
          await store.write(batch);
          this.#written += batch.length;
          const now = this.#now();
          if (now - this.#lastTouch >= TOUCH_MS) {
            this.#lastTouch = now;
            await store.touch(now);
          }
        } catch (e) {
          this.#dropped += batch.length;
          this.#fail(e);
        }
      }
    })().finally(() => {
      this.#flushing = undefined;
      if (this.#queue.length > 0 && this.#state === 'up' && !this.#stopped)
        this.#flushTimer ??= setTimeout(() => void this.#flush(), 0);
    });
    return this.#flushing;
  }

  async #connect(): Promise<void> {
    try {
      const store = await this.#opts.open();
      if (this.#stopped) return void (await store.close());
      this.#where = store.where;
      const [states, lastSeen] = await Promise.all([store.lastStates(), store.lastSeen()]);
      const now = this.#now();
      // A follower writes nothing, its liveness included; the writer's first batch says it is alive.
      if (this.#opts.writable?.() !== false) {
        await store.touch(now, this.#store === undefined && this.#lastSeen === undefined);
        this.#lastTouch = now;
      } else this.#lastTouch = 0;
      if (this.#last.size === 0) {
        // The first open of this process: what the history knew when refwatch stopped.
        this.#lastSeen = lastSeen;
        for (const [key, t] of states) {
          this.#last.set(key, {
            signature: signatureOf(t),
            at: t.at,
            state: t.state,
          });
          this.#restored.add(key);
        }
      }
      if (this.#state === 'down')
        this.#log(
          `refwatch: history: ${store.where} is back; writing again (${this.#dropped} transitions dropped while it was down)`,
        );
      this.#store = store;
      this.#state = 'up';
      this.#error = undefined;
      this.#downSince = undefined;
      this.#reconnectWait = this.#opts.reconnectMs?.initial ?? 500;
      this.#stats = await store.stats();
      if (this.#queue.length > 0) void this.#flush();
    } catch (e) {
      // A schema newer than this binary is not a fault that a retry mends.
      if (e instanceof RefwatchError && e.code === 'HistorySchemaNewer') throw e;
      this.#fail(e);
    }
  }

  #fail(e: unknown): void {
    const message = describe(e);
    const wasUp = this.#state !== 'down';
    this.#state = 'down';
    this.#error = message;
    this.#downSince ??= this.#now();
    if (wasUp)
      this.#log(
        `refwatch: history: ${this.#where ?? 'the database'} failed: ${message}; live results are unaffected, transitions are dropped and counted (refwatch_history_dropped_total) until it answers again`,
      );
    const store = this.#store;
    this.#store = undefined;
    void store?.close();
    if (this.#stopped || this.#reconnectTimer) return;
    const wait = this.#reconnectWait;
    this.#reconnectWait = Math.min(wait * 2, this.#opts.reconnectMs?.max ?? 30_000);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (!this.#stopped) void this.#connect();
    }, wait);
    this.#reconnectTimer.unref?.();
  }
}

function describe(e: unknown): string {
  const code = (e as { code?: string }).code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_FULL')
    return `the disk is full (SQLITE_FULL: ${message}); free space or lower --history-max-size`;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

/** signatureOf is what a transition records beyond its time: a put with the same signature writes nothing. */
function signatureOf(t: Transition): string {
  return `${t.state}\u0000${t.reason ?? ''}\u0000${t.related ?? ''}\u0000${t.message ?? ''}`;
}

function referrerTransition(v: ReferrerEntity): Transition | undefined {
  // Waiting on a cache that is still loading is refwatch's own start, not a state of the object.
  if (v.state === 'Waiting' && v.reason?.startsWith('NotPrimed')) return undefined;
  const t: Transition = {
    at: v.since,
    type: 'referrer',
    object: v.key,
    namespace: v.namespace,
    state: v.state,
    controller: v.controller,
  };
  // The engine's reason is "<state>: <referent>"; the referent is stored as the related object.
  const m = v.reason !== undefined ? /^([^:]+): (.+)$/.exec(v.reason) : null;
  if (m) {
    t.reason = m[1]!;
    t.related = m[2]!;
  } else if (v.reason !== undefined) t.reason = v.reason;
  if (v.message !== undefined) t.message = v.message;
  return t;
}

function referentTransition(v: ReferentEntity): Transition | undefined {
  // NotPrimed is refwatch's own cache loading, not a state of the object.
  if (v.state === 'NotPrimed') return undefined;
  const t: Transition = { at: v.changedAt, type: 'referent', object: v.key, namespace: v.namespace, state: v.state };
  if (v.message !== undefined) t.message = v.message;
  if (v.resourceVersion !== undefined) t.resourceVersion = v.resourceVersion;
  if (v.manager !== undefined) t.manager = v.manager;
  return t;
}

function controllerTransition(v: ReferenceControllerEntity): Transition {
  const t: Transition = {
    at: v.history.at(-1)?.at ?? v.startedAt,
    type: 'controller',
    object: v.id,
    namespace: v.namespace ?? '',
    state: v.state,
  };
  if (v.reason) t.reason = v.reason;
  return t;
}
