import os from 'node:os';
import { performance } from 'node:perf_hooks';

/**
 * The machine a timing figure was taken on, as `npm run bench` prints it
 * before each benchmark: how long one read of memory takes when the next
 * address depends on it (a pointer chase through a random cycle), over
 * working sets of 1, 4 and 32 MB, and the load average.
 *
 * The registry, the snapshot encoder, the label index and the caches are
 * hash tables and object graphs of tens of megabytes, read in no order a
 * prefetcher can guess: their speed is that of these reads. A CPU whose last
 * level cache serves the process answers a 4 MB chase in tens of
 * nanoseconds; one that goes to memory for it answers in 150 or more. Two
 * machines that report the same CPU can differ that much (a virtual machine
 * shares its host's cache with its neighbours), and one machine from hour to
 * hour, so a figure is quoted with the reading taken next to it.
 */

/** Working sets probed, in bytes. */
export const PROBE_SIZES: readonly number[] = [1 << 20, 4 << 20, 32 << 20];
/** Reads timed per working set, after a quarter as many that bring it in. */
const READS = 1 << 19;

export interface MachineReading {
  /** Per working set: the mean time of one dependent read, ns. */
  reads: { bytes: number; ns: number }[];
  /** The 1-minute load average. */
  load: number;
  cpus: number;
  model: string;
}

/**
 * randomCycle is a permutation of 0…n−1 that is one cycle (Sattolo's
 * algorithm, from a fixed seed): following it from any slot visits every
 * slot before it returns, in an order no prefetcher follows.
 */
export function randomCycle(n: number, seed = 42): Int32Array {
  const next = new Int32Array(n);
  for (let i = 0; i < n; i++) next[i] = i;
  let s = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    // xorshift32: enough to scatter the addresses, and the same cycle on every run.
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const j = s % i;
    const t = next[i]!;
    next[i] = next[j]!;
    next[j] = t;
  }
  return next;
}

/** Cycles by size, kept between probes: a run probes before each benchmark, and building one costs more than reading it. */
const cycles = new Map<number, Int32Array>();

/** readNs times `reads` dependent reads through a random cycle of `bytes` bytes: ns per read. */
export function readNs(bytes: number, reads = READS): number {
  if (!Number.isInteger(bytes) || bytes < 4)
    throw new Error(`readNs: bytes must be a whole number from 4 up, got ${bytes}`);
  let cycle = cycles.get(bytes);
  if (cycle === undefined) cycles.set(bytes, (cycle = randomCycle(Math.floor(bytes / 4))));
  let p = 0;
  for (let i = 0; i < reads / 4; i++) p = cycle[p]!;
  const t0 = performance.now();
  for (let i = 0; i < reads; i++) p = cycle[p]!;
  const ns = ((performance.now() - t0) * 1e6) / reads;
  // p is used, so the chase is not optimised away.
  if (p < 0) throw new Error('readNs: the cycle is corrupt');
  return ns;
}

/** probeMachine takes a reading: about a second for the default sizes. */
export function probeMachine(sizes: readonly number[] = PROBE_SIZES, reads = READS): MachineReading {
  const cpus = os.cpus();
  return {
    reads: sizes.map((bytes) => ({ bytes, ns: readNs(bytes, reads) })),
    load: os.loadavg()[0]!,
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown CPU',
  };
}

/** formatMachine is the reading as the runner prints it: `== machine: random reads 1 MB 16 ns, 4 MB 170 ns, …`. */
export function formatMachine(r: MachineReading): string {
  const reads = r.reads.map(({ bytes, ns }) => `${sizeText(bytes)} ${ns < 10 ? ns.toFixed(1) : Math.round(ns)} ns`);
  return `== machine: random reads ${reads.join(', ')}; load ${r.load.toFixed(2)}; ${r.cpus} × ${r.model}`;
}

function sizeText(bytes: number): string {
  return bytes >= 1 << 20 ? `${bytes / (1 << 20)} MB` : `${bytes / 1024} KB`;
}
