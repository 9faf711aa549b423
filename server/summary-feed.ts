import type { Summary } from './summary';

export interface SummarySource {
  readonly version: number;
  summary(): Summary;
}

/**
 * SummaryFeed sends the summary to its subscribers (the SSE streams) when it
 * has changed, at most once per `intervalMs`, computed once for all of them.
 * Its timer runs only while someone listens; `stop` ends it for good.
 */
export class SummaryFeed {
  readonly #source: SummarySource;
  readonly #intervalMs: number;
  readonly #listeners = new Set<(summary: Summary) => void>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #sentVersion = -1;
  #stopped = false;

  constructor(source: SummarySource, opts: { intervalMs?: number } = {}) {
    this.#source = source;
    this.#intervalMs = opts.intervalMs ?? 1000;
  }

  /** Calls `listener` with each changed summary; the first comes at the next tick. Returns the unsubscribe. */
  subscribe(listener: (summary: Summary) => void): () => void {
    if (this.#stopped) return () => {};
    this.#listeners.add(listener);
    this.#timer ??= setInterval(() => this.#tick(), this.#intervalMs);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#clear();
    };
  }

  get listening(): number {
    return this.#listeners.size;
  }

  stop(): void {
    this.#stopped = true;
    this.#listeners.clear();
    this.#clear();
  }

  #tick(): void {
    const version = this.#source.version;
    if (version === this.#sentVersion) return;
    this.#sentVersion = version;
    const summary = this.#source.summary();
    for (const l of this.#listeners) l(summary);
  }

  #clear(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
