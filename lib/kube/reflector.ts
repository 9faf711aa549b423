import { STATUS_CODES } from 'node:http';
import type { InformerEvent, WatchError, WatchPhase, WatchStatus, WatchTarget } from '../engine/informer-source';
import {
  apiVersionOf,
  deepFreezeLike,
  follow,
  formatKey,
  kindKey,
  trimManagedFields,
  type CachedObject,
  type KubeObject,
  type ObjectKey,
} from '../model';
import { Backoff, sleep, type BackoffOptions } from './backoff';
import { eachLine, type KubeTransport, type Query, type WatchStream } from './transport';
import { resourcePath, type Discovery, type ResourceInfo } from './discovery';
import { KubeRequestError, WatchFailure, formatRule, isAbortError, missingRule, watchError } from './errors';
import { ACCEPT_METADATA, ACCEPT_METADATA_LIST, toMetadataOnly } from './metadata';
import { Store, type StoreEvent } from './store';
import type { RelistReason, WatchLifecycle } from './watch-telemetry';

export interface ReflectorOptions {
  target: WatchTarget;
  client: KubeTransport;
  discovery: Discovery;
  /** Called synchronously for every change, in order. It must not throw. */
  onEvent: (event: InformerEvent) => void;
  /** Told when a watch ends, a primed cache is relisted, or a failure ends (see WatchTelemetry). It must not throw. */
  onLifecycle?: (event: WatchLifecycle) => void;
  /** Sync with a WatchList stream (sendInitialEvents) before falling back to list + watch. Default true. */
  watchList?: boolean;
  /** Page size of lists. Default 500. */
  pageSize?: number;
  /** Range of the watch's server-side timeoutSeconds, picked at random per watch. Default 300–600. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch silent this long (no event, no bookmark) is restarted. Default 90 s. */
  inactivityTimeoutMs?: number;
  /** A WatchList stream silent this long before its initial-events-end bookmark means the server ignores WatchList. Default 10 s. */
  initialEventsTimeoutMs?: number;
  backoff?: BackoffOptions;
  /**
   * How long a watch must stay up, after a failure, to count as healthy:
   * only then does the failure end (`recovered`) and the backoff start again
   * from its first step, as client-go's backoff manager resets. A server that
   * accepts each watch and fails it in-stream is one ongoing failure, retried
   * with growing delays. Default: twice the delay waited before the attempt,
   * so a one-off blip ends within seconds while a watch that keeps failing
   * sooner than that backs off up to the backoff's maxMs.
   */
  healthyAfterMs?: number;
  /**
   * Longest retry delay after 401/403. Retries start at 1 s (or this, if
   * shorter) and double up to it: a role restored soon after it was removed
   * is picked up within seconds, while a user who may never read the kind
   * costs one request per this delay instead of one every few seconds.
   * recheckForbidden retries at once, for when RBAC is known to have changed.
   * Default 5 minutes.
   */
  forbiddenRetryMs?: number;
  /** Retry delay after 400/422 (a bad selector does not heal itself). Default 30 s. */
  invalidRetryMs?: number;
  /** Applied to every object before it enters the store, and before it is frozen. */
  transform?: (obj: KubeObject) => KubeObject;
  /**
   * Deep-freeze every object as it enters the store, so that no reader can
   * change what the others see. Default true; false exists for the benchmark
   * that measures what freezing costs.
   * @internal
   */
  freeze?: boolean;
  /**
   * List and watch PartialObjectMetadata: the store holds apiVersion, kind and
   * metadata only (see toMetadataOnly). Default false.
   */
  metadataOnly?: boolean;
  /**
   * A store to continue from: the last state of an earlier watch of the same
   * target. The first snapshot replaces it, so subscribers see only what
   * changed meanwhile. Default: a new, empty store.
   */
  store?: Store;
  random?: () => number;
}

export type SyncMode = 'WatchList' | 'ListWatch';

/** ReflectorStatus is a WatchStatus plus how this reflector syncs. */
export interface ReflectorStatus extends WatchStatus {
  syncMode: SyncMode;
  metadataOnly: boolean;
  /** When the last watch event, bookmark or list arrived (epoch ms). */
  lastEventAt?: number;
  /** While failing: when the first of the failed attempts happened (epoch ms). */
  failingSince?: number;
  /** While failing: how many attempts in a row failed. */
  failures?: number;
}

