import {
  checkObject,
  referencesOf,
  ReferentCaches,
  type Finding,
  type ReferentLookup,
  type ReferentState,
} from '../admission';
import { SimilarNames } from '../diagnose/similar-names';
import { createLogger, SharedInformerPool, type KubeClient } from '../kube';
import { formatKey, groupOfApiVersion, kindKey, kindOfKey, splitKey, type KubeObject, type ObjectKey } from '../model';
import { kindInfoOf, observeRuleSet, type RuleSet } from '../rules';
import { CliError } from './errors';
import type { Manifest } from './manifests';

/** CheckFinding is a finding of one object of the set, with where the object was read. */
export interface CheckFinding extends Finding {
  file: string;
  document: number;
  object: ObjectKey;
}

export interface CheckResult {
  files: number;
  objects: number;
  findings: CheckFinding[];
  /** Referent kinds the cluster does not serve, or that could not be read and were not judged. */
  unjudged: string[];
  /** The cluster's ReferenceRules: what was read, and each bad object's problems (online only). */
  referenceRules?: { summary: string; problems: string[] };
}

/** Kinds that are cluster-scoped whatever the rules say; an object of these has no namespace. */
const CLUSTER_KINDS = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ClusterRole.rbac.authorization.k8s.io',
  'ClusterRoleBinding.rbac.authorization.k8s.io',
  'StorageClass.storage.k8s.io',
  'IngressClass.networking.k8s.io',
  'CustomResourceDefinition.apiextensions.k8s.io',
  'PriorityClass.scheduling.k8s.io',
  'ValidatingWebhookConfiguration.admissionregistration.k8s.io',
  'MutatingWebhookConfiguration.admissionregistration.k8s.io',
]);

/**
 * normalize gives each object of the set the namespace kubectl would apply it
 * to (its own, else the default namespace) and its key.
 */
export function normalize(rs: RuleSet, m: Manifest, namespace: string): { object: KubeObject; key: ObjectKey } {
  const gk = { group: groupOfApiVersion(m.object.apiVersion), kind: m.object.kind };
  const cluster = CLUSTER_KINDS.has(kindKey(gk)) || kindInfoOf(rs, gk)?.scope === 'Cluster';
  const ns = cluster ? '' : m.object.metadata.namespace || namespace;
  const object = { ...m.object, metadata: { ...m.object.metadata, namespace: ns } } as KubeObject;
  return { object, key: formatKey({ ...gk, namespace: ns, name: m.object.metadata.name }) };
}

/**
 * SetLookup answers for a change set: an object of the set counts as present
 * (it is about to be applied, in whatever order); anything else is asked of
 * the cluster's caches, or is missing offline. Close names come from both.
 */
export class SetLookup implements ReferentLookup {
  private readonly byKind = new Map<string, ObjectKey[]>();

  constructor(
    private readonly set: ReadonlyMap<ObjectKey, KubeObject>,
    private readonly cluster: ReferentLookup | undefined,
  ) {
    for (const key of set.keys()) {
      const kind = kindOfKey(key);
      const list = this.byKind.get(kind) ?? [];
      list.push(key);
      this.byKind.set(kind, list);
    }
  }

  lookup(referent: ObjectKey): ReferentState {
    const own = this.set.get(referent);
    if (own) return { state: 'found', object: own, readiness: { ready: true } };
    const fromCluster: ReferentState = this.cluster ? this.cluster.lookup(referent) : { state: 'missing', similar: [] };
    if (fromCluster.state !== 'missing') return fromCluster;
    const parts = splitKey(referent);
    const inSet = this.byKind.get(kindOfKey(referent));
    if (!parts || !inSet) return fromCluster;
    const similar = new SimilarNames(inSet).similarIn(parts.namespace, parts.name).matches.map((m) => m.name);
    return { state: 'missing', similar: [...new Set([...fromCluster.similar, ...similar])].slice(0, 3) };
  }
}

export interface RunCheckOptions {
  ruleSet: RuleSet;
  manifests: readonly Manifest[];
  namespace: string;
  /** The cluster, or undefined for --offline. */
  client?: KubeClient;
  /** Which kubeconfig and context, for messages. */
  where?: string;
  timeoutMs: number;
}

const POLL_MS = 10;

/**
 * runCheck judges every object of the set. Online, it watches only the
 * referent kinds the set names and leaves unsatisfied, waits until those
 * caches are primed, then answers; a kind it may not read, or a cluster it
 * cannot reach, is a CliError (exit 2), never a silent pass.
 */
export async function runCheck(opts: RunCheckOptions): Promise<CheckResult> {
  const { ruleSet } = opts;
  const set = new Map<ObjectKey, KubeObject>();
  const items = opts.manifests.map((m) => {
    const n = normalize(ruleSet, m, opts.namespace);
    set.set(n.key, n.object);
    return { m, ...n };
  });
  let pool: SharedInformerPool | undefined;
  let caches: ReferentCaches | undefined;
  const unjudged: string[] = [];
  try {
    if (opts.client) {
      const kinds = new Set<string>();
      for (const it of items)
        for (const ref of referencesOf(ruleSet, it.object))
          if (!set.has(ref.referent)) kinds.add(kindOfKey(ref.referent));
      const observer = observeRuleSet(ruleSet);
      pool = new SharedInformerPool({ client: opts.client, logger: createLogger({ level: 'silent' }) });
      caches = new ReferentCaches({ source: pool, readiness: (k) => observer.readiness(k) });
      caches.prime(kinds);
      await waitPrimed(caches, pool, kinds, opts, unjudged);
    }
    const lookup = new SetLookup(set, caches);
    const findings: CheckFinding[] = [];
    for (const it of items)
      for (const f of checkObject(ruleSet, lookup, it.object, { yet: false }))
        findings.push({ ...f, file: it.m.file, document: it.m.document, object: it.key });
    return { files: new Set(opts.manifests.map((m) => m.file)).size, objects: items.length, findings, unjudged };
  } finally {
    await caches?.stop();
    await pool?.stop();
  }
}

async function waitPrimed(
  caches: ReferentCaches,
  pool: SharedInformerPool,
  kinds: ReadonlySet<string>,
  opts: RunCheckOptions,
  unjudged: string[],
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const waiting: string[] = [];
    for (const kind of kinds) {
      if (caches.isPrimed(kind) || unjudged.includes(kind)) continue;
      const status = pool.watches().find((w) => kindKey(w.target) === kind && w.target.namespace === undefined);
      const error = status?.lastError;
      if (error?.reason === 'KindUnknown') unjudged.push(kind);
      else if (error && error.reason !== 'Throttled' && error.reason !== 'Expired') {
        const why = error.message.replace(/; retrying in .*$/, '');
        throw new CliError(`cannot read ${kind} (${opts.where ?? 'the cluster'}): ${why}`);
      } else waiting.push(kind);
    }
    if (waiting.length === 0) return;
    if (Date.now() > deadline)
      throw new CliError(
        `no answer within --timeout ${opts.timeoutMs / 1000}s: still listing ${waiting.join(', ')} (${opts.where ?? 'the cluster'})`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
