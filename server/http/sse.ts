import { encodeDelta, encodeDeltaParts, type ChangeFilter, type ChangeLog, type ClusterInfo, type Delta, type Snapshot } from '../../lib/changelog';
import { slicedText, snapshotText } from '../snapshot';

export interface SseOptions {
  changelog: ChangeLog;
  /** Captures a full snapshot (at the change log's current revision) for this client's filter. */
  snapshot: () => Snapshot | Promise<Snapshot>;
  filter?: ChangeFilter;
  /** The client's Last-Event-ID: the revision it holds. */
  lastEventId?: string | null;
  cluster?: { current(): ClusterInfo; subscribe(listener: (info: ClusterInfo) => void): () => void };
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

const deltaMessage = (delta: Delta) => message('delta', delta, delta.revision, encodeDelta(delta));

/** Deltas with more changes than this are encoded in slices, as snapshots are. */
const SLICED_DELTA_CHANGES = 2000;

/**
 * sseStream serves GET /api/v1/stream to one client: a snapshot (or, with a
 * Last-Event-ID still retained, the deltas since it), then coalesced deltas
 * read from the change log, both in the lean wire format (lib/changelog/codec).
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
  let rev = 0;
  let closed = false;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;
  let unsubscribeCluster: (() => void) | undefined;
  let ctrl: ReadableStreamDefaultController<Uint8Array>;
  /** Set while a sliced message (a snapshot, a large delta) is being written: nothing may interleave with it. */
  let sending = false;
  let deferredCluster: ClusterInfo | undefined;
  let pulled: (() => void) | undefined;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    if (flushTimer) clearTimeout(flushTimer);
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe?.();
    unsubscribeCluster?.();
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
  const sendCluster = (info: ClusterInfo) => {
    if (sending) deferredCluster = info;
    else if (!closed && hasRoom()) ctrl.enqueue(message('cluster', info));
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
    if (deferredCluster !== undefined) {
      const info = deferredCluster;
      deferredCluster = undefined;
      sendCluster(info);
    }
    if (opts.changelog.revision !== rev) schedule();
  };
  const sendSnapshot = () =>
    sendSliced(async () => {
      const snap = await opts.snapshot();
      if (closed) return false;
      rev = snap.revision;
      return writeSliced(snap.revision, 'snapshot', snapshotText(snap));
    });
  const sendDelta = (delta: Delta) => {
    rev = delta.revision;
    if (delta.changes.length <= SLICED_DELTA_CHANGES) ctrl.enqueue(deltaMessage(delta));
    else void sendSliced(() => writeSliced(delta.revision, 'delta', slicedText(encodeDeltaParts(delta))));
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
    if (since.changes.length === 0) {
      rev = since.revision;
      return;
    }
    sendDelta({ from: rev, revision: since.revision, changes: since.changes });
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
        const last = opts.lastEventId != null && /^\d+$/.test(opts.lastEventId) ? Number(opts.lastEventId) : undefined;
        const since = last !== undefined ? opts.changelog.changesSince(last, opts.filter) : undefined;
        if (last !== undefined && since && !since.resnapshot) {
          // Resume: exactly what the client missed, coalesced.
          rev = since.revision;
          if (since.changes.length > 0) sendDelta({ from: last, revision: since.revision, changes: since.changes });
          else controller.enqueue(encoder.encode(`: resumed at ${since.revision}\n\n`));
        } else {
          if (last !== undefined) controller.enqueue(message('resync', { revision: opts.changelog.revision }));
          void sendSnapshot();
        }
        if (opts.cluster) {
          sendCluster(opts.cluster.current());
          unsubscribeCluster = opts.cluster.subscribe(sendCluster);
        }
        unsubscribe = opts.changelog.subscribe(schedule);
        heartbeat = setInterval(() => {
          if (!closed && !sending && hasRoom()) ctrl.enqueue(encoder.encode(': ping\n\n'));
        }, heartbeatMs);
        // A change between the resumed revision and the subscription is not lost (a snapshot's end looks itself).
        if (!sending && opts.changelog.revision !== rev) schedule();
      },
      pull() {
        pulled?.();
        pulled = undefined;
        // The client read: catch it up if changes arrived while it was not reading.
        if (!closed && !sending && opts.changelog.revision !== rev) schedule();
      },
      cancel() {
        cleanup();
      },
    },
    { highWaterMark: opts.highWaterBytes ?? 256 * 1024, size: (chunk) => chunk.byteLength },
  );
}
