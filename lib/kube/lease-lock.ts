import type { LeaderElectionRecord, LockRead, ResourceLock } from '../engine/resource-lock';
import { KubeRequestError, isAbortError } from './errors';

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
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
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

  constructor(
    private readonly client: LeaseTransport,
    readonly namespace: string,
    readonly name: string,
  ) {}

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

  async watch(onChange: (read: LockRead | undefined) => void, signal: AbortSignal): Promise<void> {
    const query = { watch: true, fieldSelector: `metadata.name=${this.name}`, allowWatchBookmarks: false };
    while (!signal.aborted) {
      try {
        const stream = await this.client.openStream(this.collection(), query, signal);
        for await (const line of stream.lines()) {
          const ev = JSON.parse(line) as { type?: string; object?: Lease };
          if (ev.type === 'DELETED') onChange(undefined);
          else if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && ev.object) onChange(readOf(ev.object));
        }
      } catch (e) {
        if (signal.aborted || isAbortError(e)) return;
        // The watch only hastens a takeover; the retry loop stays the source of truth, so a failed watch waits and reopens.
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1_000);
        signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }
}
