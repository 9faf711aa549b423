import { createParser } from 'eventsource-parser';
import {
  LEAN_MEDIA_TYPE,
  WireFormatError,
  decodeDelta,
  decodeSnapshot,
  type Snapshot,
  type StuckEntry,
} from '../changelog';
import type { Explanation } from '../diagnose';
import { follow, type ObjectKey } from '../model';
import type { Backend, Graph, HistoryQuery, HistoryTransition, StuckQuery, WatchMessage, WatchScope } from './backend';
import { CliError, describeCause } from './errors';
import { SnapshotKinds } from './kinds';

export interface ServerOptions {
  url: string;
  token?: string;
  namespace?: string;
  timeoutMs: number;
}

interface ErrorBody {
  error?: { code?: string; message?: string; field?: string };
}

/** ServerBackend asks a running refwatch server through API v1 (docs/api.md). */
export class ServerBackend implements Backend {
  readonly kinds: SnapshotKinds;
  readonly namespace: string;
  readonly knowsSince = true;
  private readonly base: URL;
  private readonly abort = new AbortController();
  private snapshotOnce: Promise<Snapshot> | undefined;

  constructor(private readonly opts: ServerOptions) {
    let base: URL;
    try {
      base = new URL(opts.url);
    } catch {
      throw new CliError(`flag --server "${opts.url}" is not a URL; for example --server http://127.0.0.1:3000`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new CliError(
        `flag --server "${opts.url}" must be an http:// or https:// URL; for example --server http://127.0.0.1:3000`,
      );
    this.base = base;
    this.namespace = opts.namespace ?? 'default';
    this.kinds = new SnapshotKinds(() => this.snapshot());
  }

  explain(key: ObjectKey): Promise<Explanation> {
    return this.get<Explanation>('/api/v1/explain', { object: key });
  }

  async stuck(q: StuckQuery): Promise<StuckEntry[]> {
    const body = await this.get<{ items: StuckEntry[] }>('/api/v1/stuck', {
      olderThan: `${q.olderThanMs}ms`,
      namespace: q.namespace,
      kind: q.kind,
    });
    return body.items;
  }

  /** history follows the API's cursor until it has q.limit transitions or the timeline ends. */
  async history(q: HistoryQuery): Promise<HistoryTransition[]> {
    const out: HistoryTransition[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.get<{ transitions: HistoryTransition[]; next?: string }>('/api/v1/history', {
        object: q.key,
        since: q.since !== undefined ? String(q.since) : undefined,
        limit: String(Math.min(1000, q.limit - out.length)),
        cursor,
      });
      out.push(...page.transitions);
      cursor = page.next;
    } while (cursor !== undefined && out.length < q.limit);
    return out;
  }

  graph(): Promise<Graph> {
    // The whole graph: a tree follows references across namespaces.
    return this.snapshot();
  }

  private snapshot(): Promise<Snapshot> {
    return (this.snapshotOnce ??= this.get<unknown>('/api/v1/snapshot', {}, LEAN_MEDIA_TYPE).then((body) =>
      this.decoded(decodeSnapshot, body),
    ));
  }

  /** decoded reads a wire message; a server of another refwatch version is a usage error the user can act on. */
  private decoded<T>(decode: (raw: unknown) => T, raw: unknown): T {
    try {
      return decode(raw);
    } catch (e) {
      if (e instanceof WireFormatError) throw new CliError(`--server ${this.base.origin}: ${e.message}`);
      throw e;
    }
  }

  async *watch(scope: WatchScope, signal: AbortSignal): AsyncIterable<WatchMessage> {
    // The stream's payloads in the lean format this CLI decodes.
    const query: Record<string, string | undefined> = { namespace: scope.namespace, format: 'lean' };
    let lastEventId: string | undefined;
    let connected = false;
    while (!signal.aborted && !this.abort.signal.aborted) {
      const queue: WatchMessage[] = [];
      let wake: (() => void) | undefined;
      // A message this CLI cannot read ends the watch with the reason, instead of reconnecting for ever.
      let unreadable: unknown;
      const parser = createParser({
        onEvent: (ev) => {
          try {
            if (ev.event === 'snapshot')
              queue.push({ type: 'snapshot', graph: this.decoded(decodeSnapshot, JSON.parse(ev.data)) });
            else if (ev.event === 'delta')
              queue.push({ type: 'delta', changes: this.decoded(decodeDelta, JSON.parse(ev.data)).changes });
            if (ev.id) lastEventId = ev.id;
          } catch (e) {
            unreadable ??= e;
          }
          wake?.();
        },
      });
      // This connection ends with the watch or with close(); its links go with it.
      const connection = new AbortController();
      const unlinks = [follow(signal, connection), follow(this.abort.signal, connection)];
      try {
        let res: Response;
        try {
          res = await this.fetch(
            '/api/v1/stream',
            query,
            connection.signal,
            { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
            false,
          );
        } catch (e) {
          if (signal.aborted || this.abort.signal.aborted) return;
          if (!connected) throw e;
          await sleep(1000, signal);
          continue;
        }
        connected = true;
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        const onAbort = () => void reader.cancel().catch(() => {});
        connection.signal.addEventListener('abort', onAbort, { once: true });
        let done = false;
        const pump = (async () => {
          try {
            for (;;) {
              const r = await reader.read();
              if (r.done) break;
              parser.feed(r.value);
            }
          } catch {
            // A dropped stream is reconnected below, from the last revision seen.
          } finally {
            done = true;
            wake?.();
          }
        })();
        while (!done || queue.length > 0) {
          if (unreadable !== undefined) {
            onAbort();
            throw unreadable instanceof CliError
              ? unreadable
              : new CliError(
                  `--server ${this.base.origin} sent a stream message this CLI cannot read: ${describeCause(unreadable)}`,
                );
          }
          const m = queue.shift();
          if (m) {
            yield m;
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
        await pump;
      } finally {
        // Also when the consumer stops early or the stream is unreadable: the reader is cancelled.
        connection.abort();
        unlinks.forEach((u) => u());
      }
      if (!signal.aborted) await sleep(1000, signal);
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
  }

  private async get<T>(
    path: string,
    query: Record<string, string | undefined> = {},
    accept = 'application/json',
  ): Promise<T> {
    const request = new AbortController();
    const unlinks = [follow(AbortSignal.timeout(this.opts.timeoutMs), request), follow(this.abort.signal, request)];
    try {
      const res = await this.fetch(path, query, request.signal, { accept }, true);
      return (await res.json()) as T;
    } finally {
      unlinks.forEach((u) => u());
    }
  }

  private async fetch(
    path: string,
    query: Record<string, string | undefined>,
    signal: AbortSignal,
    headers: Record<string, string>,
    timed: boolean,
  ): Promise<Response> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    let res: Response;
    try {
      res = await fetch(url, { headers, signal });
    } catch (e) {
      const why =
        timed && e instanceof Error && e.name === 'TimeoutError'
          ? `no answer within --timeout ${this.opts.timeoutMs / 1000}s`
          : describeCause(e);
      throw new CliError(`cannot reach --server ${this.base.origin}: ${why}`);
    }
    if (res.ok) return res;
    const body = (await res.json().catch(() => ({}))) as ErrorBody;
    const message = body.error?.message ?? `${res.status} ${res.statusText}`;
    if (res.status === 401 || res.status === 403)
      throw new CliError(
        `--server ${this.base.origin} refused the request (${res.status}): ${message}; pass its token with --token`,
      );
    if (res.status === 404 && body.error?.code === 'NotFound') throw new CliError(message, 1);
    if (res.status === 404)
      throw new CliError(`--server ${this.base.origin} has no ${path}: is it a refwatch server? (${message})`);
    if (res.status >= 500) throw new CliError(`--server ${this.base.origin} failed (${res.status}): ${message}`);
    throw new CliError(`${body.error?.field ? `${body.error.field}: ` : ''}${message}`);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
