import type { ChangeFilter, ClusterInfo, Snapshot, StuckEntry } from '../lib/changelog';

interface SnapshotSource {
  changelog: { snapshot(filter?: ChangeFilter): { revision: number; entities: Partial<Record<string, unknown[]>> } };
}

/** buildSnapshot assembles the API snapshot from the change log at its current revision. */
export function buildSnapshot(src: SnapshotSource, cluster: ClusterInfo, stuck: StuckEntry[], filter: ChangeFilter = {}): Snapshot {
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
  };
}
