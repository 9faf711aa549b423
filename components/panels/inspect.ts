import type { ReferenceControllerEntity, ReferentEntity, ReferrerEntity } from '@/lib/changelog/entities';
import type { Snapshot, StuckEntry } from '@/lib/changelog/wire';

export interface OutgoingReference {
  fieldPath: string;
  referent: string;
  count: number;
  /** The referent as the cache sees it; absent when not observed yet. */
  referentEntity?: ReferentEntity;
}

export interface IncomingReference {
  fieldPath: string;
  referrer: string;
  controller: string;
}

/** ObjectDetails gathers what the snapshot knows about one object key, for the inspector. */
export interface ObjectDetails {
  key: string;
  referrers: ReferrerEntity[];
  referent?: ReferentEntity;
  outgoing: OutgoingReference[];
  incoming: IncomingReference[];
  stuck?: StuckEntry;
  controller?: ReferenceControllerEntity;
}

export function objectDetails(snapshot: Snapshot, key: string): ObjectDetails {
  const referents = new Map(snapshot.referents.map((r) => [r.key, r]));
  const outgoing: OutgoingReference[] = [];
  const incoming: IncomingReference[] = [];
  for (const ref of snapshot.references) {
    if (ref.referrer === key) {
      const referentEntity = referents.get(ref.referent);
      outgoing.push({
        fieldPath: ref.fieldPath,
        referent: ref.referent,
        count: ref.count,
        ...(referentEntity ? { referentEntity } : {}),
      });
    }
    if (ref.referent === key)
      incoming.push({ fieldPath: ref.fieldPath, referrer: ref.referrer, controller: ref.controller });
  }
  outgoing.sort((a, b) => a.fieldPath.localeCompare(b.fieldPath));
  incoming.sort((a, b) => a.referrer.localeCompare(b.referrer));
  const referent = referents.get(key);
  const stuck = snapshot.stuck.find((s) => s.key === key);
  const controller = referent ? snapshot.controllers.find((c) => c.kind === referent.kind) : undefined;
  return {
    key,
    referrers: snapshot.referrers.filter((r) => r.key === key),
    ...(referent ? { referent } : {}),
    outgoing,
    incoming,
    ...(stuck ? { stuck } : {}),
    ...(controller ? { controller } : {}),
  };
}
