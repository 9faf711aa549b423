import type { DanglingKind } from '../../lib/demo/wire';
import { formatKey, parseApiVersion, type KubeObject, type ObjectKey } from '../../lib/model';
import type { DemoConfig } from './config';

export const DEMO_GROUP = 'demo.refwatch.dev';
export const DEMO_VERSION = 'v1alpha1';
export const DEMO_API_VERSION = `${DEMO_GROUP}/${DEMO_VERSION}`;
/** Every object a run makes carries this label, with the run's id as value. */
export const RUN_LABEL = 'demo.refwatch.dev/run';

/** The namespace that holds every object of one run. */
export function runNamespace(id: string): string {
  return `refwatch-demo-${id}`;
}

export type ReferentKind = 'Database' | 'Cache' | 'Secret';
export type { DanglingKind };
export const DANGLING_KINDS: readonly DanglingKind[] = ['typo', 'wrongNamespace', 'kindNotInstalled'];

/** The kind a kindNotInstalled reference names: no cluster serves it. */
export const UNINSTALLED_KIND = { apiVersion: 'db.example.com/v1', kind: 'PostgresDatabase' } as const;

export interface ObjectRefSpec {
  name: string;
  namespace?: string;
  kind?: string;
  apiVersion?: string;
}

export interface PlannedReferent {
  kind: ReferentKind;
  name: string;
  /** How long after the run's objects all exist the readiness simulator marks it Ready; Secrets are ready when created. */
  readyAfterMs: number;
}

export interface PlannedApp {
  name: string;
  spec: { databaseRef: ObjectRefSpec; cacheRef: ObjectRefSpec; secretRef: ObjectRefSpec };
  /** Which of its references points nowhere, if any: such an App never resolves. */
  dangling?: DanglingKind;
  /** The names of the referents it was meant to use. */
  database: string;
  cache: string;
  secret: string;
}

export interface Scenario {
  namespace: string;
  databases: PlannedReferent[];
  caches: PlannedReferent[];
  secrets: PlannedReferent[];
  apps: PlannedApp[];
}

/** mulberry32 is a small seeded PRNG: the same seed plans the same scenario. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function delay(config: DemoConfig, random: () => number): number {
  const d = config.readyAfter;
  if (d.distribution === 'fixed') return d.ms;
  return Math.round(d.minMs + random() * (d.maxMs - d.minMs));
}

export const databaseName = (i: number) => `orders-${i}`;
export const cacheName = (i: number) => `sessions-${i}`;
export const secretName = (i: number) => `credentials-${i}`;
/** A one-letter typo of a Database name, close enough for "did you mean" to find the right one. */
export const typoOf = (name: string) => name.replace('orders', 'ordrs');

/**
 * planScenario decides every object of a run: the referents with their
 * readiness delays, and the Apps with their references. App i uses Database
 * i mod databases (likewise Caches and Secrets). The dangling fractions pick
 * Apps at random; each such App's databaseRef points nowhere.
 */