/**
 * stripManagedFields drops metadata.managedFields, which is large, except the
 * last manager's name (keepLastManager), which the history records, in place
 * where it can (trimManagedFields): a deleted property would turn the object
 * into a hash table, which costs every cached object about 400 bytes more
 * than the object without it. obj is changed: it is meant for an object just
 * parsed.
 */
export function stripManagedFields(obj: KubeObject): KubeObject {
  if (obj.metadata) obj.metadata = trimManagedFields(obj.metadata);
  return obj;
}

interface WatchEvent {
  type: string;
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

interface ListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** Unsupported: the server does not speak WatchList; this reflector lists and watches from now on. */
class Unsupported extends Error {}
/** Inactive: the watchdog aborted a silent watch. */
class Inactive extends Error {
  override readonly name = 'AbortError';
}

const END_BOOKMARK = 'k8s.io/initial-events-end';
/** A user who may not read a kind usually never will: one retry per 5 minutes, unless RBAC is seen to change. */
export const FORBIDDEN_RETRY_MAX_MS = 300_000;

/** Failures a server can repeat each time it accepts a request: they end only after a healthy period. */
const FLAPPING: ReadonlySet<WatchError['reason']> = new Set(['ServerError', 'Throttled', 'Unreachable', 'Expired']);

/**
 * Reflector keeps one Store in step with one WatchTarget on the API server:
 * it syncs a full snapshot (a WatchList stream, or a paginated list), then
 * watches from the snapshot's resourceVersion for as long as it runs. It
 * retries every failure for ever: 410 by syncing again, 429/5xx/network with
 * backoff, 401/403 from 1 s up to forbiddenRetryMs (or at once on recheckForbidden). Each failure and recovery reaches onEvent as an
 * `error` / `recovered` event; the store keeps its last known state meanwhile.
 */
export class Reflector {
  readonly store: Store;
  readonly target: WatchTarget;
  readonly metadataOnly: boolean;
  private readonly opts: ReflectorOptions;
  private readonly abort = new AbortController();
  /** stop() was called: what the abort signal says, read per watch line and per event without its getters. */
  private halted = false;
  private readonly backoff: Backoff;
  private readonly forbiddenBackoff: Backoff;
  /** Ends the wait before retrying a 401/403 early: set only while that wait runs. */
  private forbiddenWake: (() => void) | undefined;
  private readonly random: () => number;
  private done: Promise<void> | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  /** The watch the watchdog guards, and its timeout. */
  private watchdogOf: AbortController | undefined;
  private watchdogMs = 0;
  /** When the watchdog's silence began: its start, or the last event since. */
  private watchdogFrom = 0;

  private phase: WatchPhase = 'Starting';
  private primed = false;
  private primedAt: number | undefined;
  private readonly startedAt = Date.now();
  private rv: string | undefined;
  private watchesOpened = 0;
  private lists = 0;
  private lastError: WatchError | undefined;
  private needSync = true;
  private syncMode: SyncMode;
  private expiredInARow = 0;
  private resource: ResourceInfo | undefined;
  private lastEventAt: number | undefined;
  /** The last object frozen, for freeze: what a new object's strings are compared with. */
  private lastFrozen: CachedObject | undefined;
  /** Why the next sync of a primed cache happens, for its `relisted` report. */
  private relistReason: RelistReason | undefined;
  private syncStartedAt = 0;
  /** The failure in progress: since when, and how many attempts failed. */
  private failingSince: number | undefined;
  private failures = 0;
  /** The delay waited before the attempt in progress. */
  private lastDelayMs = 0;
  /** Runs out when a watch opened after a failure has stayed up for healthyAfterMs. */
  private healthyTimer: NodeJS.Timeout | undefined;

  constructor(opts: ReflectorOptions) {
    this.opts = opts;
    this.store = opts.store ?? new Store();
    this.metadataOnly = opts.metadataOnly === true;
    this.target = { ...opts.target };
    if (this.target.namespace === '') delete this.target.namespace;
    this.syncMode = opts.watchList === false ? 'ListWatch' : 'WatchList';
    this.random = opts.random ?? Math.random;
    this.backoff = new Backoff({ random: this.random, ...opts.backoff });
    const forbiddenMaxMs = opts.forbiddenRetryMs ?? FORBIDDEN_RETRY_MAX_MS;
    this.forbiddenBackoff = new Backoff({
      random: this.random,
      initialMs: Math.min(1_000, forbiddenMaxMs),
      maxMs: forbiddenMaxMs,
    });
  }

