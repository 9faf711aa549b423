import { afterEach } from 'vitest';
import { startEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '@/lib/embedded';

/** Every server a test starts is stopped after it, so no test leaks a listener. */
const running: EmbeddedServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

export async function start(opts: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const s = await startEmbeddedServer(opts);
  running.push(s);
  return s;
}

export interface Reply {
  status: number;
  headers: Headers;

  body: any;
}

export async function api(
  server: EmbeddedServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain-text bodies (probes) stay strings
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface WatchEvent {
  type: string;

  object: any;
}

/** WatchReader collects the events of one watch request as they arrive. */
export class WatchReader {
  readonly events: WatchEvent[] = [];
  ended = false;
  status = 0;
  private readonly ac = new AbortController();
  private done: Promise<void> = Promise.resolve();

  async open(url: string, headers: Record<string, string> = {}): Promise<this> {
    const res = await fetch(url, { signal: this.ac.signal, headers });
    this.status = res.status;
    this.done = this.read(res);
    return this;
  }

  /** names lists "TYPE name" for each event, the usual thing to assert on. */
  names(): string[] {
    return this.events.map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}`.trim());
  }

  close(): Promise<void> {
    this.ac.abort();
    return this.done;
  }

  private async read(res: Response): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) this.events.push(JSON.parse(line) as WatchEvent);
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
  }
}

export function watch(server: EmbeddedServer, path: string, headers?: Record<string, string>): Promise<WatchReader> {
  return new WatchReader().open(server.url + path, headers);
}

export const DATABASE_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'databases.demo.refwatch.dev' },
  spec: {
    group: 'demo.refwatch.dev',
    scope: 'Namespaced',
    names: { plural: 'databases', singular: 'database', kind: 'Database', shortNames: ['db'] },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

export const DB_PATH = '/apis/demo.refwatch.dev/v1alpha1';

export function database(
  name: string,
  namespace = 'shop',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'demo.refwatch.dev/v1alpha1',
    kind: 'Database',
    metadata: { name, namespace },
    spec: { engine: 'postgres' },
    ...extra,
  };
}

export function namespace(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}
