/** WaitingEntry is a key waiting for its ready time; `seq` orders equal ready times by first arrival. */
export interface WaitingEntry {
  key: string;
  readyAt: number;
  seq: number;
  index: number;
}

/**
 * WaitingHeap holds keys waiting to be added, earliest ready time first, at
 * most one entry per key. Re-adding a waiting key keeps the earlier of the two
 * ready times.
 */
export class WaitingHeap {
  private readonly heap: WaitingEntry[] = [];
  private readonly byKey = new Map<string, WaitingEntry>();
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Adds key, or moves it earlier if it is already waiting for a later time. */
  insert(key: string, readyAt: number): void {
    const known = this.byKey.get(key);
    if (known !== undefined) {
      if (readyAt < known.readyAt) {
        known.readyAt = readyAt;
        this.up(known.index);
      }
      return;
    }
    const entry: WaitingEntry = { key, readyAt, seq: this.nextSeq++, index: this.heap.length };
    this.heap.push(entry);
    this.byKey.set(key, entry);
    this.up(entry.index);
  }

  peek(): WaitingEntry | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest entry if it is ready at `now`. */
  popReady(now: number): WaitingEntry | undefined {
    const top = this.heap[0];
    if (top === undefined || top.readyAt > now) return undefined;
    const last = this.heap.pop() as WaitingEntry;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.down(0);
    }
    this.byKey.delete(top.key);
    return top;
  }

  clear(): void {
    this.heap.length = 0;
    this.byKey.clear();
  }

  private less(a: WaitingEntry, b: WaitingEntry): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private up(i: number): void {
    const h = this.heap;
    const entry = h[i] as WaitingEntry;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = h[parentIndex] as WaitingEntry;
      if (!this.less(entry, parent)) break;
      h[i] = parent;
      parent.index = i;
      i = parentIndex;
    }
    h[i] = entry;
    entry.index = i;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = h.length;
    const entry = h[i] as WaitingEntry;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.less(h[right] as WaitingEntry, h[left] as WaitingEntry) ? right : left;
      const c = h[child] as WaitingEntry;
      if (!this.less(c, entry)) break;
      h[i] = c;
      c.index = i;
      i = child;
    }
    h[i] = entry;
    entry.index = i;
  }
}
