import type { LayeredRequest, LayeredResponse } from './layered';
import type { Point } from './layout';

/** WorkerLike is the part of a Web Worker the client uses; tests pass a fake. */
export interface WorkerLike {
  postMessage(message: LayeredRequest): void;
  terminate(): void;
  onmessage: ((ev: MessageEvent<LayeredResponse>) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
}

/**
 * LayoutWorker runs the layered layout off the page's thread. One request
 * is in flight at a time; a request made meanwhile waits, and a newer one
 * replaces it (the replaced one resolves undefined: nothing to draw).
 * `stop` terminates the worker; what is pending then resolves undefined.
 */
export interface LayoutWorker {
  layout(req: Omit<LayeredRequest, 'id'>): Promise<Map<string, Point> | undefined>;
  stop(): void;
  readonly stopped: boolean;
}

interface Pending {
  req: LayeredRequest;
  resolve(p: Map<string, Point> | undefined): void;
  reject(e: Error): void;
}

/** The bundler sees this `new Worker(new URL(…))` and emits the worker as its own chunk. */
export const createLayeredWorker = (): WorkerLike =>
  new Worker(new URL('./layered.worker.ts', import.meta.url), {
    type: 'module',
    name: 'refwatch-layout',
  }) as unknown as WorkerLike;

export function startLayoutWorker(create: () => WorkerLike = createLayeredWorker): LayoutWorker {
  let worker: WorkerLike | undefined;
  let inFlight: Pending | undefined;
  let waiting: Pending | undefined;
  let nextId = 1;
  let stopped = false;

  const send = (p: Pending) => {
    inFlight = p;
    worker!.postMessage(p.req);
  };
  const settleInFlight = (outcome: (p: Pending) => void) => {
    const done = inFlight;
    inFlight = undefined;
    if (done) outcome(done);
    if (waiting && !stopped) {
      const next = waiting;
      waiting = undefined;
      send(next);
    }
  };
  const ensure = () => {
    if (worker) return;
    worker = create();
    worker.onmessage = (ev) => {
      const res = ev.data;
      if (!inFlight || res.id !== inFlight.req.id) return;
      settleInFlight((p) =>
        'error' in res ? p.reject(new Error(`layered layout failed: ${res.error}`)) : p.resolve(new Map(res.positions)),
      );
    };
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      settleInFlight((p) =>
        p.reject(new Error(`layered layout worker failed: ${ev.message || 'it could not be loaded'}`)),
      );
    };
  };

  return {
    get stopped() {
      return stopped;
    },
    layout(req) {
      if (stopped) return Promise.resolve(undefined);
      ensure();
      return new Promise((resolve, reject) => {
        const p: Pending = { req: { ...req, id: nextId++ }, resolve, reject };
        if (!inFlight) send(p);
        else {
          waiting?.resolve(undefined);
          waiting = p;
        }
      });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      worker?.terminate();
      worker = undefined;
      inFlight?.resolve(undefined);
      waiting?.resolve(undefined);
      inFlight = undefined;
      waiting = undefined;
    },
  };
}
