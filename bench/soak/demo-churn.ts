/** Run settings for each churn run: small, quick runs, so many are made and deleted in an hour. */
export interface ChurnOptions {
  url: string;
  apps: number;
  readyAfterMs: [number, number];
  timeoutMs: number;
  /** Stop after this many runs (default: only on stop()). */
  maxRuns?: number;
}

export interface ChurnCounts {
  runs: number;
  /** Runs by the phase they ended in (Completed, TimedOut, ...). */
  phases: Record<string, number>;
  errors: number;
  lastError?: string;
}

interface RunView {
  id: string;
  phase: string;
}

const ACTIVE = new Set(['Creating', 'Running']);

/**
 * DemoChurn creates a demo run through the API, waits for it to end, deletes
 * it, and starts the next, until stop(); stop() deletes the run in progress
 * and resolves when the loop has ended.
 */
export class DemoChurn {
  readonly counts: ChurnCounts = { runs: 0, phases: {}, errors: 0 };
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;

  constructor(private readonly opts: ChurnOptions) {
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** Resolves when the loop has ended: after maxRuns, or on stop(). */
  finished(): Promise<void> {
    return this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted && this.counts.runs < (this.opts.maxRuns ?? Infinity)) {
      try {
        const run = await this.#call<RunView>('POST', '/api/v1/demo/runs', {
          apps: this.opts.apps,
          readyAfter: { distribution: 'uniform', minMs: this.opts.readyAfterMs[0], maxMs: this.opts.readyAfterMs[1] },
          timeoutMs: this.opts.timeoutMs,
        });
        let phase = run.phase;
        while (ACTIVE.has(phase) && !this.#stop.signal.aborted) {
          await sleep(500);
          phase = (await this.#call<RunView>('GET', `/api/v1/demo/runs/${run.id}`)).phase;
        }
        // DELETE stops a run still going (on stop()) and removes every object it made.
        const final = await this.#call<RunView>('DELETE', `/api/v1/demo/runs/${run.id}`);
        this.counts.runs++;
        this.counts.phases[final.phase] = (this.counts.phases[final.phase] ?? 0) + 1;
      } catch (e) {
        this.counts.errors++;
        this.counts.lastError = e instanceof Error ? e.message : String(e);
        await sleep(1000);
      }
    }
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.opts.url}${path}`, {
      method,
      // Mutations must come from the server's own origin.
      headers: { origin: this.opts.url, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
