import {
  encodeDelta,
  encodeDeltaParts,
  type Change,
  type ChangeFilter,
  type ChangeLog,
  type ClusterInfo,
  type Delta,
  type SnapshotRows,
} from '../../lib/changelog';
import { plainDeltaParts, slicedText, snapshotText } from '../snapshot';
import type { Summary } from '../summary';

export interface SseOptions {
  changelog: ChangeLog;
  /** Captures a full snapshot (at the change log's current revision) for this client's filter. */
  snapshot: () => SnapshotRows | Promise<SnapshotRows>;
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
  /** Snapshots and deltas as plain entity JSON, or in the lean wire format (the default; refwatch's own clients). */
  format?: 'plain' | 'lean';
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

/** Deltas with more changes than this are encoded in slices, as snapshots are. */
const SLICED_DELTA_CHANGES = 2000;

/**
 * sseStream serves GET /api/v1/stream to one client: a snapshot (or, with a
 * Last-Event-ID still retained, the deltas since it), then coalesced deltas
 * read from the change log, both in the lean wire format (lib/changelog/codec),
 * or as plain entity JSON when `format` says so.
 * A snapshot goes out in slices, yielding the event loop between them, and
 * nothing else is written until its message is whole. A client that stops
 * reading is never buffered for without bound: refwatch stops writing once
 * highWaterBytes are queued and, when the client reads again, sends one
 * coalesced delta since its last revision, or a resync and a snapshot if that
 * revision was compacted.
 */
export function sseStream(opts: SseOptions): ReadableStream<Uint8Array> {
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const flushDelayMs = opts.flushDelayMs ?? 5;
  const plain = opts.format === 'plain';
  const deltaMessage = (delta: Delta) =>
    message('delta', delta, delta.revision, plain ? JSON.stringify(delta) : encodeDelta(delta));
  const deltaParts = (delta: Delta) => (plain ? plainDeltaParts(delta) : encodeDeltaParts(delta));
  let rev = 0;
  let closed = false;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;
  let unsubscribeCluster: (() => void) | undefined;
  let unsubscribeSummary: (() => void) | undefined;
  let ctrl: ReadableStreamDefaultController<Uint8Array>;
  /** Set while a sliced message (a snapshot, a large delta) is being written: nothing may interleave with it. */
  let sending = false;
  /** The latest cluster and summary messages that came while a sliced message was being written; they follow it. */
  const deferred = new Map<'cluster' | 'summary', ClusterInfo | Summary>();
  let pulled: (() => void) | undefined;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    if (flushTimer) clearTimeout(flushTimer);
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe?.();
    unsubscribeCluster?.();
    unsubscribeSummary?.();
    opts.signal?.removeEventListener('abort', onAbort);
    pulled?.();
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
  /** sendLatest sends a cluster or summary message, which only its latest matters of: held back behind a sliced message, dropped for a client that does not read. */
  const sendLatest = (event: 'cluster' | 'summary', data: ClusterInfo | Summary, always = false) => {
    if (sending) deferred.set(event, data);
    else if (!closed && (always || hasRoom())) ctrl.enqueue(message(event, data));
  };
  /** writeSliced writes one message whose data comes in slices, holding back while the client does not read; false if the client left. */
  const writeSliced = async (id: number, event: string, text: AsyncIterable<string>): Promise<boolean> => {
    ctrl.enqueue(encoder.encode(`id: ${id}\nevent: ${event}\ndata: `));
    for await (const slice of text) {
      if (closed) return false;
      ctrl.enqueue(encoder.encode(slice));
      while (!closed && !hasRoom()) await new Promise<void>((resolve) => (pulled = resolve));
    }
    if (closed) return false;
    ctrl.enqueue(encoder.encode('\n\n'));
    return true;
  };
  /** sendSliced runs a sliced write with everything else held back, then sends what waited. */
  const sendSliced = async (write: () => Promise<boolean>) => {
    sending = true;
    try {
      if (!(await write())) return;
    } catch (error) {
      if (closed) return;
      cleanup();
      ctrl.error(error);
      return;
    } finally {
      sending = false;
    }
    const waited = [...deferred];
    deferred.clear();
    for (const [event, data] of waited) sendLatest(event, data, true);
    if (opts.changelog.revision !== rev) schedule();
  };
  const sendSnapshot = () =>
    sendSliced(async () => {
      const snap = await opts.snapshot();
      if (closed) return false;
      rev = snap.revision;
      return writeSliced(snap.revision, 'snapshot', snapshotText(snap, undefined, plain));
    });
  const sendDelta = (delta: Delta) => {
    rev = delta.revision;
    if (delta.changes.length <= SLICED_DELTA_CHANGES) ctrl.enqueue(deltaMessage(delta));
    else void sendSliced(() => writeSliced(delta.revision, 'delta', slicedText(deltaParts(delta))));
  };
  const flush = () => {
    flushTimer = undefined;
    if (closed || sending || !hasRoom()) return; // pull() flushes when the client reads again; a snapshot's end reschedules
    const since = opts.changelog.changesSince(rev, opts.filter);
    if (since.resnapshot) {
      ctrl.enqueue(message('resync', { revision: since.revision }));
      void sendSnapshot();
      return;
    }
    const changes = opts.admit ? opts.admit(since.changes) : since.changes;
    if (changes.length === 0) {
      rev = since.revision;
      return;
    }
    sendDelta({ from: rev, revision: since.revision, changes });
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
        const last =
          opts.lastEventId != null && /^\d+$/.test(opts.lastEventId) && !opts.admit
            ? Number(opts.lastEventId)
            : undefined;
        const since = last !== undefined && !opts.overview ? opts.changelog.changesSince(last, opts.filter) : undefined;
        if (opts.overview) {
          // The summary below is all this client wants.
        } else if (last !== undefined && since && !since.resnapshot) {
          // Resume: exactly what the client missed, coalesced.
          rev = since.revision;
          if (since.changes.length > 0) sendDelta({ from: last, revision: since.revision, changes: since.changes });
          else controller.enqueue(encoder.encode(`: resumed at ${since.revision}\n\n`));
        } else {
          if (last !== undefined) controller.enqueue(message('resync', { revision: opts.changelog.revision }));
          void sendSnapshot();
        }
        if (opts.cluster) {
          sendLatest('cluster', opts.cluster.current(), true);
          unsubscribeCluster = opts.cluster.subscribe((info) => sendLatest('cluster', info));
        }
        if (opts.summary) {
          sendLatest('summary', opts.summary.current(), true);
          unsubscribeSummary = opts.summary.subscribe((summary) => sendLatest('summary', summary));
        }
        if (!opts.overview) unsubscribe = opts.changelog.subscribe(schedule);
        heartbeat = setInterval(() => {
          if (!closed && !sending && hasRoom()) ctrl.enqueue(encoder.encode(': ping\n\n'));
        }, heartbeatMs);
        // A change between the resumed revision and the subscription is not lost (a snapshot's end looks itself).
        if (!opts.overview && !sending && opts.changelog.revision !== rev) schedule();
      },
      pull() {
        pulled?.();
        pulled = undefined;
        // The client read: catch it up if changes arrived while it was not reading.
        if (!closed && !sending && !opts.overview && opts.changelog.revision !== rev) schedule();
      },
      cancel() {
        cleanup();
      },
    },
    { highWaterMark: opts.highWaterBytes ?? 256 * 1024, size: (chunk) => chunk.byteLength },
  );
}
