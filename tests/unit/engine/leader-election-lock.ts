import type { LeaderElectionRecord, LockRead, ResourceLock } from '@/lib/engine';

/** LockServer is one lock object as an API server keeps it: a record and a version bumped on every write. */
export class LockServer {
  record: LeaderElectionRecord | undefined;
  version = 0;
  writes: LeaderElectionRecord[] = [];
  private readonly watchers = new Set<(read: LockRead | undefined) => void>();

  write(r: LeaderElectionRecord): void {
    this.record = { ...r };
    this.version++;
    this.writes.push({ ...r });
    for (const w of this.watchers) w({ record: { ...r }, raw: JSON.stringify(r) });
  }

  watch(fn: (read: LockRead | undefined) => void, signal: AbortSignal): Promise<void> {
    this.watchers.add(fn);
    return new Promise((resolve) =>
      signal.addEventListener('abort', () => (this.watchers.delete(fn), resolve()), { once: true }),
    );
  }
}

export class Conflict extends Error {}

/** MemoryLock is one candidate's client to a LockServer; `down` makes every request fail, like a cut network. */
export class MemoryLock implements ResourceLock {
  down = false;
  requests = 0;
  private seen = -1;
  constructor(
    private readonly server: LockServer,
    private readonly watchable = false,
  ) {
    if (watchable) this.watch = (fn, signal) => server.watch(fn, signal);
  }
  watch?: ResourceLock['watch'];
  describe(): string {
    return 'Lease test/lock';
  }
  private async call(signal: AbortSignal): Promise<void> {
    this.requests++;
    await Promise.resolve();
    if (signal.aborted) throw new DOMException('aborted', 'AbortError');
    if (this.down) throw new Error('connection refused');
  }
  async get(signal: AbortSignal): Promise<LockRead | undefined> {
    await this.call(signal);
    if (!this.server.record) return undefined;
    this.seen = this.server.version;
    return { record: { ...this.server.record }, raw: JSON.stringify(this.server.record) };
  }
  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    await this.call(signal);
    if (this.server.record) throw new Conflict('already exists');
    this.server.write(record);
    this.seen = this.server.version;
  }
  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    await this.call(signal);
    if (this.seen !== this.server.version) throw new Conflict('the object has been modified');
    this.server.write(record);
    this.seen = this.server.version;
  }
}
