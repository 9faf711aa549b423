import type { ChangeFilter, ClusterInfo, Snapshot, StuckEntry } from '../lib/changelog';

interface SnapshotSource {
  changelog: { snapshot(filter?: ChangeFilter): { revision: number; entities: Partial<Record<string, unknown[]>> } };
}

/**
 * buildSnapshot assembles the API snapshot from the change log at its current revision.
 * `stuckThresholdMs` is the threshold `stuck` was computed with; the dashboard applies the same one between snapshots.
 */
export function buildSnapshot(src: SnapshotSource, cluster: ClusterInfo, stuck: StuckEntry[], filter: ChangeFilter = {}, stuckThresholdMs?: number): Snapshot {
  const { revision, entities: e } = src.changelog.snapshot(filter);
  const list = <T>(k: string) => (e[k] ?? []) as T[];
  return {
    revision,
    cluster,
    controllers: list('controller'),
    watches: list('watch'),
    referrers: list('referrer'),
    referents: list('referent'),
    references: list('reference'),
    queues: list('queue'),
    events: list('event'),
    stuck,
    ...(stuckThresholdMs !== undefined ? { stuckThresholdMs } : {}),
  };
}

// Entity values in the change log are immutable once put, so each one's JSON
// can be kept until the value is replaced (then the WeakMap lets it go).
const jsonOf = new WeakMap<object, string>();

function entityJson(value: object): string {
  let s = jsonOf.get(value);
  if (s === undefined) {
    s = JSON.stringify(value);
    jsonOf.set(value, s);
  }
  return s;
}

const ENTITY_FIELDS = ['controllers', 'watches', 'referrers', 'referents', 'references', 'queues', 'events'] as const;

/**
 * snapshotJson serializes a snapshot as JSON.stringify would, reusing each
 * unchanged entity's JSON from earlier snapshots: on a large registry most of
 * a snapshot's cost is serializing entities that did not change since the last one.
 */
export function snapshotJson(s: Snapshot): string {
  const parts: string[] = [`{"revision":${s.revision},"cluster":${JSON.stringify(s.cluster)}`];
  for (const field of ENTITY_FIELDS) {
    const values = s[field] as object[];
    const items = new Array<string>(values.length);
    for (let i = 0; i < values.length; i++) items[i] = entityJson(values[i]!);
    parts.push(`,"${field}":[${items.join(',')}]`);
  }
  parts.push(`,"stuck":${JSON.stringify(s.stuck)}`);
  for (const [k, v] of Object.entries(s)) {
    if (k === 'revision' || k === 'cluster' || k === 'stuck' || (ENTITY_FIELDS as readonly string[]).includes(k) || v === undefined) continue;
    parts.push(`,${JSON.stringify(k)}:${JSON.stringify(v)}`);
  }
  parts.push('}');
  return parts.join('');
}
