import { watchTargetKey, type WatchErrorReason, type WatchTarget } from '../engine/informer-source';
import { kindKey } from '../model';
import { LogRateLimiter } from './log-rate-limiter';
import type { Logger } from '../log';

/**
 * Why a watch request ended and the reflector opened another: the server
 * closed it (its timeoutSeconds, a restart, a load balancer), the watchdog
 * found it silent, the server does not speak WatchList, or it failed with a
 * WatchErrorReason (Expired is 410 Gone).
 */
export type WatchEndReason = 'Closed' | 'Inactive' | 'WatchListUnsupported' | WatchErrorReason;

/** Why a primed cache was listed again. */
export type RelistReason = 'Expired' | 'WatchListUnsupported';

/** WatchLifecycle is what a Reflector reports about its requests, besides the objects it stores. */
export type WatchLifecycle =
  /** A watch (or the sync before it) ended; the reflector retries after `retryInMs`, or at once. */
  | { type: 'ended'; reason: WatchEndReason; message: string; resourceVersion?: string; retryInMs?: number }
  /** A primed cache was replaced by a new snapshot; `changes` is how many objects it changed. */
  | { type: 'relisted'; reason: RelistReason; objects: number; changes: number; durationMs: number }
  /** A request succeeded after `failures` failed ones over `downMs`. */
  | { type: 'recovered'; downMs: number; failures: number };

export interface WatchCount {
  kind: string;
  reason: string;
  count: number;
}

const SEVERITY: Record<WatchEndReason, 'debug' | 'info' | 'warn'> = {
  Closed: 'debug',
  WatchListUnsupported: 'info',
  Expired: 'info',
  Inactive: 'warn',
  Unreachable: 'warn',
  Throttled: 'warn',
  ServerError: 'warn',
  Forbidden: 'warn',
  KindUnknown: 'warn',
  Invalid: 'warn',
  // Never a watch that ended: a reference outside the Manager's namespaces opens none.
  OutOfScope: 'debug',
  // Observers' polls, not watches; their failures reach the dashboard and explain.
  ObserveFailed: 'warn',
  ObserveTimeout: 'warn',
};

/**
 * WatchTelemetry turns the lifecycle of every watch of a pool into log lines
 * and counters. Lines are rate-limited per watch, event and reason (the first,
 * then one per window, saying how many were suppressed), so an API server
 * outage logs a few lines; the counters count everything.
 */
export class WatchTelemetry {
  private readonly logger: Logger;
  private readonly limiter: LogRateLimiter;
  private readonly restarts = new Map<string, WatchCount>();
  private readonly relists = new Map<string, WatchCount>();

  constructor(opts: { logger: Logger; windowMs?: number; now?: () => number }) {
    this.logger = opts.logger;
    this.limiter = new LogRateLimiter({ windowMs: opts.windowMs, now: opts.now });
  }

  record(target: WatchTarget, e: WatchLifecycle): void {
    const kind = kindKey(target);
    const watch = watchName(target);
    const fields = { kind, ...(target.namespace ? { namespace: target.namespace } : {}) };
    switch (e.type) {
      case 'ended': {
        count(this.restarts, kind, e.reason);
        this.log(SEVERITY[e.reason], `${watchTargetKey(target)}|ended|${e.reason}`, endedLine(watch, e), 'failures', {
          ...fields,
          event: 'watch_ended',
          reason: e.reason,
          resourceVersion: e.resourceVersion,
          retryInMs: e.retryInMs,
        });
        break;
      }
      case 'relisted':
        count(this.relists, kind, e.reason);
        this.log(
          'info',
          `${watchTargetKey(target)}|relisted|${e.reason}`,
          `relisted ${watch} after ${RELIST_CAUSE[e.reason]}: ${e.objects} objects in ${formatMs(e.durationMs)}, ${e.changes} changed while unwatched`,
          'relists',
          {
            ...fields,
            event: 'relisted',
            reason: e.reason,
            objects: e.objects,
            changes: e.changes,
            durationMs: e.durationMs,
          },
        );
        break;
      case 'recovered':
        this.log(
          'info',
          `${watchTargetKey(target)}|recovered`,
          `watch of ${watch} recovered after ${formatMs(e.downMs)} (${e.failures} failed ${e.failures === 1 ? 'attempt' : 'attempts'})`,
          'recoveries',
          {
            ...fields,
            event: 'watch_recovered',
            downMs: e.downMs,
            failures: e.failures,
          },
        );
        break;
    }
  }

  /** forget drops a stopped watch's rate-limit state; its counts stay, as counters do. */
  forget(target: WatchTarget): void {
    this.limiter.forget(`${watchTargetKey(target)}|`);
  }

  /** Watch requests that ended and were opened again, by kind and reason (refwatch_watch_restarts_total). */
  restartCounts(): WatchCount[] {
    return [...this.restarts.values()].map((c) => ({ ...c }));
  }

  /** Relists of primed caches, by kind and reason (refwatch_relists_total). */
  relistCounts(): WatchCount[] {
    return [...this.relists.values()].map((c) => ({ ...c }));
  }

  private log(
    level: 'debug' | 'info' | 'warn',
    key: string,
    msg: string,
    noun: string,
    fields: Record<string, string | number | undefined>,
  ): void {
    const permit = this.limiter.take(key);
    if (!permit.allowed) return;
    const tail =
      permit.suppressed > 0
        ? ` (${permit.suppressed} ${noun} suppressed in the last ${Math.round(permit.sinceMs / 1000)} s)`
        : '';
    this.logger[level](msg + tail, permit.suppressed > 0 ? { ...fields, suppressed: permit.suppressed } : fields);
  }
}

const RELIST_CAUSE: Record<RelistReason, string> = {
  Expired: '410 Gone',
  WatchListUnsupported: 'the server ignored WatchList',
};

/** endedLine words a watch's end the way operators know from client-go: "watch of *v1.Pod ended with: too old resource version". */
function endedLine(watch: string, e: Extract<WatchLifecycle, { type: 'ended' }>): string {
  switch (e.reason) {
    case 'Expired':
      return `watch of ${watch} ended with: ${e.message}; relisting${e.retryInMs === undefined ? '' : ` in ${formatMs(e.retryInMs)}`}`;
    case 'Closed':
    case 'Inactive':
      return `watch of ${watch} ended with: ${e.message}; resuming from resourceVersion ${e.resourceVersion ?? '(none)'}`;
    case 'WatchListUnsupported':
      return `watch of ${watch} ended with: ${e.message}`;
    default:
      return `watch of ${watch} failed: ${e.message}${e.retryInMs === undefined ? '' : `; retrying in ${formatMs(e.retryInMs)}`}`;
  }
}

/** watchName is how a line names a watch: the kind, and its namespace when it watches one. */
function watchName(t: WatchTarget): string {
  return `${kindKey(t)}${t.namespace ? ` in ${t.namespace}` : ''}${t.labelSelector ? ` (${t.labelSelector})` : ''}`;
}

function count(map: Map<string, WatchCount>, kind: string, reason: string): void {
  const key = `${kind}\0${reason}`;
  const c = map.get(key);
  if (c) c.count++;
  else map.set(key, { kind, reason, count: 1 });
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
