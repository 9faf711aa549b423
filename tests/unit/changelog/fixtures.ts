import type { EventEntity, QueueEntity, ReferenceEntity, ReferentEntity } from '@/lib/changelog';

/** A Database referent in `namespace`, in the given state. */
export function referent(namespace: string, name: string, state: ReferentEntity['state'] = 'Ready'): ReferentEntity {
  const key = `Database.demo.refwatch.dev/${namespace}/${name}`;
  return {
    id: key,
    key,
    kind: 'Database.demo.refwatch.dev',
    namespace,
    state,
    referencedBy: 1,
    changedAt: 1_700_000_000_000,
  };
}

export function reference(namespace: string, app: string, db: string, count = 1): ReferenceEntity {
  const referrer = `App.demo.refwatch.dev/${namespace}/${app}`;
  const referentKey = `Database.demo.refwatch.dev/${namespace}/${db}`;
  return {
    id: `apps|${referrer}|${referentKey}|spec.databaseRef`,
    controller: 'apps',
    referrer,
    referent: referentKey,
    fieldPath: 'spec.databaseRef',
    count,
    kind: 'Database.demo.refwatch.dev',
    namespace,
  };
}

export function event(id: string, namespace = 'shop'): EventEntity {
  return {
    id,
    at: 1_700_000_000_000,
    type: 'Resolved',
    message: `App ${id} resolved`,
    kind: 'App.demo.refwatch.dev',
    namespace,
  };
}

export function queue(controller: string, depth = 0): QueueEntity {
  return {
    id: controller,
    controller,
    depth,
    processing: 0,
    adds: 0,
    retries: 0,
    reconciles: 0,
    errors: 0,
    workers: 1,
    longestRunningMs: 0,
  };
}
