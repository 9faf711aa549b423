import type { LeaderElectionRecord, LockRead, ResourceLock } from '../engine/resource-lock';
import { defaultLogger, type Logger } from '../log';
import { formatTime } from '../model';
import { Backoff, sleep, type BackoffOptions } from './backoff';
import { KubeRequestError, isAbortError } from './errors';

export interface LeaseLockOptions {
  /** Where the lock says, once, that its watch is unavailable, and when it is back. Default: defaultLogger(). */
  logger?: Logger;
  /** Delays between attempts to watch the Lease after a failure. Default: 1 s doubling to 30 s. */
  watchBackoff?: BackoffOptions;
  /**
   * Longest delay between attempts while the watch is forbidden (403): a Role
   * without `watch` on leases is common, since client-go's leader election
   * needs only get, create and update. Default 5 min.
   */
  forbiddenWatchRetryMs?: number;
}

/** LeaseWatchUnavailable says why a LeaseLock's watch is down, since when, and how many attempts failed. */
export interface LeaseWatchUnavailable {
  status: number;
  message: string;
  since: number;
  failures: number;
}

/** LeaseTransport is what a LeaseLock needs from a client; KubeClient implements it. */
export interface LeaseTransport {
  request(
    method: string,
    path: string,
    opts?: { query?: Record<string, string | number | boolean | undefined>; body?: unknown; signal?: AbortSignal },
  ): Promise<unknown>;
  openStream(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    signal: AbortSignal,
  ): Promise<{ lines(): AsyncIterable<string> }>;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** formatMicroTime renders epoch milliseconds as metav1.MicroTime does: RFC 3339 with six fractional digits. */
export function formatMicroTime(ms: number): string {
  return formatTime(ms, 6);
}

/** parseMicroTime reads a MicroTime (or a Time) as epoch milliseconds; 0 when absent or unreadable. */
export function parseMicroTime(s: string | undefined): number {
  if (!s) return 0;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? 0 : ms;
}

function recordOf(spec: LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: parseMicroTime(spec?.acquireTime),
    renewTime: parseMicroTime(spec?.renewTime),
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

function readOf(lease: Lease): LockRead {
  return { record: recordOf(lease.spec), raw: JSON.stringify(lease.spec ?? {}) };
}

function specOf(r: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: formatMicroTime(r.acquireTime),
    renewTime: formatMicroTime(r.renewTime),
    leaseTransitions: r.leaseTransitions,
  };
}

/**
 * LeaseLock is a ResourceLock on a coordination.k8s.io/v1 Lease, as
 * client-go's resourcelock.LeaseLock: the record lives in the Lease's spec,
 * and each update carries the resourceVersion last seen, so a concurrent
 * writer makes it fail with 409 Conflict.
 */
export class LeaseLock implements ResourceLock {
  private last: Lease | undefined;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly forbiddenBackoff: Backoff;
  private unavailable: LeaseWatchUnavailable | undefined;

  constructor(
    private readonly client: LeaseTransport,
    readonly namespace: string,
    readonly name: string,
    opts: LeaseLockOptions = {},
  ) {
    this.logger = opts.logger ?? defaultLogger();
    this.backoff = new Backoff({ initialMs: 1_000, maxMs: 30_000, ...opts.watchBackoff });
    const forbiddenMaxMs = opts.forbiddenWatchRetryMs ?? 300_000;
    this.forbiddenBackoff = new Backoff({
      ...opts.watchBackoff,
      initialMs: Math.min(opts.watchBackoff?.initialMs ?? 1_000, forbiddenMaxMs),
      maxMs: forbiddenMaxMs,
    });
  }

  /** watchUnavailable says why the Lease cannot be watched now; undefined while it can, or before watch runs. */
  watchUnavailable(): LeaseWatchUnavailable | undefined {
    return this.unavailable && { ...this.unavailable };
  }

