import { isAbortError } from '../../lib/kube';
import type { DemoClient } from './counted-client';
import { demoPath } from './kinds';

const MAX_ATTEMPTS = 5;
const RETRY_MS = 200;

export interface ReadinessSimulatorOptions {
  client: DemoClient;
  namespace: string;
  signal: AbortSignal;
  /** Told when an object is Ready: readyAt is the epoch ms written to status.readyAt. */
  onReady(kind: 'Database' | 'Cache', name: string, readyAt: number): void;
  /** Told when an object could not be marked Ready after every attempt. */
  onError(kind: 'Database' | 'Cache', name: string, error: unknown): void;
}

/**
 * ReadinessSimulator plays the referents' own controller: it marks each
 * Database and Cache Ready once its spec.readyAfterMs has passed since it was
 * created, with a merge patch on /status that sets the Ready condition and
 * status.readyAt. stop clears every timer and awaits the patches in flight.
 */
export class ReadinessSimulator {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly opts: ReadinessSimulatorOptions) {}

  /** schedule marks kind/name Ready after ms. */
  schedule(kind: 'Database' | 'Cache', name: string, ms: number, attempt = 1): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const p = this.markReady(kind, name, attempt).finally(() => this.inflight.delete(p));
      this.inflight.add(p);
    }, ms);
    this.timers.add(timer);
  }

  /** Timers set and not yet fired, plus patches in flight. */
  pending(): number {
    return this.timers.size + this.inflight.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inflight]);
  }

  private async markReady(kind: 'Database' | 'Cache', name: string, attempt: number): Promise<void> {
    const readyAt = Date.now();
    const at = new Date(readyAt).toISOString();
    const body = {
      status: {
        readyAt: at,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Provisioned',
            message: `ready ${kind === 'Database' ? 'to accept connections' : 'to serve'}`,
            lastTransitionTime: at,
          },
        ],
      },
    };
    try {
      await this.opts.client.request('PATCH', demoPath(kind, this.opts.namespace, name, 'status'), {
        body,
        contentType: 'application/merge-patch+json',
        signal: this.opts.signal,
      });
      this.opts.onReady(kind, name, readyAt);
    } catch (e) {
      if (this.stopped || isAbortError(e)) return;
      if (attempt < MAX_ATTEMPTS) this.schedule(kind, name, RETRY_MS * attempt, attempt + 1);
      else this.opts.onError(kind, name, e);
    }
  }
}
