import { decodeDelta, decodeSnapshot } from '@/lib/changelog/codec';
import type { ClusterInfo, Delta, Snapshot, Summary } from '@/lib/changelog/wire';
import { withStreamTicket } from './access';

/**
 * How the dashboard's link to GET /api/v1/stream is doing:
 *   connecting    first connection not open yet
 *   live          open; snapshots and deltas flow
 *   reconnecting  dropped; retrying (the browser resumes with Last-Event-ID)
 *   lost          down for longer than `lostAfterMs`; still retrying
 */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'lost';

export interface StreamSink {
  snapshot(snapshot: Snapshot): void;
  /** Deltas received since the last animation frame, oldest first. */
  deltas(deltas: Delta[]): void;
  cluster(info: ClusterInfo): void;
  /** The server says this client fell behind; a fresh snapshot is needed. */
  resync(): void;
  /** The overview's counts changed (`event: summary`). */
  summary?(summary: Summary): void;
  state(state: ConnectionState, detail?: string): void;
}

/** The part of EventSource the stream uses, so tests can drive it. */
export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((ev: Event) => void) | null;
  onerror: ((ev: Event) => void) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

export interface StreamDeps {
  url?: string;
  createEventSource?: (url: string) => EventSourceLike;
  /** The URL to open for this connection: by default the tab's stream ticket is added when it has a token. */
  authorize?: (url: string) => string | Promise<string>;
  requestFrame?: (cb: () => void) => number;
  cancelFrame?: (id: number) => void;
  lostAfterMs?: number;
}

const CLOSED = 2;
const CONNECTING = 0;

/**
 * SnapshotStream owns the one EventSource of a tab. Deltas are buffered and
 * handed to the sink once per animation frame; a snapshot or resync drops
 * the buffer. When the browser gives up (HTTP error: readyState CLOSED) the
 * stream reopens itself with backoff up to 30 s. A connection opened with a
 * ticket is reopened by the stream, not the browser, because a ticket opens
 * one connection: with a new ticket and the last revision it holds
 * (?lastEventId=), so it resumes as the browser would. `stop` closes everything.
 */
export class SnapshotStream {
  private es: EventSourceLike | undefined;
  private pending: Delta[] = [];
  private frame: number | undefined;
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;
  private lostTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private stopped = false;
  /** Counts opens, so a ticket that arrives after a newer open or a stop is dropped. */
  private opens = 0;
  /** The revision of the last snapshot or delta received, to resume from after a reopen. */
  private lastEventId: string | undefined;
  private current: ConnectionState = 'connecting';
  private readonly url: string;
  private readonly create: (url: string) => EventSourceLike;
  private readonly authorize: (url: string) => string | Promise<string>;
  private readonly requestFrame: (cb: () => void) => number;
  private readonly cancelFrame: (id: number) => void;
  private readonly lostAfterMs: number;

  constructor(
    private readonly sink: StreamSink,
    deps: StreamDeps = {},
  ) {
    // This stream decodes the lean wire format; EventSource cannot send Accept, so it asks in the URL.
    const url = deps.url ?? '/api/v1/stream';
    this.url = `${url}${url.includes('?') ? '&' : '?'}format=lean`;
    this.create = deps.createEventSource ?? ((url) => new EventSource(url));
    this.authorize = deps.authorize ?? withStreamTicket;
    this.requestFrame = deps.requestFrame ?? ((cb) => requestAnimationFrame(cb));
    this.cancelFrame = deps.cancelFrame ?? ((id) => cancelAnimationFrame(id));
    this.lostAfterMs = deps.lostAfterMs ?? 20_000;
  }

  start(): void {
    this.stopped = false;
    this.open();
  }

  /** reconnect drops the current connection and opens a new one now (the "Retry" button). */
  reconnect(): void {
    if (this.stopped) return;
    this.clearReopen();
    this.es?.close();
    this.failures = 0;
    this.lastEventId = undefined;
    this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.es?.close();
    this.es = undefined;
    this.clearReopen();
    if (this.lostTimer !== undefined) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
    if (this.frame !== undefined) this.cancelFrame(this.frame);
    this.frame = undefined;
    this.pending = [];
  }