  /** start begins syncing; it returns at once. */
  start(): void {
    this.done ??= this.run();
  }

  /** stop aborts the open request, clears every timer and resolves once the reflector is idle. It reports no error. */
  async stop(): Promise<void> {
    this.halted = true;
    this.abort.abort();
    this.clearWatchdog();
    this.clearHealthyTimer();
    await this.done;
    this.phase = 'Stopped';
  }

  get stopped(): boolean {
    return this.halted;
  }

  isPrimed(): boolean {
    return this.primed;
  }

  status(): ReflectorStatus {
    const s: ReflectorStatus = {
      target: { ...this.target },
      phase: this.phase,
      primed: this.primed,
      startedAt: this.startedAt,
      objects: this.store.size,
      subscribers: 0,
      watchesOpened: this.watchesOpened,
      lists: this.lists,
      syncMode: this.syncMode,
      metadataOnly: this.metadataOnly,
    };
    if (this.primedAt !== undefined) s.primedAt = this.primedAt;
    if (this.rv !== undefined) s.resourceVersion = this.rv;
    if (this.lastEventAt !== undefined) s.lastEventAt = this.lastEventAt;
    if (this.failingSince !== undefined) {
      s.failingSince = this.failingSince;
      s.failures = this.failures;
    }
    if (this.lastError) s.lastError = { ...this.lastError };
    return s;
  }

  /**
   * recheckForbidden retries a watch waiting after 401/403 now instead of at
   * the end of its backoff: the caller saw the user's RBAC change. It does
   * nothing to a watch that is not waiting on a 403.
   */
  recheckForbidden(): void {
    this.forbiddenWake?.();
  }

