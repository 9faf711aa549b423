import { KubeRequestError, type KubeClient } from '../kube';
import { readReferenceRules, type RulesDocument } from '../rules';

/** ClusterRulesRead is what a headless command took from the cluster's ReferenceRules objects. */
export interface ClusterRulesRead {
  /** The valid objects' documents, in namespace/name order: they join the packs and --rules files. */
  documents: RulesDocument[];
  /** What is wrong with each invalid object, naming the field; such an object adds nothing. */
  problems: string[];
  /** One line for the summary: how many were read, or why none were. */
  summary: string;
}

const LIST_PATH = '/apis/refwatch.dev/v1alpha1/referencerules';

interface ListedRules {
  items?: { metadata?: { name?: string; namespace?: string }; spec?: unknown }[];
}

/**
 * readClusterRules lists the cluster's ReferenceRules once, as the server's
 * watch would read them. A cluster that does not serve them, or a user RBAC
 * does not let list them, gives no rules and says why; nothing here fails a
 * command, which goes on with the packs and --rules files.
 */
export async function readClusterRules(client: KubeClient, timeoutMs: number): Promise<ClusterRulesRead> {
  let list: ListedRules;
  try {
    list = await client.getJSON<ListedRules>(LIST_PATH, {}, AbortSignal.timeout(timeoutMs));
  } catch (e) {
    const none = { documents: [], problems: [] };
    if (e instanceof KubeRequestError && e.status === 404)
      return {
        ...none,
        summary:
          'ReferenceRules: none read, the cluster does not serve refwatch.dev/v1alpha1 referencerules (no CRD); only the packs and --rules files apply',
      };
    if (e instanceof KubeRequestError && e.status === 403)
      return {
        ...none,
        summary: `ReferenceRules: not read (Forbidden): ${client.redact(e.message)}; grant apiGroups: ["refwatch.dev"], resources: ["referencerules"], verbs: ["list"]; only the packs and --rules files apply`,
      };
    const message = e instanceof Error ? e.message : String(e);
    return {
      ...none,
      summary: `ReferenceRules: not read: ${client.redact(message)}; only the packs and --rules files apply`,
    };
  }
  const objects = (list.items ?? [])
    .map((o) => ({ id: `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, spec: o.spec }))
    .sort((a, b) => a.id.localeCompare(b.id));
  const documents: RulesDocument[] = [];
  const problems: string[] = [];
  for (const o of objects) {
    const r = readReferenceRules(o.id, o.spec);
    if (r.ok) documents.push(r.doc);
    else problems.push(...r.problems);
  }
  const rejected = objects.length - documents.length;
  return {
    documents,
    problems,
    summary: `ReferenceRules: ${objects.length} read from the cluster, ${documents.length} applied${rejected > 0 ? `, ${rejected} rejected (see the warnings)` : ''}`,
  };
}