export function planScenario(config: DemoConfig, namespace: string, seed: number): Scenario {
  const random = seededRandom(seed);
  const databases = Array.from({ length: config.databases }, (_, i): PlannedReferent => ({
    kind: 'Database',
    name: databaseName(i),
    readyAfterMs: delay(config, random),
  }));
  const caches = Array.from({ length: config.caches }, (_, i): PlannedReferent => ({
    kind: 'Cache',
    name: cacheName(i),
    readyAfterMs: delay(config, random),
  }));
  const secrets = Array.from({ length: config.secrets }, (_, i): PlannedReferent => ({
    kind: 'Secret',
    name: secretName(i),
    readyAfterMs: 0,
  }));

  const order = Array.from({ length: config.apps }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const danglingOf = new Map<number, DanglingKind>();
  let next = 0;
  for (const kind of DANGLING_KINDS) {
    const n = Math.round(config.apps * config.dangling[kind]);
    for (let k = 0; k < n && next < order.length; k++) danglingOf.set(order[next++]!, kind);
  }

  const apps = Array.from({ length: config.apps }, (_, i): PlannedApp => {
    const database = databaseName(i % config.databases);
    const cache = cacheName(i % config.caches);
    const secret = secretName(i % config.secrets);
    const dangling = danglingOf.get(i);
    let databaseRef: ObjectRefSpec = { name: database };
    if (dangling === 'typo') databaseRef = { name: typoOf(database) };
    else if (dangling === 'wrongNamespace') databaseRef = { name: database, namespace: 'default' };
    else if (dangling === 'kindNotInstalled') databaseRef = { ...UNINSTALLED_KIND, name: database };
    const app: PlannedApp = {
      name: `shop-${i}`,
      spec: { databaseRef, cacheRef: { name: cache }, secretRef: { name: secret } },
      database,
      cache,
      secret,
    };
    if (dangling) app.dangling = dangling;
    return app;
  });
  return { namespace, databases, caches, secrets, apps };
}

/** AppReference is one of an App's references, resolved to the referent's key. */
export interface AppReference {
  field: 'databaseRef' | 'cacheRef' | 'secretRef';
  fieldPath: string;
  group: string;
  /** The version the reference names; undefined means the group's preferred one. */
  version?: string;
  kind: string;
  namespace: string;
  name: string;
  key: ObjectKey;
}

const DEFAULT_KIND = { databaseRef: 'Database', cacheRef: 'Cache' } as const;

/**
 * appReferences reads an App's spec: databaseRef and cacheRef default to the
 * demo's Database and Cache, and may name another kind with kind/apiVersion;
 * secretRef is a core Secret. A namespace defaults to the App's own. Refs
 * that are absent or malformed are skipped.
 */
export function appReferences(app: KubeObject): AppReference[] {
  const spec = (app.spec ?? {}) as Record<string, unknown>;
  const own = app.metadata.namespace ?? '';
  const out: AppReference[] = [];
  for (const field of ['databaseRef', 'cacheRef', 'secretRef'] as const) {
    const ref = spec[field] as ObjectRefSpec | undefined | null;
    if (!ref || typeof ref !== 'object' || typeof ref.name !== 'string' || ref.name === '') continue;
    const namespace = typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : own;
    let group = '';
    let version: string | undefined = 'v1';
    let kind = 'Secret';
    if (field !== 'secretRef') {
      kind = typeof ref.kind === 'string' && ref.kind !== '' ? ref.kind : DEFAULT_KIND[field];
      group = DEMO_GROUP;
      version = undefined;
      if (typeof ref.apiVersion === 'string' && ref.apiVersion !== '') {
        const gv = parseApiVersion(ref.apiVersion, `spec.${field}.apiVersion`);
        if (!gv.ok) continue;
        group = gv.value.group;
        version = gv.value.version;
      }
    }
    out.push({
      field,
      fieldPath: `spec.${field}`,
      group,
      version,
      kind,
      namespace,
      name: ref.name,
      key: formatKey({ group, kind, namespace, name: ref.name }),
    });
  }
  return out;
}

/** referentManifest is the object the run creates for a planned referent. */
export function referentManifest(namespace: string, runId: string, r: PlannedReferent): KubeObject {
  const metadata = { name: r.name, namespace, labels: { [RUN_LABEL]: runId } };
  if (r.kind === 'Secret')
    return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', stringData: { password: 'demo' } };
  return { apiVersion: DEMO_API_VERSION, kind: r.kind, metadata, spec: { readyAfterMs: r.readyAfterMs } };
}

/** appManifest is the object the run creates for a planned App. */
export function appManifest(namespace: string, runId: string, a: PlannedApp): KubeObject {
  return {
    apiVersion: DEMO_API_VERSION,
    kind: 'App',
    metadata: { name: a.name, namespace, labels: { [RUN_LABEL]: runId } },
    spec: a.spec,
  };
}