  describe(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  private collection(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases`;
  }

  async get(signal: AbortSignal): Promise<LockRead | undefined> {
    try {
      const lease = (await this.client.request('GET', `${this.collection()}/${encodeURIComponent(this.name)}`, {
        signal,
      })) as Lease;
      this.last = lease;
      return readOf(lease);
    } catch (e) {
      if (e instanceof KubeRequestError && e.status === 404) return undefined;
      throw e;
    }
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const body: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: specOf(record),
    };
    this.last = (await this.client.request('POST', this.collection(), { body, signal })) as Lease;
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (!this.last) throw new Error(`${this.describe()}: update before the lease was read or created`);
    const body: Lease = { ...this.last, spec: specOf(record) };
    this.last = (await this.client.request('PUT', `${this.collection()}/${encodeURIComponent(this.name)}`, {
      body,
      signal,
    })) as Lease;
  }

  /**
   * watch follows the Lease until signal aborts. It only hastens a takeover:
   * the elector's retry loop stays the source of truth, so a watch that
   * fails is retried with backoff (up to forbiddenWatchRetryMs when
   * forbidden), noted once in the log and in watchUnavailable(), and
   * otherwise quiet.
   */
  async watch(onChange: (read: LockRead | undefined) => void, signal: AbortSignal): Promise<void> {
    const query = { watch: true, fieldSelector: `metadata.name=${this.name}`, allowWatchBookmarks: false };
    while (!signal.aborted) {
      let delay: number;
      try {
        const stream = await this.client.openStream(this.collection(), query, signal);
        for await (const line of stream.lines()) {
          const ev = JSON.parse(line) as { type?: string; object?: Lease & { code?: number; message?: string } };
          if (ev.type === 'ERROR') {
            const code = ev.object?.code ?? 500;
            throw new KubeRequestError(code, `watch of ${this.describe()}: ${code} ${ev.object?.message ?? ''}`, {
              url: this.collection(),
            });
          }
          this.available();
          if (ev.type === 'DELETED') onChange(undefined);
          else if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && ev.object) onChange(readOf(ev.object));
        }
        // The server ended the watch (its timeout): open the next one after a pause, as after a first failure.
        this.available();
        delay = this.backoff.next();
      } catch (e) {
        if (signal.aborted || isAbortError(e)) return;
        delay = this.unavailableFor(e);
      }
      try {
        await sleep(delay, signal);
      } catch {
        return;
      }
    }
  }

  /** unavailableFor notes a failed watch (in the log only when the watch was working) and returns the delay before the next. */
  private unavailableFor(e: unknown): number {
    const status = e instanceof KubeRequestError ? e.status : 0;
    const forbidden = status === 401 || status === 403;
    const delay = forbidden ? this.forbiddenBackoff.next() : this.backoff.next();
    if (this.unavailable) {
      this.unavailable.failures++;
      return delay;
    }
    const message = e instanceof Error ? e.message : String(e);
    this.unavailable = { status, message, since: Date.now(), failures: 1 };
    const fields = { event: 'lease_watch_unavailable', lease: `${this.namespace}/${this.name}`, status };
    if (forbidden)
      this.logger.info(
        `cannot watch ${this.describe()} (${status}): standbys see a renewal or release at their next retry instead of at once; grant the rule {verbs: [watch], apiGroups: ["coordination.k8s.io"], resources: [leases]} in namespace ${this.namespace} to see them at once`,
        fields,
      );
    else
      this.logger.warn(
        `watch of ${this.describe()} failed: ${message}; standbys rely on their retries meanwhile, and the watch is retried with backoff`,
        fields,
      );
    return delay;
  }

  /** available ends a noted unavailability: the watch delivered, or the server ended it cleanly. */
  private available(): void {
    this.backoff.reset();
    this.forbiddenBackoff.reset();
    if (!this.unavailable) return;
    const { failures } = this.unavailable;
    this.unavailable = undefined;
    this.logger.info(`watching ${this.describe()} again after ${failures} failed attempts`, {
      event: 'lease_watch_available',
      lease: `${this.namespace}/${this.name}`,
      failures,
    });
  }
}
