import type { ServerResponse } from 'node:http';
import { apiVersionFor } from './strategy';
import { grKey, type ResourceType } from './resources';
import { matches, type Selector } from './selectors';
import type { ObjectStore, StoreEvent, StoredObject } from './store';
import type { Status } from './status';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** WatchSpec is one watch request after validation: what it covers and how it starts. */
export interface WatchSpec {
  rt: ResourceType;
  version: string;
  /** Only this namespace; absent for all namespaces or cluster-scoped resources. */
  namespace?: string;
  selector: Selector;
  /** Synthetic ADDED events sent first (current state), or none. */
  initial: StoredObject[];
  /** Events with a resourceVersion above this are sent after the initial ones. */
  fromRv: number;
  /** Send BOOKMARK events (allowWatchBookmarks). */
  bookmarks: boolean;
  /** After the initial events, send the `k8s.io/initial-events-end` bookmark (sendInitialEvents + allowWatchBookmarks). */
  initialEventsEnd: boolean;
  /** The watch ends cleanly after this long. */
  timeoutMs: number;
  /**
   * Renders each object another way (a Table for kubectl, PartialObjectMetadata);
   * absent: the object itself. An object it cannot render ends the watch, as
   * kube-apiserver's watch encoder does.
   */
  render?: (obj: StoredObject) => object;
  /** Bookmarks are PartialObjectMetadata of this apiVersion (meta.k8s.io/v1) rather than the resource's kind. */
  bookmarkApiVersion?: string;
}

/**
 * WatchStream writes one watch response: newline-delimited `{type, object}`
 * events. Each event of its resource passes the namespace and selector the
 * way the watch cache's filter does: leaving the selector is DELETED,
 * entering it is ADDED.
 */
export class WatchStream {
  readonly resource: string;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly res: ServerResponse,
    private readonly spec: WatchSpec,
    private readonly store: ObjectStore,
    bookmarkIntervalMs: number,
    private readonly onClose: (w: WatchStream) => void,
  ) {
    this.resource = grKey(spec.rt);
    res.on('close', () => this.finish());
    const timeout = setTimeout(() => this.close(), spec.timeoutMs);
    this.timers.add(timeout);
    if (spec.bookmarks) {
      const interval = setInterval(() => this.bookmark(), bookmarkIntervalMs);
      this.timers.add(interval);
    }
  }

  /** start writes the initial events and the events after fromRv already in the store. */
  start(backlog: StoreEvent[]): void {
    for (const obj of this.spec.initial) this.write('ADDED', obj);
    if (this.spec.initialEventsEnd) this.bookmark(true);
    for (const e of backlog) this.deliver(e);
  }

  /** deliver sends one store event if it concerns this watch. */
  deliver(e: StoreEvent): void {
    if (this.closed || e.resource !== this.resource || e.rv <= this.spec.fromRv) return;
    const ns = this.spec.namespace;
    if (ns !== undefined && e.object.metadata.namespace !== ns) return;
    const cur = e.type !== 'DELETED' && matches(this.spec.selector, e.object);
    const prev = e.prev !== undefined && matches(this.spec.selector, e.prev);
    if (e.type === 'DELETED') {
      if (prev) this.write('DELETED', e.object);
    } else if (cur && (prev || e.type === 'ADDED')) {
      this.write(e.type, e.object);
    } else if (cur) {
      this.write('ADDED', e.object);
    } else if (prev) {
      // Leaving the selector: the previous content, stamped with this event's resourceVersion.
      this.write('DELETED', { ...e.prev!, metadata: { ...e.prev!.metadata, resourceVersion: String(e.rv) } });
    }
  }

  /** fail sends an in-stream ERROR with the Status and ends the watch, as the watch cache does for 410. */
  fail(status: Status): void {
    if (this.closed) return;
    this.res.write(JSON.stringify({ type: 'ERROR', object: status }) + '\n');
    this.close();
  }

  /** close ends the response cleanly: the client sees the stream end. */
  close(): void {
    if (this.closed) return;
    this.res.end();
    this.finish();
  }

  private bookmark(initialEventsEnd = false): void {
    if (this.closed) return;
    const metadata: Record<string, unknown> = { resourceVersion: String(this.store.currentRv()) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    const partial = this.spec.bookmarkApiVersion;
    const object = partial
      ? { kind: 'PartialObjectMetadata', apiVersion: partial, metadata }
      : { kind: this.spec.rt.kind, apiVersion: apiVersionFor(this.spec.rt, this.spec.version), metadata };
    this.res.write(JSON.stringify({ type: 'BOOKMARK', object }) + '\n');
  }

  private write(type: WatchEventType, obj: StoredObject): void {
    const apiVersion = apiVersionFor(this.spec.rt, this.spec.version);
    const object = obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
    let rendered: object;
    try {
      rendered = this.spec.render ? this.spec.render(object) : object;
    } catch {
      this.close();
      return;
    }
    this.res.write(JSON.stringify({ type, object: rendered }) + '\n');
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.onClose(this);
  }
}

/**
 * WatchHub holds every open watch, feeds them store events and counts them per
 * resource (`configmaps`, `databases.demo.refwatch.dev`), which is what
 * openWatches() reports.
 */
export class WatchHub {
  private readonly streams = new Set<WatchStream>();
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((e) => {
      for (const w of [...this.streams]) w.deliver(e);
    });
  }

  add(w: WatchStream): void {
    this.streams.add(w);
  }

  remove(w: WatchStream): void {
    this.streams.delete(w);
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const w of this.streams) out[w.resource] = (out[w.resource] ?? 0) + 1;
    return out;
  }

  /** closeResource ends every watch of one resource (its CRD was deleted). */
  closeResource(resource: string): void {
    for (const w of [...this.streams]) if (w.resource === resource) w.close();
  }

  closeAll(): void {
    for (const w of [...this.streams]) w.close();
  }

  stop(): void {
    this.closeAll();
    this.unsubscribe();
  }
}
