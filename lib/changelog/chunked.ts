/**
 * Arrays kept in chunks, for the change log's and the wire encoder's lists of
 * up to millions of values: they grow a chunk at a time and never copy what
 * they hold. A JS array of a million values copies them all each time it
 * grows by half, recording each for the garbage collector; a copy of a large
 * one held the event loop for 10–100 ms on this project's machines.
 */

/** Values in one chunk, unless the array is made with another size. */
const CHUNK = 1 << 16;

/** Rows is what a reader of a list of values needs: how many, and each in order. An array is Rows. */
export interface Rows<T> extends Iterable<T> {
  readonly length: number;
}

/** ChunkedArray is an array of values kept in chunks of `chunk` values. */
export class ChunkedArray<T> implements Rows<T> {
  readonly #chunk: number;
  readonly #chunks: T[][] = [];
  #length = 0;

  constructor(chunk = CHUNK) {
    this.#chunk = chunk;
  }

  get length(): number {
    return this.#length;
  }

  /**
   * Adds a value; returns the array's length. The first chunk grows as values
   * come, so a short array stays short; each later one is made at its full
   * size, once, and never regrown.
   */
  push(value: T): number {
    const size = this.#chunk;
    const c = Math.floor(this.#length / size);
    if (c === this.#chunks.length) this.#chunks.push(c === 0 ? [] : new Array<T>(size));
    this.#chunks[c]![this.#length % size] = value;
    return ++this.#length;
  }

  /** The value at i, which is below length. */
  at(i: number): T {
    return this.#chunks[Math.floor(i / this.#chunk)]![i % this.#chunk]!;
  }

  /** The values, in order. */
  *[Symbol.iterator](): Iterator<T> {
    let left = this.#length;
    for (const chunk of this.#chunks) {
      const end = Math.min(chunk.length, left);
      for (let i = 0; i < end; i++) yield chunk[i]!;
      left -= end;
    }
  }

  /**
   * The values, in order, in one array made at their number; a step after each chunk copied. An array of a
   * million values is 8 MB made at once, which a VM faults in page by page: a reader that only iterates takes
   * the ChunkedArray itself (Rows).
   */
  *toArray(): Generator<void, T[]> {
    const chunks = this.#chunks;
    if (chunks.length <= 1) return chunks[0] ?? [];
    const values = new Array<T>(this.#length);
    let at = 0;
    for (const chunk of chunks) {
      yield;
      const end = Math.min(chunk.length, this.#length - at);
      for (let i = 0; i < end; i++) values[at++] = chunk[i]!;
    }
    return values;
  }
}

/** ChunkedInts is a ChunkedArray of 32-bit integers, kept outside the JS heap. */
export class ChunkedInts {
  readonly #chunks: Int32Array[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(value: number): number {
    const c = Math.floor(this.#length / CHUNK);
    if (c === this.#chunks.length) this.#chunks.push(new Int32Array(CHUNK));
    this.#chunks[c]![this.#length % CHUNK] = value;
    return ++this.#length;
  }

  at(i: number): number {
    return this.#chunks[Math.floor(i / CHUNK)]![i % CHUNK]!;
  }

  set(i: number, value: number): void {
    this.#chunks[Math.floor(i / CHUNK)]![i % CHUNK] = value;
  }
}
