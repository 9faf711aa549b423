import type { ObjectKey } from '../model';
import { describeReferent, type Finding } from './check';

export interface GraceTrackerOptions {
  /** How long after a warning a referent that appears counts as "resolved itself". */
  graceMs: number;
  /** Told when a warned referent appeared within the grace. */
  onResolved: (event: {
    referent: ObjectKey;
    referrer: string;
    fieldPath: string;
    afterMs: number;
    message: string;
  }) => void;
  now?: () => number;
}

interface Pending {
  referrer: string;
  fieldPath: string;
  at: number;
}

/**
 * GraceTracker remembers the missing referents of recent warnings, so that
 * one that appears within the grace (a ConfigMap applied after its
 * Deployment) is reported as resolved. Entries expire on a timer, which stop
 * clears.
 */
export class GraceTracker {
  private readonly pending = new Map<ObjectKey, Pending[]>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: GraceTrackerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** warned records the missing referents among findings for the referrer named `referrer`. */
  warned(referrer: string, findings: readonly Finding[]): void {
    if (this.opts.graceMs <= 0) return;
    const at = this.now();
    for (const f of findings) {
      if (f.problem !== 'missing') continue;
      const list = this.pending.get(f.referent) ?? [];
      if (!list.some((p) => p.referrer === referrer && p.fieldPath === f.fieldPath))
        list.push({ referrer, fieldPath: f.fieldPath, at });
      this.pending.set(f.referent, list);
    }
    this.timer ??= setInterval(() => this.expire(), Math.min(this.opts.graceMs, 5_000));
    this.timer.unref?.();
  }

  /** appeared is told of every referent that enters a cache. */
  appeared(referent: ObjectKey): void {
    const list = this.pending.get(referent);
    if (!list) return;
    this.pending.delete(referent);
    const now = this.now();
    for (const p of list) {
      const afterMs = now - p.at;
      if (afterMs > this.opts.graceMs) continue;
      this.opts.onResolved({
        referent,
        referrer: p.referrer,
        fieldPath: p.fieldPath,
        afterMs,
        message: `admission warning resolved itself: ${describeReferent(referent)} appeared ${Math.round(afterMs / 100) / 10}s after ${p.referrer} named it in ${p.fieldPath}`,
      });
    }
    this.idle();
  }

  /** size is the number of referents still awaited. */
  get size(): number {
    return this.pending.size;
  }

  /** stop drops what is awaited and clears the expiry timer. */
  stop(): void {
    this.pending.clear();
    this.idle();
  }

  private expire(): void {
    const cutoff = this.now() - this.opts.graceMs;
    for (const [k, list] of this.pending) {
      const left = list.filter((p) => p.at >= cutoff);
      if (left.length === 0) this.pending.delete(k);
      else this.pending.set(k, left);
    }
    this.idle();
  }

  private idle(): void {
    if (this.pending.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
