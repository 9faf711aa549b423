import { getEventListeners } from 'node:events';
import type { InformerEvent } from '@/lib/engine/informer-source';
import type { LogFields, Logger } from '@/lib/kube';

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

/** LogCapture is a Logger that keeps its lines. */
export class LogCapture implements Logger {
  readonly lines: { level: string; msg: string; fields: LogFields }[] = [];
  debug = (msg: string, fields: LogFields = {}) => void this.lines.push({ level: 'debug', msg, fields });
  info = (msg: string, fields: LogFields = {}) => void this.lines.push({ level: 'info', msg, fields });
  warn = (msg: string, fields: LogFields = {}) => void this.lines.push({ level: 'warn', msg, fields });
  error = (msg: string, fields: LogFields = {}) => void this.lines.push({ level: 'error', msg, fields });
  get text(): string[] {
    return this.lines.map((l) => `${l.level} ${l.msg}`);
  }
}

/**
 * attachments counts what hangs on a signal: its abort listeners, and the
 * composites AbortSignal.any made of it, which Node keeps in a set on the
 * source signal rather than as listeners. A long-lived signal must not
 * gather either per request or per renewal.
 */
export function attachments(signal: AbortSignal): number {
  const dependants = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  const set = dependants ? (signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants] : undefined;
  return getEventListeners(signal, 'abort').length + (set?.size ?? 0);
}
