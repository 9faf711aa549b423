import type { AnyEntity, ChangeLog, EntityKind, ReferrerEntity, Summary, SummaryGroup } from '../lib/changelog';
import { longerStuck } from '../lib/diagnose';
import { keepFirst } from '../lib/diagnose/ranked';

export type { Summary, SummaryGroup, SummaryStuck } from '../lib/changelog';

export interface SummaryOptions {
  stuckThresholdMs: number;
  /** How many stuck referrers the summary lists. Default 50. */
  stuckListLimit?: number;
  now?: () => number;
}

type Counts = Omit<SummaryGroup, 'name'>;

/** The longest one call spends moving referrers into stuck; the rest continue on the next turn of the event loop. */
const PROMOTE_BUDGET_MS = 10;

function emptyCounts(): Counts {
  return {
    referrers: 0,
    states: { Resolved: 0, Waiting: 0, NotFound: 0, NoMatch: 0, Error: 0 },
    references: 0,
    stuck: 0,
    stuckReferences: 0,
  };
}

/**
 * ReferrerSummary keeps the overview's counts per namespace and per kind,
 * updated from every change as the change log stores it, so a summary costs
 * the number of groups, not the number of references. Stuck is a matter of
 * time: unresolved referrers wait in a heap ordered by when they became
 * unresolved and are counted stuck once the threshold has passed.
 */
export class ReferrerSummary {
  readonly #changelog: ChangeLog;
  readonly #thresholdMs: number;
  readonly #limit: number;
  readonly #now: () => number;
  readonly #namespaces = new Map<string, Counts>();
  readonly #kinds = new Map<string, Counts>();
  readonly #totals = emptyCounts();
  /** Unresolved referrers not yet stuck, by `since`; an entry is stale once its referrer changed. */
  readonly #pending = new MinHeap<{ id: string; value: ReferrerEntity }>((a, b) => a.value.since - b.value.since);
  /** Stuck referrers by id, with the value they were counted with. */
  readonly #stuck = new Map<string, ReferrerEntity>();
  /**
   * The `limit` stuck longest, oldest first (what oldest() gives), kept as
   * referrers become stuck; undefined once one of them leaves, until the next
   * summary picks them again. A referrer that changes leaves stuck, and it is
   * rarely one of the oldest fifty: most summaries pass over no stuck list.
   */
  #oldest: ReferrerEntity[] | undefined = [];
  #referents = 0;
  #version = 0;
  /** The last summary built, while the counts it shows are current. */
  #built: { version: number; summary: Summary } | undefined;
  readonly #unobserve: () => void;
  /** A promotion left over from a call that used its budget. */
  #resume: ReturnType<typeof setImmediate> | undefined;

  constructor(changelog: ChangeLog, opts: SummaryOptions) {
    this.#changelog = changelog;
    this.#thresholdMs = opts.stuckThresholdMs;
    this.#limit = opts.stuckListLimit ?? 50;
    this.#now = opts.now ?? Date.now;
    // Entities stored before this summary existed count too.
    const { entities } = changelog.snapshot({ entities: ['referrer', 'reference', 'referent'] });
    for (const r of entities.referrer) this.#apply('referrer', r.id, undefined, r);
    for (const r of entities.reference) this.#apply('reference', r.id, undefined, r);
    for (const r of entities.referent) this.#apply('referent', r.id, undefined, r);
    this.#unobserve = changelog.observe((entity, id, previous, next) => this.#apply(entity, id, previous, next));
  }

  /** Bumped on every change to the counts; callers compare it to know whether to send a new summary. */
  get version(): number {
    this.#promote();
    return this.#version;
  }

  /** Whether `id` (a referrer id) is stuck now. */
  isStuck(id: string): boolean {
    this.#promote();
    return this.#stuck.has(id);
  }

  /** The stuck referrers now, in no particular order. */
  stuckReferrers(): Iterable<ReferrerEntity> {
    this.#promote();
    return this.#stuck.values();
  }