  private open(): void {
    const opening = ++this.opens;
    const base =
      this.lastEventId === undefined
        ? this.url
        : `${this.url}${this.url.includes('?') ? '&' : '?'}lastEventId=${this.lastEventId}`;
    let url: string | Promise<string>;
    try {
      url = this.authorize(base);
    } catch (e) {
      url = Promise.reject(e);
    }
    if (typeof url === 'string') this.connect(url);
    else
      url.then(
        (u) => {
          if (opening === this.opens && !this.stopped) this.connect(u);
        },
        () => {
          if (opening !== this.opens || this.stopped) return;
          if (this.current !== 'lost')
            this.setState('reconnecting', 'cannot get a ticket for /api/v1/stream; retrying');
          this.armLostTimer();
          this.reopenLater();
        },
      );
  }

  /** reopenLater opens a new connection after a backoff that grows with each failure in a row, up to 30 s. */
  private reopenLater(): void {
    this.failures++;
    const delay = Math.min(30_000, 1000 * 2 ** Math.min(this.failures - 1, 5));
    this.clearReopen();
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (!this.stopped) this.open();
    }, delay);
  }

  private connect(url: string): void {
    // A ticket opens one connection: the browser's own retry would present it again, and be refused.
    const ticketed = /[?&]ticket=/.test(url);
    const es = this.create(url);
    this.es = es;
    if (this.current !== 'live') this.setState(this.current === 'connecting' ? 'connecting' : this.current);
    es.onopen = () => {
      if (es !== this.es) return;
      this.failures = 0;
      if (this.lostTimer !== undefined) clearTimeout(this.lostTimer);
      this.lostTimer = undefined;
      this.setState('live');
    };
    es.onerror = () => {
      if (es !== this.es || this.stopped) return;
      this.flush();
      if (this.current !== 'lost') this.setState('reconnecting', 'connection to /api/v1/stream dropped; retrying');
      this.armLostTimer();
      if (es.readyState === CLOSED || ticketed) {
        // The browser stops retrying after an HTTP error, and must not retry a ticket; retry on our own.
        es.close();
        this.reopenLater();
      } else if (es.readyState !== CONNECTING) {
        es.close();
      }
    };
    es.addEventListener('snapshot', (ev) => {
      const snapshot = parse(ev.data, decodeSnapshot);
      if (!snapshot || es !== this.es) return;
      if (ev.lastEventId) this.lastEventId = ev.lastEventId;
      this.pending = [];
      this.sink.snapshot(snapshot);
    });
    es.addEventListener('delta', (ev) => {
      const delta = parse(ev.data, decodeDelta);
      if (!delta || es !== this.es || !Array.isArray(delta.changes)) return;
      if (ev.lastEventId) this.lastEventId = ev.lastEventId;
      this.pending.push(delta);
      if (this.frame === undefined) this.frame = this.requestFrame(() => this.flush());
    });
    es.addEventListener('cluster', (ev) => {
      const info = parse(ev.data, (raw) => raw as ClusterInfo);
      if (info && es === this.es) this.sink.cluster(info);
    });
    es.addEventListener('summary', (ev) => {
      const summary = parse(ev.data, (raw) => raw as Summary);
      if (summary && es === this.es) this.sink.summary?.(summary);
    });
    es.addEventListener('resync', () => {
      if (es !== this.es) return;
      this.lastEventId = undefined;
      this.pending = [];
      this.sink.resync();
    });
  }

  private flush(): void {
    if (this.frame !== undefined) this.cancelFrame(this.frame);
    this.frame = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.sink.deltas(batch);
  }

  private armLostTimer(): void {
    if (this.lostTimer !== undefined) return;
    this.lostTimer = setTimeout(() => {
      this.lostTimer = undefined;
      if (!this.stopped && this.current !== 'live')
        this.setState('lost', `no connection to /api/v1/stream for ${Math.round(this.lostAfterMs / 1000)} s`);
    }, this.lostAfterMs);
  }

  private clearReopen(): void {
    if (this.reopenTimer !== undefined) clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
  }

  private setState(state: ConnectionState, detail?: string): void {
    this.current = state;
    this.sink.state(state, detail);
  }
}

/** parse reads a message's JSON and decodes it from the wire format. */
function parse<T>(data: unknown, decode: (raw: unknown) => T): T | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    return decode(JSON.parse(data));
  } catch {
    return undefined; // a malformed message is skipped; the next snapshot or gap check repairs state
  }
}
