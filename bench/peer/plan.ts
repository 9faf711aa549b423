import { IMPLEMENTATIONS, type Implementation } from './peer-run';

/** One size of the plan: how many Apps, how many rounds, and which implementations run at it. */
export interface Size {
  apps: number;
  rounds: number;
  implementations: Implementation[];
}

/**
 * The default plan. 1,000 Apps, where the CPU and memory targets are set,
 * run five rounds: the CPU ratio is the median of the rounds' own ratios,
 * and controller-runtime's CPU alone moves by a fifth from round to round on
 * two shared cores, so the median of three rounds is decided by one. At
 * 5,000 Apps a run lasts two and a half minutes, and a stall of
 * kube-apiserver falls on whichever run is under way: one round judges the
 * machine, not refwatch. So 5,000 Apps run three rounds of the two
 * implementations whose ratios are judged there, and of the floor.
 */
export const DEFAULT_PLAN = '1000x5,5000x3@refwatch+cr-watch+raw-watch';

/**
 * parsePlan reads REFWATCH_PEER_PLAN: comma-separated APPSxROUNDS, each with
 * an optional @impl+impl to run only those implementations at that size.
 * Every size runs only implementations of `allowed` (REFWATCH_PEER_IMPLS).
 */
export function parsePlan(text: string, allowed: readonly Implementation[]): Size[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)x(\d+)(?:@([\w+-]+))?\s*$/.exec(part);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > 5000 || Number(m[2]) < 1) {
      throw new Error(
        `REFWATCH_PEER_PLAN: "${part}" is not APPSxROUNDS[@impl+impl] with 1 to 5000 Apps and at least 1 round, e.g. ${DEFAULT_PLAN}`,
      );
    }
    const named = m[3] ? parseImplementations(m[3].split('+'), 'REFWATCH_PEER_PLAN') : [...allowed];
    const implementations = named.filter((i) => allowed.includes(i));
    if (implementations.length === 0)
      throw new Error(
        `REFWATCH_PEER_PLAN: "${part}" runs none of REFWATCH_PEER_IMPLS (${allowed.join(', ')}): name one of them after @`,
      );
    return { apps: Number(m[1]), rounds: Number(m[2]), implementations };
  });
}

/** parseImplementations checks each name against the implementations the benchmark has. */
export function parseImplementations(names: readonly string[], field = 'REFWATCH_PEER_IMPLS'): Implementation[] {
  for (const n of names) {
    if (!(IMPLEMENTATIONS as readonly string[]).includes(n))
      throw new Error(`${field}: unknown implementation "${n}"; choose from ${IMPLEMENTATIONS.join(', ')}`);
  }
  return names as Implementation[];
}
