import type { PlannedApp } from '../../server/demo/scenario';
import { resolutionLatency } from '../../server/demo/stats';

/** One App's resolution: when its last referent became Ready (epoch ms) and how long it then took, ms. */
export interface LatencySample {
  readyAt: number;
  latencyMs: number;
  /**
   * How long the server took to answer the generator's patch that made that referent Ready, ms: a late App whose
   * write was slow too met a stall before any controller saw its event. Undefined when the last was a Secret,
   * which is created, not patched.
   */
  writeMs: number | undefined;
  /**
   * How long after readyAt that referent's Ready event reached the generator's own watch of its kind, ms: when the
   * server first told a watcher. Undefined when the last was a Secret, or its event was never seen.
   */
  seenMs: number | undefined;
}

/** What the generator saw of a run, keyed by App name or by Kind/name of a referent; all epoch ms. */
export interface Observed {
  /** When each referent became Ready: a Database's or Cache's status.readyAt, a Secret's create. */
  readyAt: ReadonlyMap<string, number>;
  /** Each App's status.resolvedAt, stamped by the implementation under test. */
  resolved: ReadonlyMap<string, number>;
  /** When each Database's and Cache's Ready event reached the generator's own watch of its kind. */
  seen: ReadonlyMap<string, number>;
  /** How long the server took to answer each readiness patch, ms. */
  writeMs: ReadonlyMap<string, number>;
}

export interface AppTimings {
  /** resolvedAt − the last referent's readyAt of each resolved App, ms, ascending. */
  latencies: number[];
  /** Each resolved App's last referent's readyAt (epoch ms) and its latency, in the Apps' order. */
  samples: LatencySample[];
  /** latencies plus, for each unresolved App, how long it had waited at the end (a lower bound), ascending. */
  censored: number[];
  /**
   * resolvedAt − when the last referent's Ready event reached the generator's own watch, ms, ascending: how long
   * the implementation took once the server had told a watcher. An unresolved App counts as at the end, as in
   * `censored`. Below 0 when the implementation's watch heard of the event first. An App whose last referent
   * was a Secret (Ready once created, and not watched) or whose event was never seen is timed from readyAt.
   */
  reactions: number[];
}

/**
 * timeApps works out each App's latency and reaction from what the generator
 * observed. An App is timed from the referent that became Ready last; one
 * still waiting at `end` counts as resolved then, in `censored` and
 * `reactions` only. An App with a referent never Ready is not timed.
 */
export function timeApps(apps: readonly PlannedApp[], o: Observed, end: number): AppTimings {
  const t: AppTimings = { latencies: [], samples: [], censored: [], reactions: [] };
  for (const a of apps) {
    const keys = [`Database/${a.database}`, `Cache/${a.cache}`, `Secret/${a.secret}`];
    const needs = keys.map((k) => o.readyAt.get(k));
    const at = o.resolved.get(a.name);
    const l = resolutionLatency(at ?? end, needs);
    if (l === undefined) continue;
    const readyAt = (at ?? end) - l;
    const last = keys[needs.indexOf(readyAt)]!;
    const seenAt = o.seen.get(last);
    t.censored.push(l);
    t.reactions.push(seenAt === undefined ? l : (at ?? end) - seenAt);
    if (at === undefined) continue;
    t.latencies.push(l);
    t.samples.push({
      readyAt,
      latencyMs: l,
      writeMs: o.writeMs.get(last),
      seenMs: seenAt === undefined ? undefined : seenAt - readyAt,
    });
  }
  for (const xs of [t.latencies, t.censored, t.reactions]) xs.sort((x, y) => x - y);
  return t;
}
