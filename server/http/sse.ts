import type { Change, ChangeFilter, ChangeLog, ClusterInfo, Delta, Snapshot } from '../../lib/changelog';
import type { Summary } from '../summary';
import { snapshotJson } from '../snapshot';

export interface SseOptions {
  changelog: ChangeLog;
  /** Builds a full snapshot (at the change log's current revision) for this client's filter. */
  snapshot: () => Snapshot;
  filter?: ChangeFilter;
  /** The client's Last-Event-ID: the revision it holds. */
  lastEventId?: string | null;
  cluster?: { current(): ClusterInfo; subscribe(listener: (info: ClusterInfo) => void): () => void };
  /** The overview's summary: sent after the snapshot, then as `event: summary` whenever the feed says it changed. */
  summary?: { current(): Summary; subscribe(listener: (summary: Summary) => void): () => void };
  /** Only the summary (and cluster): no snapshot, no deltas. The dashboard's overview opens this. */
  overview?: boolean;
  /**
   * Trims a delta's changes to what this client holds (a ScopeView). Set for
   * scopes whose members change on their own; a resume then starts over with a snapshot.
   */
  admit?: (changes: Change[]) => Change[];
  heartbeatMs?: number;
  /** Bytes buffered for a client that does not read before refwatch stops writing to it. */
  highWaterBytes?: number;
  /** Coalescing window: changes within it go out as one delta. */
  flushDelayMs?: number;
  signal?: AbortSignal;
  onOpen?: () => void;
  onClose?: () => void;
}

export const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  // no-transform keeps proxies and compression from buffering the stream.
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

const encoder = new TextEncoder();

function message(event: string, data: unknown, id?: number, json = JSON.stringify(data)): Uint8Array {
  return encoder.encode(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${json}\n\n`);
}

/**
 * sseStream serves GET /api/v1/stream to one client: a snapshot (or, with a
 * Last-Event-ID still retained, the deltas since it), then coalesced deltas
 * read from the change log. A client that stops reading is never buffered for
 * without bound: refwatch stops writing once highWaterBytes are queued and,
 * when the client reads again, sends one coalesced delta since its last
 * revision, or a resync and a snapshot if that revision was compacted.
 */
export function sseStream(opts: SseOptions): ReadableStream<Uint8Array> {
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const flushDelayMs = opts.flushDelayMs ?? 5;
  let rev = 0;
  let closed = false;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;
  let unsubscribeCluster: (() => void) | undefined;
  let unsubscribeSummary: (() => void) | undefined;
  let ctrl: ReadableStreamDefaultController<Uint8Array>;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    if (flushTimer) clearTimeout(flushTimer);
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe?.();
    unsubscribeCluster?.();
    unsubscribeSummary?.();
    opts.signal?.removeEventListener('abort', onAbort);
    opts.onClose?.();
  };
  const onAbort = () => {
    cleanup();
    try {
      ctrl.close();
    } catch {
      // already closed or errored by the consumer
    }
  };
  const hasRoom = () => (ctrl.desiredSize ?? 0) > 0;
  const sendSnapshot = () => {
    const snap = opts.snapshot();
    rev = snap.revision;
    ctrl.enqueue(message('snapshot', snap, snap.revision, snapshotJson(snap)));
  };
  const flush = () => {
    flushTimer = undefined;
    if (closed || !hasRoom()) return; // pull() flushes when the client reads again
    const since = opts.changelog.changesSince(rev, opts.filter);
    if (since.resnapshot) {
      ctrl.enqueue(message('resync', { revision: since.revision }));
      sendSnapshot();
      return;
    }
    const changes = opts.admit ? opts.admit(since.changes) : since.changes;
    if (changes.length === 0) {
      rev = since.revision;
      return;
    }
    const delta: Delta = { from: rev, revision: since.revision, changes };
    rev = since.revision;
    ctrl.enqueue(message('delta', delta, delta.revision));
  };
  const schedule = () => {
    if (!closed && flushTimer === undefined) flushTimer = setTimeout(flush, flushDelayMs);
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        ctrl = controller;
        if (opts.signal?.aborted) {
          cleanup();
          controller.close();
          return;
        }
        opts.signal?.addEventListener('abort', onAbort);
        opts.onOpen?.();
        const last = opts.lastEventId != null && /^\d+$/.test(opts.lastEventId) && !opts.admit ? Number(opts.lastEventId) : undefined;
        const since = last !== undefined && !opts.overview ? opts.changelog.changesSince(last, opts.filter) : undefined;
        if (opts.overview) {
          // The summary below is all this client wants.
        } else if (last !== undefined && since && !since.resnapshot) {
          // Resume: exactly what the client missed, coalesced.
          rev = since.revision;
          if (since.changes.length > 0) controller.enqueue(message('delta', { from: last, revision: since.revision, changes: since.changes } satisfies Delta, since.revision));
          else controller.enqueue(encoder.encode(`: resumed at ${since.revision}\n\n`));
        } else {
          if (last !== undefined) controller.enqueue(message('resync', { revision: opts.changelog.revision }));
          sendSnapshot();
        }
        if (opts.cluster) {
          controller.enqueue(message('cluster', opts.cluster.current()));
          unsubscribeCluster = opts.cluster.subscribe((info) => {
            if (!closed && hasRoom()) ctrl.enqueue(message('cluster', info));
          });
        }
        if (opts.summary) {
          controller.enqueue(message('summary', opts.summary.current()));
          unsubscribeSummary = opts.summary.subscribe((summary) => {
            if (!closed && hasRoom()) ctrl.enqueue(message('summary', summary));
          });
        }
        if (!opts.overview) unsubscribe = opts.changelog.subscribe(schedule);
        heartbeat = setInterval(() => {
          if (!closed && hasRoom()) ctrl.enqueue(encoder.encode(': ping\n\n'));
        }, heartbeatMs);
        // A change between the snapshot and the subscription is not lost.
        if (!opts.overview && opts.changelog.revision !== rev) schedule();
      },
      pull() {
        // The client read: catch it up if changes arrived while it was not reading.
        if (!closed && !opts.overview && opts.changelog.revision !== rev) schedule();
      },
      cancel() {
        cleanup();
      },
    },
    { highWaterMark: opts.highWaterBytes ?? 256 * 1024, size: (chunk) => chunk.byteLength },
  );
}