  /** The summary now; built once per change of the counts, however many ask. Callers must not mutate it. */
  summary(): Summary {
    this.#promote();
    if (this.#built?.version === this.#version && this.#built.summary.revision === this.#changelog.revision)
      return this.#built.summary;
    const summary = this.#build();
    this.#built = { version: this.#version, summary };
    return summary;
  }

  #build(): Summary {
    const groups = (m: Map<string, Counts>) => [...m].map(([name, c]) => ({ name, ...copy(c) })).sort(byAttention);
    this.#oldest ??= oldest(this.#stuck.values(), this.#limit);
    const stuckList = this.#oldest.map((r) => ({
      key: r.key,
      controller: r.controller,
      namespace: r.namespace,
      kind: r.kind,
      state: r.state,
      since: r.since,
      ...(r.reason ? { reason: r.reason } : {}),
    }));
    return {
      revision: this.#changelog.revision,
      stuckThresholdMs: this.#thresholdMs,
      totals: { ...copy(this.#totals), referents: this.#referents },
      namespaces: groups(this.#namespaces),
      kinds: groups(this.#kinds),
      stuckList,
    };
  }

  /** Stops following the change log. */
  stop(): void {
    if (this.#resume !== undefined) clearImmediate(this.#resume);
    this.#resume = undefined;
    this.#unobserve();
  }

  #apply(entity: EntityKind, id: string, previous: AnyEntity | undefined, next: AnyEntity | undefined): void {
    if (entity === 'referent') {
      this.#referents += (next ? 1 : 0) - (previous ? 1 : 0);
      return;
    }
    if (entity === 'reference') {
      if (previous) this.#addReferences(previous as { namespace: string; kind: string; count: number }, -1);
      if (next) this.#addReferences(next as { namespace: string; kind: string; count: number }, 1);
      this.#version++;
      return;
    }
    if (entity !== 'referrer') return;
    if (previous) this.#addReferrer(previous as ReferrerEntity, -1);
    const wasStuck = this.#stuck.get(id);
    if (wasStuck) {
      this.#addStuck(wasStuck, -1);
      this.#stuck.delete(id);
      if (this.#oldest?.includes(wasStuck)) this.#oldest = undefined;
    }
    if (next) {
      const r = next as ReferrerEntity;
      this.#addReferrer(r, 1);
      if (r.state !== 'Resolved') this.#pending.push({ id, value: r });
    }
    this.#version++;
  }

  /**
   * Moves referrers past the threshold from pending to stuck; stale heap
   * entries are dropped on the way. At most PROMOTE_BUDGET_MS per call: when a
   * hundred thousand referrers pass the threshold together, the rest follow
   * in later turns of the event loop instead of holding it (each one bumps the
   * version, so the feed sends the counts as they grow).
   */
  #promote(): void {
    // Its budget for this turn is spent: the continuation goes on at the next one.
    if (this.#resume !== undefined) return;
    const cutoff = this.#now() - this.#thresholdMs;
    const started = performance.now();
    let n = 0;
    for (let top = this.#pending.peek(); top !== undefined && top.value.since <= cutoff; top = this.#pending.peek()) {
      if (++n % 256 === 0 && performance.now() - started > PROMOTE_BUDGET_MS) {
        this.#resume ??= setImmediate(() => {
          this.#resume = undefined;
          this.#promote();
        });
        return;
      }
      this.#pending.pop();
      if (this.#changelog.get('referrer', top.id) !== top.value || this.#stuck.has(top.id)) continue; // changed since it was queued
      this.#stuck.set(top.id, top.value);
      if (this.#oldest) keepFirst(this.#oldest, top.value, this.#limit, longerStuck);
      this.#addStuck(top.value, 1);
      this.#version++;
    }
  }

  #groups(namespace: string, kind: string): Counts[] {
    return [this.#totals, group(this.#namespaces, namespace), group(this.#kinds, kind)];
  }

  #addReferrer(r: ReferrerEntity, sign: 1 | -1): void {
    for (const c of this.#groups(r.namespace, r.kind)) {
      c.referrers += sign;
      c.states[r.state] = (c.states[r.state] ?? 0) + sign;
    }
    this.#prune(r.namespace, r.kind);
  }

  #addReferences(r: { namespace: string; kind: string; count: number }, sign: 1 | -1): void {
    for (const c of this.#groups(r.namespace, r.kind)) c.references += sign * r.count;
    this.#prune(r.namespace, r.kind);
  }

  #addStuck(r: ReferrerEntity, sign: 1 | -1): void {
    for (const c of this.#groups(r.namespace, r.kind)) {
      c.stuck += sign;
      c.stuckReferences += sign * r.references;
    }
    this.#prune(r.namespace, r.kind);
  }

  /** Forgets a group once nothing is left in it. */
  #prune(namespace: string, kind: string): void {
    for (const [m, name] of [
      [this.#namespaces, namespace],
      [this.#kinds, kind],
    ] as const) {
      const c = m.get(name);
      if (c && c.referrers === 0 && c.references === 0 && c.stuck === 0) m.delete(name);
    }
  }
}

function group(m: Map<string, Counts>, name: string): Counts {
  let c = m.get(name);
  if (c === undefined) m.set(name, (c = emptyCounts()));
  return c;
}

function copy(c: Counts): Counts {
  return { ...c, states: { ...c.states } };
}

function unresolved(g: Counts): number {
  return g.referrers - g.states.Resolved;
}

/** Stuck first, then unresolved, then the most references, then by name. */
function byAttention(a: SummaryGroup, b: SummaryGroup): number {
  return (
    b.stuck - a.stuck ||
    unresolved(b) - unresolved(a) ||
    b.references - a.references ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

/** A binary min-heap; the summary's queue of referrers that may become stuck. */
class MinHeap<T> {
  readonly #items: T[] = [];
  constructor(readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const a = this.#items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (this.compare(a[i]!, a[parent]!) >= 0) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.#items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.compare(a[l]!, a[m]!) < 0) m = l;
        if (r < a.length && this.compare(a[r]!, a[m]!) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

/**
 * oldest picks the `limit` referrers stuck longest, in that order, in one pass
 * that keeps only those: sorting every stuck referrer (a hundred thousand on a
 * big cluster) to keep fifty would hold the event loop for each summary.
 */
export function oldest(values: Iterable<ReferrerEntity>, limit: number): ReferrerEntity[] {
  const out: ReferrerEntity[] = [];
  for (const r of values) keepFirst(out, r, limit, longerStuck);
  return out;
}
