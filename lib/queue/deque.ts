/**
 * Deque is a FIFO ring buffer: `push` and `shift` are O(1) amortised at any
 * length, which `Array.prototype.shift` on a large array is not.
 */
export class Deque<T> {
  private buf: (T | undefined)[];
  private mask: number;
  private head = 0;
  private size = 0;

  constructor(initialCapacity = 16) {
    let cap = 4;
    while (cap < initialCapacity) cap *= 2;
    this.buf = new Array<T | undefined>(cap);
    this.mask = cap - 1;
  }

  get length(): number {
    return this.size;
  }

  push(value: T): void {
    if (this.size === this.buf.length) this.grow();
    this.buf[(this.head + this.size) & this.mask] = value;
    this.size++;
  }

  /** Removes and returns the oldest value, or undefined when empty. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const value = this.buf[this.head];
    this.buf[this.head] = undefined; // release the reference for the GC
    this.head = (this.head + 1) & this.mask;
    this.size--;
    return value;
  }

  peek(): T | undefined {
    return this.size === 0 ? undefined : this.buf[this.head];
  }

  clear(): void {
    this.buf = new Array<T | undefined>(4);
    this.mask = 3;
    this.head = 0;
    this.size = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.size; i++) yield this.buf[(this.head + i) & this.mask] as T;
  }

  private grow(): void {
    const old = this.buf;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = old[(this.head + i) & this.mask];
    this.buf = next;
    this.mask = next.length - 1;
    this.head = 0;
  }
}
