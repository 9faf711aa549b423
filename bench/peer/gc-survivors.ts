import { readFileSync } from 'node:fs';

/*
 * What survives scavenges in each node implementation of a peer run, read from V8's --trace-gc-nvp lines.
 *
 *   REFWATCH_PEER_DEBUG=1 REFWATCH_PEER_NODE_ARGS=--trace-gc-nvp REFWATCH_BENCH_REAL=1 \
 *     REFWATCH_PEER_PLAN=1000x1 REFWATCH_PEER_IMPLS=refwatch,node-floor npm run bench -- peer 2> gc.log
 *   npx tsx bench/peer/gc-survivors.ts gc.log
 *
 * V8 doubles the young generation's semi-spaces (up to 16 MB each on 64-bit) once the bytes that survived
 * young collections since it last grew (copied within it, or promoted) exceed a semi-space: the total
 * survived, not the bytes live at any one time, decides how much of the peak RSS the young generation takes.
 * A run under --trace-gc-nvp is for this measurement only; its timings are not the bench's.
 */

/** GcSurvivors sums one process's young-generation survivors. */
export interface GcSurvivors {
  collections: number;
  /** Bytes promoted plus bytes copied within the young generation, over every collection. */
  survived: number;
  /** The same, over the collections in the first 2.5 s of the process: its start, as the Apps and referents are created. */
  survivedAtStart: number;
  /** The most bytes allocated between two young collections: about one semi-space once it is full. */
  largestAllocation: number;
}

const START_MS = 2500;

/**
 * survivorsByImplementation reads the bench's stderr: each line an implementation printed carries its name in
 * brackets (REFWATCH_PEER_DEBUG), and --trace-gc-nvp lines hold `N ms: pause=… promoted=… new_space_survived=…`.
 */
export function survivorsByImplementation(log: string): Map<string, GcSurvivors> {
  const out = new Map<string, GcSurvivors>();
  for (const line of log.split('\n')) {
    const who = /\[([\w-]+)\].*?\s(\d+) ms: pause=/.exec(line);
    if (!who) continue;
    const field = (name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0);
    const s = out.get(who[1]!) ?? { collections: 0, survived: 0, survivedAtStart: 0, largestAllocation: 0 };
    const survived = field('promoted') + field('new_space_survived');
    s.collections++;
    s.survived += survived;
    if (Number(who[2]) <= START_MS) s.survivedAtStart += survived;
    s.largestAllocation = Math.max(s.largestAllocation, field('allocated'));
    out.set(who[1]!, s);
  }
  return out;
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('give the stderr of a peer run made with REFWATCH_PEER_DEBUG=1 and --trace-gc-nvp');
  const found = survivorsByImplementation(readFileSync(file, 'utf8'));
  if (found.size === 0)
    throw new Error(
      `${file} holds no --trace-gc-nvp lines: run the bench with REFWATCH_PEER_DEBUG=1 and REFWATCH_PEER_NODE_ARGS=--trace-gc-nvp`,
    );
  const mb = (n: number) => (n / 2 ** 20).toFixed(1);
  for (const [impl, s] of found)
    console.log(
      `${impl}: ${mb(s.survived)} MB survived over ${s.collections} young collections (${mb(s.survivedAtStart)} MB in the first ${START_MS / 1000} s); largest allocation between two: ${mb(s.largestAllocation)} MB`,
    );
}

if (process.argv[1]?.endsWith('gc-survivors.ts')) {
  try {
    main();
  } catch (e) {
    console.error(`gc-survivors: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
