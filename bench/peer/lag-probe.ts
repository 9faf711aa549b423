import { stripManagedFields } from '../../lib/kube';
import { splitKey, type KubeObject } from '../../lib/model';

/**
 * DeferredLog holds REFWATCH_PEER_DEBUG's lines in memory and writes them in one write when the process stops;
 * each line carries its own time. Written as they happened, they went to a pipe, which node writes synchronously
 * on Linux, so a slow reader of the benchmark's output could stall the process under test until kube-apiserver
 * ended its watches as unresponsive (docs/library.md, "The probe stalled what it probed").
 */
export class DeferredLog {
  private lines: string[] = [];

  /** line keeps one line for flush. */
  readonly line = (text: string): void => {
    this.lines.push(text);
  };

  /** flush writes the lines kept so far, in one write, and forgets them. */
  flush(write: (text: string) => void = (t) => process.stderr.write(t)): void {
    if (this.lines.length === 0) return;
    write(`${this.lines.join('\n')}\n`);
    this.lines = [];
  }
}

/** A referent as a resolution carries it. */
interface ResolvedReferent {
  referent: string;
  object?: { status?: unknown };
}

/**
 * LagProbe, for REFWATCH_PEER_DEBUG only, splits a late resolution in two:
 * upstream, from the referent's status.readyAt (stamped by the generator
 * before its patch) to the referent's watch event reaching this process;
 * inside, from that event to the reconcile that resolves the App. Beside
 * them it notes how many status writes were in flight, each holding a
 * worker. Every resolution later than thresholdMs is handed to print (a
 * DeferredLog's line in the benchmark).
 */
export class LagProbe {
  private readonly arrivals = new Map<string, number>();
  private writes = 0;

  constructor(
    private readonly print: (line: string) => void,
    private readonly thresholdMs = 100,
  ) {}

  /** transform is the pool's reflector transform: it notes when each Database and Cache event arrives. */
  readonly transform = (o: KubeObject): KubeObject => {
    if (o.kind === 'Database' || o.kind === 'Cache') this.arrivals.set(`${o.kind}/${o.metadata.name}`, Date.now());
    return stripManagedFields(o);
  };

  /** resolving is called as a reconcile finds every referent Ready, at `now`, before it writes the status. */
  resolving(referents: readonly ResolvedReferent[], now: number): void {
    let readyAt = -Infinity;
    let last = '';
    for (const r of referents) {
      const at = Date.parse((r.object?.status as { readyAt?: string } | undefined)?.readyAt ?? '');
      const parts = splitKey(r.referent);
      if (at > readyAt && parts) [readyAt, last] = [at, `${parts.kind.split('.')[0]}/${parts.name}`];
    }
    if (now - readyAt <= this.thresholdMs) return;
    const arrived = this.arrivals.get(last) ?? NaN;
    this.print(
      `late ${now} ${last}: ${now - readyAt} ms = upstream ${arrived - readyAt} + inside ${now - arrived}; ${this.writes} status writes in flight`,
    );
  }

  /** write wraps a status write, counting the writes in flight and printing one slower than thresholdMs. */
  async write<T>(send: () => Promise<T>): Promise<T> {
    const start = Date.now();
    this.writes++;
    try {
      return await send();
    } finally {
      this.writes--;
      const ms = Date.now() - start;
      if (ms > this.thresholdMs) this.print(`slow status write ${start}: ${ms} ms; ${this.writes} others in flight`);
    }
  }
}
