import type http from 'node:http';
import type https from 'node:https';

/*
 * What a request needs beneath KubeClient: the interface that discovery and
 * reflectors use, and the helpers a request is built from (its deadline,
 * the caller's signal, the keep-alive agent's TLS identity, the body).
 */

export type Query = Record<string, string | number | boolean | undefined>;

/** ReadOptions qualify one read: the representation asked for (an Accept header; default application/json). */
export interface ReadOptions {
  accept?: string;
}

/** KubeTransport is what discovery and reflectors need from a client; KubeClient implements it. */
export interface KubeTransport {
  readonly server: string;
  /** getJSON GETs path and parses the body; non-2xx rejects with KubeRequestError. */
  getJSON<T = unknown>(path: string, query?: Query, signal?: AbortSignal, opts?: ReadOptions): Promise<T>;
  /** openStream opens a watch; resolves once the server answered 200, rejects with KubeRequestError otherwise. */
  openStream(path: string, query: Query, signal: AbortSignal, opts?: ReadOptions): Promise<WatchStream>;
}

/** WatchStream yields the newline-delimited JSON lines of one watch response. */
export interface WatchStream {
  /** Ends when the server closes the response cleanly; throws on a reset or abort. */
  lines(): AsyncIterable<string>;
  /**
   * each, where a transport has it, hands the same lines to onLine as they
   * arrive, without a promise per line. It resolves when the server closes
   * the response cleanly, and rejects on a reset or an abort, or with what
   * onLine threw, after which it hands over nothing more. See eachLine.
   */
  each?(onLine: (line: string) => void): Promise<void>;
}

/** eachLine hands every line of a watch stream to onLine: through the stream's own each, or else its lines. */
export async function eachLine(stream: WatchStream, onLine: (line: string) => void): Promise<void> {
  if (stream.each) return stream.each(onLine);
  for await (const line of stream.lines()) onLine(line);
}

/** HeadersTimeout ends a request whose response headers did not come in time. */
export class HeadersTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no response headers within ${ms} ms`);
    this.name = 'HeadersTimeout';
  }
}

/** Cancellation is what a failed request's error is judged by: whether it was aborted, and why. */
export type Cancellation = Pick<AbortSignal, 'aborted' | 'reason'>;

/**
 * RequestCancel aborts one request, by its deadline or its caller's signal, by
 * destroying it: the first reason wins, and a request attached after the
 * abort is destroyed at once.
 */
export class RequestCancel implements Cancellation {
  reason: unknown;
  aborted = false;
  private req: http.ClientRequest | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.req?.destroy(reason instanceof Error ? reason : undefined);
  }

  attach(req: http.ClientRequest): void {
    this.req = req;
    if (this.aborted) req.destroy(this.reason instanceof Error ? this.reason : undefined);
  }
}

/**
 * Deadlines ends the requests that outlive a client's timeout, from one timer
 * for all of them. A timer per request cost more than any other part of the
 * client's own work on it in a busy process (about 20 µs each). The timer
 * runs while requests are in flight and stops at its first look that finds
 * none; it looks every tick (a tenth of the timeout, at most a second), so a
 * request ends between its deadline and a tick after it.
 */
export class Deadlines {
  /** In the order requests began, which with one timeout for all is the order they are due. */
  private readonly due = new Map<RequestCancel, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;

  constructor(
    private readonly timeoutMs: number,
    private readonly reason: () => unknown,
  ) {
    this.tickMs = Math.max(1, Math.min(1000, Math.ceil(timeoutMs / 10)));
  }

  /** add starts request's deadline; the returned function ends it, once the request is over. */
  add(request: RequestCancel): () => void {
    this.due.set(request, performance.now() + this.timeoutMs);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      // The request's own socket keeps the process up while it is in flight.
      this.timer.unref();
    }
    return () => void this.due.delete(request);
  }

  private sweep(): void {
    const now = performance.now();
    for (const [request, at] of this.due) {
      if (at > now) return;
      this.due.delete(request);
      request.abort(this.reason());
    }
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The requests in flight under each caller signal, all aborted by the one listener it gets. */
const inFlightUnder = new WeakMap<AbortSignal, Set<RequestCancel>>();

/**
 * follow makes the caller's signal abort a request's own RequestCancel until the
 * returned function is called. However many requests share the signal (a
 * controller's workers), it gets a single listener.
 */
export function follow(caller: AbortSignal, request: RequestCancel): () => void {
  if (caller.aborted) {
    request.abort(caller.reason);
    return () => undefined;
  }
  let requests = inFlightUnder.get(caller);
  if (!requests) {
    const set = new Set<RequestCancel>();
    requests = set;
    inFlightUnder.set(caller, set);
    caller.addEventListener(
      'abort',
      () => {
        for (const r of set) r.abort(caller.reason);
        set.clear();
      },
      { once: true },
    );
  }
  const set = requests;
  set.add(request);
  return () => void set.delete(request);
}

/** AgentTls is the TLS material a keep-alive agent is bound to. */
export type AgentTls = Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

export function sameTls(a: AgentTls, b: AgentTls): boolean {
  return (
    a.rejectUnauthorized === b.rejectUnauthorized &&
    a.servername === b.servername &&
    samePem(a.ca, b.ca) &&
    samePem(a.cert, b.cert) &&
    samePem(a.key, b.key)
  );
}

/** samePem compares PEM material given as strings, Buffers or lists of them (credential plugins hand out new Buffers). */
function samePem(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => samePem(x, b[i]));
  return false;
}

/**
 * readBody reads a response whole and decodes it as UTF-8 once. It listens for the stream's events rather than
 * iterating it: an async iterator and a string decoder per response cost more CPU than a small answer's parse.
 * It rejects when the response errors or closes before its end.
 */
export function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    res.once('error', reject);
    res.once('close', () => {
      if (!ended) reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
