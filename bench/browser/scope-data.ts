// The synthetic namespace of bench/ui-scope.ts: 5,000 nodes, as the server's snapshot holds them.
import type {
  ReferenceControllerEntity,
  ReferenceEntity,
  ReferentEntity,
  ReferrerEntity,
} from '../../lib/changelog/entities';
import type { Snapshot } from '../../lib/changelog/wire';

const GROUP = 'demo.refwatch.dev';
export const NAMESPACE = 'shop';
const APPS = 1667;
const REFERENTS_PER_KIND = { Database: 1110, Cache: 1110, Secret: 1110 }; // with the Apps and 3 controllers: 5,000 nodes

/** synthesize builds one namespace: Apps referring to two Databases, a Cache and a Secret each, a tenth of the referents not Ready. */
export function synthesize(now: number): { snapshot: Snapshot; nodes: number; edges: number } {
  const kindKey = (kind: string) => (kind === 'Secret' ? 'Secret' : `${kind}.${GROUP}`);
  const key = (kind: string, i: number) => `${kindKey(kind)}/${NAMESPACE}/${kind.toLowerCase()}-${i}`;
  const referents: ReferentEntity[] = [];
  for (const [kind, count] of Object.entries(REFERENTS_PER_KIND)) {
    for (let i = 0; i < count; i++) {
      const k = key(kind, i);
      referents.push({
        id: k,
        key: k,
        kind: kindKey(kind),
        namespace: NAMESPACE,
        state: i % 10 === 0 ? 'NotReady' : 'Ready',
        referencedBy: 0,
        changedAt: now - 60_000,
      });
    }
  }
  const controller = 'demo/watch';
  const referrers: ReferrerEntity[] = [];
  const references: ReferenceEntity[] = [];
  for (let i = 0; i < APPS; i++) {
    const app = `App.${GROUP}/${NAMESPACE}/app-${i}`;
    const refs: [string, string, string][] = [
      ['spec.databaseRef', key('Database', i % 1110), kindKey('Database')],
      ['spec.replicaDatabaseRef', key('Database', (i + 555) % 1110), kindKey('Database')],
      ['spec.cacheRef', key('Cache', i % 1110), kindKey('Cache')],
      ['spec.secretRef', key('Secret', i % 1110), 'Secret'],
    ];
    for (const [fieldPath, referent, kind] of refs)
      references.push({
        id: `${controller}|${app}|${referent}|${fieldPath}`,
        controller,
        referrer: app,
        referent,
        fieldPath,
        count: 1,
        kind,
        namespace: NAMESPACE,
      });
    const waiting = i % 4 === 0;
    referrers.push({
      id: `${controller}|${app}`,
      key: app,
      controller,
      kind: `App.${GROUP}`,
      namespace: NAMESPACE,
      state: waiting ? 'Waiting' : 'Resolved',
      ...(waiting ? { reason: refs[0]![1], message: `${refs[0]![1]} is not Ready` } : { resolvedAt: now - 30_000 }),
      since: now - 5_000,
      references: 4,
      reconciles: 2,
      lastReconcileAt: now - 5_000,
    });
  }
  const controllers: ReferenceControllerEntity[] = Object.entries(REFERENTS_PER_KIND).map(([kind, count]) => ({
    id: kindKey(kind),
    kind: kindKey(kind),
    state: 'Active',
    reason: 'watching',
    references: kind === 'Database' ? APPS * 2 : APPS,
    referents: count,
    startedAt: now - 120_000,
    primedAt: now - 119_000,
    primingMs: 1000,
    dispatches: 0,
    errors: [],
    history: [{ at: now - 119_000, state: 'Active', reason: 'primed' }],
  }));
  const snapshot: Snapshot = {
    revision: 10_000,
    cluster: { mode: 'embedded', server: 'https://127.0.0.1:6443', reachable: true, version: 'synthetic' },
    controllers,
    watches: [],
    referrers,
    referents,
    references,
    queues: [],
    events: [],
    stuck: [],
  };
  return { snapshot, nodes: APPS + referents.length + controllers.length, edges: references.length + referents.length };
}
