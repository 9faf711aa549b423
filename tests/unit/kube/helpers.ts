import type { InformerEvent } from '@/lib/engine/informer-source';

/** until polls cond every 10 ms and resolves once it holds; it fails with what after timeoutMs. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Recorder collects the events a handler receives, in a form easy to assert on. */
export class Recorder {
  readonly events: InformerEvent[] = [];
  readonly handler = (e: InformerEvent): void => {
    this.events.push(e);
  };
  /** Short descriptions: `added shop/a`, `primed`, `error Forbidden`. */
  get log(): string[] {
    return this.events.map(describe);
  }
  count(type: InformerEvent['type']): number {
    return this.events.filter((e) => e.type === type).length;
  }
  clear(): void {
    this.events.length = 0;
  }
  has(entry: string): boolean {
    return this.log.includes(entry);
  }
}

export function describe(e: InformerEvent): string {
  switch (e.type) {
    case 'added':
    case 'updated':
    case 'deleted':
      return `${e.type} ${e.key.slice(e.key.indexOf('/') + 1)}`;
    case 'error':
      return `error ${e.error.reason}`;
    default:
      return e.type;
  }
}
