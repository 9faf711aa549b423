import { setMaxListeners } from 'node:events';
import { createParser } from 'eventsource-parser';

/**
 * How a client comes back after it disconnects: with the last revision it
 * saw (a resume), with a revision it saw long ago (so far behind that the
 * change log may have compacted it: the server answers resync and a
 * snapshot), or with none (a fresh snapshot).
 */
export type Reconnect = 'resume' | 'tooOld' | 'fresh';

export interface StreamCounts {
  connects: number;
  snapshots: number;
  deltas: number;
  /** Connections answered from Last-Event-ID with deltas or a "resumed" comment, no snapshot. */
  resumes: number;
  /** `resync` events: the revision a client held was no longer retained. */
  resyncs: number;
  /** Connections that failed or ended other than by our own disconnect. */
  errors: number;
  lastError?: string;
}

export interface StreamClientsOptions {
  url: string;
  clients: number;
  /** Each connection is held for a random time in this range, then dropped. */
  holdMs: [number, number];
  random?: () => number;
}

/**
 * StreamClients keeps `clients` SSE connections to /api/v1/stream, each
 * disconnecting and reconnecting in a cycle of resume, too old and fresh.
 * stop() drops every connection and resolves once every client loop ended.
 */
export class StreamClients {
  readonly counts: StreamCounts = { connects: 0, snapshots: 0, deltas: 0, resumes: 0, resyncs: 0, errors: 0 };
  readonly #stop = new AbortController();
  readonly #loops: Promise<void>[];
  readonly #random: () => number;

  constructor(private readonly opts: StreamClientsOptions) {
    this.#random = opts.random ?? Math.random;
    // Each connected client listens for stop once: that many listeners is expected, not a leak.
    setMaxListeners(opts.clients + 1, this.#stop.signal);
    this.#loops = Array.from({ length: opts.clients }, (_, i) => this.#client(i));
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#loops);
  }

  async #client(index: number): Promise<void> {
    const modes: Reconnect[] = ['resume', 'tooOld', 'fresh'];
    let last: string | undefined;
    let first: string | undefined;
    for (let round = 0; !this.#stop.signal.aborted; round++) {
      // Clients start at different points of the cycle, so every kind of reconnect happens at once.
      const mode = round === 0 ? 'fresh' : modes[(index + round) % modes.length]!;
      const lastEventId = mode === 'resume' ? last : mode === 'tooOld' ? first : undefined;
      const [lo, hi] = this.opts.holdMs;
      const seen = await this.#connect(lastEventId, Math.round(lo + this.#random() * (hi - lo)));
      if (seen !== undefined) {
        last = seen;
        first ??= seen;
      }
    }
  }

  /** One connection, held for holdMs; returns the last revision it received. */
  async #connect(lastEventId: string | undefined, holdMs: number): Promise<string | undefined> {
    // Our own controller, timer and listener rather than AbortSignal.any: each is released when the connection ends.
    const drop = new AbortController();
    const hold = drop.signal;
    const timer = setTimeout(() => drop.abort(), holdMs);
    const onStop = () => drop.abort();
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    let last: string | undefined;
    let firstMessage = true;
    const parser = createParser({
      onEvent: (e) => {
        if (e.id !== undefined) last = e.id;
        if (e.event === 'snapshot') this.counts.snapshots++;
        else if (e.event === 'delta') this.counts.deltas++;
        else if (e.event === 'resync') this.counts.resyncs++;
        if (firstMessage && lastEventId !== undefined && e.event === 'delta') this.counts.resumes++;
        if (e.event !== 'cluster') firstMessage = false;
      },
      onComment: (c) => {
        if (firstMessage && c.trim().startsWith('resumed at')) this.counts.resumes++;
        firstMessage = false;
      },
    });
    try {
      // The dashboard's format.
      const res = await fetch(`${this.opts.url}/api/v1/stream?format=lean`, {
        headers: lastEventId !== undefined ? { 'last-event-id': lastEventId } : {},
        signal: hold,
      });
      if (!res.ok || !res.body) throw new Error(`GET /api/v1/stream answered ${res.status}`);
      this.counts.connects++;
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read())
        parser.feed(decoder.decode(r.value, { stream: true }));
      // The server ended the stream: only a stopping server does that.
      if (!this.#stop.signal.aborted) this.#error('the server ended the stream');
    } catch (e) {
      if (!hold.aborted) {
        this.#error(e instanceof Error ? e.message : String(e));
        // Not a hot loop against a server that refuses.
        await new Promise((r) => setTimeout(r, 1000));
      }
    } finally {
      clearTimeout(timer);
      this.#stop.signal.removeEventListener('abort', onStop);
      drop.abort();
    }
    return last;
  }

  #error(message: string): void {
    this.counts.errors++;
    this.counts.lastError = message;
  }
}