  /** The error the reflector is retrying after, if it is failing now. */
  get failing(): WatchError | undefined {
    return this.lastError;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const res = await abortable(this.opts.discovery.resolve(this.target), signal);
        this.resource = res;
        if (!this.needSync) await this.watch(res);
        else if (this.syncMode === 'WatchList') await this.syncByWatchList(res);
        else await this.syncByList(res);
      } catch (e) {
        if (signal.aborted) break;
        try {
          await this.onFailure(e);
        } catch (slept) {
          if (!isAbortError(slept)) throw slept;
        }
      }
    }
    this.clearWatchdog();
    this.clearHealthyTimer();
    this.phase = 'Stopped';
  }

  private path(res: ResourceInfo): string {
    return resourcePath(res, this.target.namespace);
  }

  /** syncByList lists in pages and replaces the store with the result. */
  private async syncByList(res: ResourceInfo): Promise<void> {
    this.phase = 'Listing';
    this.syncStartedAt = Date.now();
    const items = new Map<ObjectKey, CachedObject>();
    let cont: string | undefined;
    let rv: string | undefined;
    for (;;) {
      let page: ListPage;
      const q: Query = { limit: this.opts.pageSize ?? 500, continue: cont, labelSelector: this.target.labelSelector };
      try {
        page = await this.opts.client.getJSON<ListPage>(
          this.path(res),
          q,
          this.abort.signal,
          this.metadataOnly ? { accept: ACCEPT_METADATA_LIST } : {},
        );
      } catch (e) {
        // The continue token expired mid-list: the snapshot so far is unusable, list again from the start.
        if (cont !== undefined && e instanceof KubeRequestError && e.status === 410) {
          items.clear();
          cont = undefined;
          continue;
        }
        throw e;
      }
      for (const raw of page.items ?? []) {
        const obj = this.prepare(raw, res);
        const key = this.keyOf(obj);
        items.set(key, this.freeze(obj, items.get(key) ?? this.store.get(key)));
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    this.healthy();
    this.lists++;
    this.commitSnapshot(items, rv);
  }

  /** syncByWatchList streams the snapshot as initial events and keeps the stream as the watch. */
  private async syncByWatchList(res: ResourceInfo): Promise<void> {
    this.phase = 'Listing';
    this.syncStartedAt = Date.now();
    let stream: WatchStream;
    const local = new AbortController();
    const unlink = follow(this.abort.signal, local);
    try {
      try {
        stream = await this.openWatch(res, local, { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' });
      } catch (e) {
        if (e instanceof KubeRequestError && (e.status === 400 || e.status === 422)) throw new Unsupported(e.message);
        throw e;
      }
      await this.consume(stream, res, local, new Map<ObjectKey, CachedObject>());
    } finally {
      unlink();
    }
  }

  /** watch watches from the last resourceVersion until the server ends the watch. */
  private async watch(res: ResourceInfo): Promise<void> {
    const local = new AbortController();
    const unlink = follow(this.abort.signal, local);
    let events: number;
    let opened: number;
    try {
      const stream = await this.openWatch(res, local, { resourceVersion: this.rv });
      this.phase = 'Watching';
      opened = Date.now();
      events = await this.consume(stream, res, local, undefined);
    } finally {
      unlink();
    }
    // A server that ends watches at once would otherwise be asked again in a tight loop.
    if (events === 0 && Date.now() - opened < 1000) {
      this.lastDelayMs = this.backoff.next();
      await sleep(this.lastDelayMs, this.abort.signal);
    }
  }

  private async openWatch(res: ResourceInfo, local: AbortController, extra: Query): Promise<WatchStream> {
    const { min, max } = this.opts.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const q: Query = {
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: min + Math.floor(this.random() * (max - min + 1)),
      labelSelector: this.target.labelSelector,
      ...extra,
    };
    // local follows the reflector's own signal (see follow), so stop ends the request too.
    const stream = await this.opts.client.openStream(
      this.path(res),
      q,
      local.signal,
      this.metadataOnly ? { accept: ACCEPT_METADATA } : {},
    );
    this.watchesOpened++;
    this.healthy();
    return stream;
  }

  /**
   * consume applies a watch stream's events until it ends. With `initial`
   * set, events collect into it until the initial-events-end bookmark, which
   * swaps it into the store. Returns the number of events seen.
   */
  private async consume(
    stream: WatchStream,
    res: ResourceInfo,
    local: AbortController,
    initial: Map<ObjectKey, CachedObject> | undefined,
  ): Promise<number> {
    let pending = initial;
    let n = 0;
    this.armWatchdog(local, pending !== undefined);
    try {
      // Each line is applied in a call of its own, not a promise: a watch's lines cost no more than its events.
      await eachLine(stream, (line) => {
        // Lines already read may still be handed over after stop: a stopped reflector leaves the store alone.
        if (this.halted) this.abort.signal.throwIfAborted();
        n++;
        this.lastEventAt = Date.now();
        const ev = parseEvent(line);
        switch (ev.type) {
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED': {
            const prepared = this.prepare(ev.object, res);
            const key = this.keyOf(prepared);
            // Outside the initial events, the object the store holds under key: upsert is handed it.
            const held = pending?.get(key) ?? this.store.get(key);
            const obj = this.freeze(prepared, held);
            if (pending) {
              if (ev.type === 'DELETED') pending.delete(key);
              else pending.set(key, obj);
              break;
            }
            this.rv = obj.metadata.resourceVersion ?? this.rv;
            this.emitAll(ev.type === 'DELETED' ? this.store.remove(key, obj) : this.store.upsert(key, obj, held));
            break;
          }
          case 'BOOKMARK': {
            const rv = ev.object?.metadata?.resourceVersion;
            if (pending) {
              if (ev.object?.metadata?.annotations?.[END_BOOKMARK] !== 'true')
                throw new Unsupported('a bookmark came before the initial-events-end bookmark');
              this.lists++;
              this.commitSnapshot(pending, rv);
              pending = undefined;
              this.phase = 'Watching';
            } else if (rv) {
              this.rv = rv;
            }
            break;
          }
          case 'ERROR': {
            const st = ev.object ?? {};
            throw new KubeRequestError(
              st.code ?? 500,
              `watch of ${kindKey(this.target)}: ${st.code ?? ''} ${st.message ?? 'error event'}`.trim(),
              {
                url: this.opts.client.server,
                ...(st.reason ? { reason: st.reason } : {}),
              },
            );
          }
          default:
            break;
        }
        this.armWatchdog(local, pending !== undefined);
      });
    } catch (e) {
      if (local.signal.reason instanceof Inactive && !this.abort.signal.aborted) {
        if (pending) throw new Unsupported('no initial-events-end bookmark came');
        // The watchdog ended a silent watch: start a new one from the last resourceVersion.
        this.lifecycle({
          type: 'ended',
          reason: 'Inactive',
          message: String((local.signal.reason as Error).message),
          ...this.rvField(),
        });
        return n;
      }
      throw e;
    } finally {
      this.clearWatchdog();
    }
    if (pending) throw new Unsupported('the watch closed before its initial-events-end bookmark');
    this.lifecycle({
      type: 'ended',
      reason: 'Closed',
      message: `the server closed it after ${n} events`,
      ...this.rvField(),
    });
    return n;
  }

  private commitSnapshot(items: Map<ObjectKey, CachedObject>, rv: string | undefined): void {
    if (this.abort.signal.aborted) return;
    const events = this.store.replace(items);
    if (rv) this.rv = rv;
    this.needSync = false;
    this.expiredInARow = 0;
    this.lastEventAt = Date.now();
    if (this.primed && this.relistReason) {
      this.lifecycle({
        type: 'relisted',
        reason: this.relistReason,
        objects: this.store.size,
        changes: events.length,
        durationMs: Date.now() - this.syncStartedAt,
      });
    }
    this.relistReason = undefined;
    this.emitAll(events);
    if (!this.primed) {
      this.primed = true;
      this.primedAt = Date.now();
      this.emit({ type: 'primed' });
    }
  }

  private async onFailure(e: unknown): Promise<void> {
    if (e instanceof Unsupported) {
      this.syncMode = 'ListWatch';
      this.relistReason = 'WatchListUnsupported';
      this.lifecycle({
        type: 'ended',
        reason: 'WatchListUnsupported',
        message: `the server does not speak WatchList (${e.message}); listing and watching instead`,
      });
      return;
    }
    if (e instanceof KubeRequestError && e.status === 410) {
      // The resourceVersion was compacted: sync again; the diff reports what was missed.
      this.needSync = true;
      this.relistReason = 'Expired';
      if (++this.expiredInARow <= 2) {
        this.lifecycle({ type: 'ended', reason: 'Expired', message: causeOf(e), ...this.rvField() });
        return;
      }
    }
    const werr = this.toWatchError(e);
    if (werr.reason === 'KindUnknown') this.opts.discovery.invalidate(this.target);
    const delay =
      werr.reason === 'Forbidden'
        ? this.forbiddenBackoff.next()
        : werr.reason === 'Invalid'
          ? (this.opts.invalidRetryMs ?? 30_000)
          : this.backoff.next(e instanceof KubeRequestError ? e.retryAfterMs : undefined);
    werr.retryAt = Date.now() + delay;
    this.clearHealthyTimer();
    this.lastDelayMs = delay;
    this.failingSince ??= Date.now();
    this.failures++;
    // Transient failures are told by the server's own words; the others by werr's, which say what to fix.
    const transient =
      werr.reason === 'Expired' ||
      werr.reason === 'Unreachable' ||
      werr.reason === 'Throttled' ||
      werr.reason === 'ServerError';
    this.lifecycle({
      type: 'ended',
      reason: werr.reason,
      message: transient && e instanceof KubeRequestError ? causeOf(e) : werr.message,
      retryInMs: delay,
      ...this.rvField(),
    });
    if (werr.reason === 'Unreachable' || werr.reason === 'Throttled' || werr.reason === 'ServerError') {
      werr.message += `; retrying in ${delay < 1000 ? `${delay} ms` : `${(delay / 1000).toFixed(1)} s`}`;
    }
    // A failure that goes on with the same reason is one condition: subscribers heard of it once, and its
    // attempts, since when and next retry are in status(). Each 401/403 is told, as the Forbidden path always has.
    const ongoing = this.lastError?.reason === werr.reason && werr.reason !== 'Forbidden';
    this.lastError = werr;
    this.phase = 'Backoff';
    if (!ongoing) this.emit({ type: 'error', error: werr });
    if (werr.reason === 'Forbidden') await this.forbiddenWait(delay);
    else await sleep(delay, this.abort.signal);
  }

  /** forbiddenWait sleeps through a 401/403's delay, ended early by recheckForbidden or by stop. */
  private async forbiddenWait(delay: number): Promise<void> {
    const early = new AbortController();
    const onStop = () => early.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    this.forbiddenWake = () => early.abort();
    try {
      await sleep(delay, early.signal);
    } catch (e) {
      if (!isAbortError(e) || this.abort.signal.aborted) throw e;
    } finally {
      this.forbiddenWake = undefined;
      this.abort.signal.removeEventListener('abort', onStop);
    }
    if (this.abort.signal.aborted) throw new DOMException('The operation was aborted', 'AbortError');
  }

  private toWatchError(e: unknown): WatchError {
    const kind = kindKey(this.target);
    if (e instanceof WatchFailure) return { ...e.watchError, at: Date.now() };
    if (!(e instanceof KubeRequestError)) {
      return watchError('ServerError', `watch of ${kind} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const s = e.status;
    if (s === 401) {
      return watchError(
        'Forbidden',
        `the API server ${this.opts.client.server} rejected the credentials (401 Unauthorized) while listing ${kind}: renew the token or certificate of the kubeconfig's user`,
      );
    }
    if (s === 403) {
      const rule = missingRule(this.target, this.resource?.resource ?? kind.toLowerCase());
      return watchError('Forbidden', `forbidden to list and watch ${kind}: grant the rule ${formatRule(rule)}`, {
        missingRule: rule,
      });
    }
    if (s === 406 && this.metadataOnly) {
      return watchError(
        'Invalid',
        `the API server cannot send ${kind} as metadata only (${e.message}): cache ${kind} with whole objects (metadataOnly: false for this kind)`,
      );
    }
    if (s === 404)
      return watchError(
        'KindUnknown',
        `the server no longer serves kind ${kind} (404): is its CustomResourceDefinition installed?`,
      );
    if (s === 410)
      return watchError(
        'Expired',
        `the resourceVersion of the watch of ${kind} keeps expiring (410 Gone); listing again`,
      );
    if (s === 429)
      return watchError('Throttled', `the API server throttles the watch of ${kind} (429 Too Many Requests)`);
    if (s === 0) return watchError('Unreachable', e.message);
    if (s === 400 || s === 422)
      return watchError('Invalid', `the API server rejected the watch of ${kind}: ${e.message}`);
    return watchError('ServerError', `the API server failed the watch of ${kind}: ${e.message}`);
  }

  /**
   * healthy is called on every successful request. A failure the server may
   * repeat right after accepting the request (5xx, 429, a network error)
   * ends only once healthyAfterMs pass without another; the others end at
   * once, as a granted role or an installed CRD does not flap.
   */
  private healthy(): void {
    this.forbiddenBackoff.reset();
    if (this.failingSince === undefined && this.backoff.attempts === 0) return;
    const reason = this.lastError?.reason;
    if (reason !== undefined && !FLAPPING.has(reason)) return this.recover();
    this.healthyTimer ??= setTimeout(
      () => {
        this.healthyTimer = undefined;
        this.recover();
      },
      this.opts.healthyAfterMs ?? 2 * this.lastDelayMs,
    );
  }

  private recover(): void {
    this.clearHealthyTimer();
    this.backoff.reset();
    if (this.failingSince !== undefined) {
      this.lifecycle({ type: 'recovered', downMs: Date.now() - this.failingSince, failures: this.failures });
      this.failingSince = undefined;
      this.failures = 0;
    }
    if (this.lastError) {
      this.lastError = undefined;
      this.emit({ type: 'recovered' });
    }
  }

  private rvField(): { resourceVersion?: string } {
    return this.rv === undefined ? {} : { resourceVersion: this.rv };
  }

  private lifecycle(e: WatchLifecycle): void {
    if (this.abort.signal.aborted || !this.opts.onLifecycle) return;
    try {
      this.opts.onLifecycle(e);
    } catch {
      // Telemetry must never take the watch down.
    }
  }

  /** prepare turns a decoded object into what the store holds, but for freezing it (see freeze): stamped, transformed. */
  private prepare(raw: KubeObject, res: ResourceInfo): KubeObject {
    // PartialObjectMetadata arrives as kind PartialObjectMetadata of meta.k8s.io/v1: it is stored as the resource's own kind.
    let obj = raw;
    if (this.metadataOnly) obj = toMetadataOnly(raw, apiVersionOf(res), res.kind);
    else {
      // List items carry no apiVersion and kind; watch events do.
      if (!raw.apiVersion) raw.apiVersion = apiVersionOf(res);
      if (!raw.kind) raw.kind = res.kind;
    }
    if (this.opts.transform) obj = this.opts.transform(obj) as KubeObject;
    return obj;
  }

  /**
   * freeze freezes a prepared object once for every reader. Its strings equal to those at the same places in the
   * version it replaces (or, for a new object, in the last one frozen: its kind's apiVersion, its namespace) are
   * replaced by those: a version then keeps one copy of what did not change, and so does the young generation
   * that every new version passes through.
   */
  private freeze(obj: KubeObject, previous: CachedObject | undefined): CachedObject {
    if (this.opts.freeze === false) return obj;
    const frozen = deepFreezeLike(obj, previous ?? this.lastFrozen);
    this.lastFrozen = frozen;
    return frozen;
  }

  private keyOf(obj: CachedObject): ObjectKey {
    return formatKey({
      group: this.target.group,
      kind: this.target.kind,
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name,
    });
  }

  /**
   * armWatchdog starts the timer that aborts a silent watch, and is called
   * again after every event. While the watch and its timeout stay the same,
   * an event only notes the time: the timer, when it fires, looks at the
   * last event and waits out the rest of the timeout if one came meanwhile.
   * Restarting the timer on every event cost a timer-list insertion each.
   * The times are performance.now()'s, which a wall-clock change (NTP, a
   * resumed VM) does not move, as it does not move the timer.
   */
  private armWatchdog(local: AbortController, initial: boolean): void {
    const ms = initial ? (this.opts.initialEventsTimeoutMs ?? 10_000) : (this.opts.inactivityTimeoutMs ?? 90_000);
    if (this.watchdog && this.watchdogOf === local && this.watchdogMs === ms) {
      this.watchdogFrom = performance.now();
      return;
    }
    this.clearWatchdog();
    this.watchdogOf = local;
    this.watchdogMs = ms;
    this.watchdogFrom = performance.now();
    this.watchdog = setTimeout(() => this.watchdogFired(local, ms), ms);
  }

  private watchdogFired(local: AbortController, ms: number): void {
    const silentFor = performance.now() - this.watchdogFrom;
    if (silentFor < ms) {
      this.watchdog = setTimeout(() => this.watchdogFired(local, ms), ms - silentFor);
      return;
    }
    local.abort(new Inactive(`no watch event for ${ms} ms`));
  }

  private clearHealthyTimer(): void {
    if (this.healthyTimer) clearTimeout(this.healthyTimer);
    this.healthyTimer = undefined;
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.watchdogOf = undefined;
  }

  private emitAll(events: StoreEvent[]): void {
    for (const e of events) this.emit(e);
  }

  private emit(e: InformerEvent): void {
    if (this.halted) return;
    try {
      this.opts.onEvent(e);
    } catch (err) {
      // onEvent's contract is not to throw; a reflector must outlive a faulty consumer all the same.
      console.error(`refwatch: a consumer of the watch of ${kindKey(this.target)} threw:`, err);
    }
  }
}

/**
 * causeOf is a failed request in the server's words, with its status:
 * "too old resource version: 5 (12) (410 Gone)", whether the 410 came as an
 * HTTP answer or an in-stream ERROR event. A socket error stays as the client
 * reported it.
 */
function causeOf(e: KubeRequestError): string {
  const m = e.status > 0 ? /^(?:watch of \S+|[A-Z]+ \S+): (?:\d{3} )?([\s\S]*)$/.exec(e.message) : null;
  return m ? `${m[1]} (${e.status}${STATUS_CODES[e.status] ? ` ${STATUS_CODES[e.status]}` : ''})` : e.message;
}

function parseEvent(line: string): WatchEvent {
  try {
    const ev = JSON.parse(line) as WatchEvent;
    if (ev && typeof ev.type === 'string') return ev;
  } catch {
    // reported below
  }
  throw new KubeRequestError(500, `the watch stream carried a line that is not a watch event (${line.length} bytes)`, {
    url: '',
  });
}

/** abortable settles with p, or rejects with an AbortError as soon as signal aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new DOMException('The operation was aborted', 'AbortError'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DOMException('The operation was aborted', 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
