import type { Query } from '../../lib/kube';

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  contentType?: string;
}

/** DemoClient is the part of KubeClient the demo uses to write and read objects. */
export interface DemoClient {
  request(method: string, path: string, opts?: RequestOptions): Promise<unknown>;
  getJSON<T = unknown>(path: string, query?: Query, signal?: AbortSignal): Promise<T>;
}

/**
 * CountedClient counts every request it sends, in total and, through for(),
 * on behalf of one App: each controller of the demo gets its own, so the
 * requests each one costs the API server can be compared.
 */
export class CountedClient implements DemoClient {
  total = 0;

  constructor(private readonly inner: DemoClient) {}

  request(method: string, path: string, opts?: RequestOptions): Promise<unknown> {
    this.total++;
    return this.inner.request(method, path, opts);
  }

  getJSON<T = unknown>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    this.total++;
    return this.inner.getJSON<T>(path, query, signal);
  }

  /** for returns a view of this client that also calls onRequest for each request it sends. */
  for(onRequest: () => void): DemoClient {
    return {
      request: (method, path, opts) => {
        onRequest();
        return this.request(method, path, opts);
      },
      getJSON: <T>(path: string, query?: Query, signal?: AbortSignal) => {
        onRequest();
        return this.getJSON<T>(path, query, signal);
      },
    };
  }
}
