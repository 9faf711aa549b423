import type { Snapshot } from '../changelog';
import type { KubeTransport } from '../kube';
import { groupOfApiVersion, kindOfKey, namespaceOfKey, parseKindKey } from '../model';
import { CliError, describeCause } from './errors';
import { matchResource, type DiscoveredResource, type ResolvedKind } from './object-arg';

/** KindCatalog resolves TYPE (`pod`, `po`, `apps.demo.refwatch.dev`, `App`) to a kind. */
export interface KindCatalog {
  resolve(type: string): Promise<ResolvedKind>;
}

interface ResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; singularName?: string; shortNames?: string[] }[];
}
interface GroupList {
  groups: { name: string; preferredVersion?: { groupVersion: string }; versions: { groupVersion: string }[] }[];
}

function rowsOf(list: ResourceList): DiscoveredResource[] {
  const group = groupOfApiVersion(list.groupVersion);
  return list.resources
    .filter((r) => !r.name.includes('/'))
    .map((r) => ({
      group,
      kind: r.kind,
      namespaced: r.namespaced,
      resource: r.name,
      singularName: r.singularName || undefined,
      shortNames: r.shortNames,
    }));
}

function pick(type: string, matches: DiscoveredResource[], where: string): ResolvedKind {
  const m = matches[0];
  if (!m)
    throw new CliError(
      `argument OBJECT: the ${where} serves no resource type "${type}"; list them with kubectl api-resources, or give a key such as Pod/shop/web`,
    );
  return { group: m.group, kind: m.kind, namespaced: m.namespaced };
}

/**
 * DiscoveryKinds reads the API server's discovery documents, as kubectl
 * does: the core group first, then only the group TYPE names, or every
 * group's preferred version when TYPE names none.
 */
export class DiscoveryKinds implements KindCatalog {
  constructor(
    private readonly client: Pick<KubeTransport, 'getJSON' | 'server'>,
    private readonly where: string,
  ) {}

  async resolve(type: string): Promise<ResolvedKind> {
    if (/^[A-Z]/.test(type)) {
      // A kind key (`App.demo.refwatch.dev`): still ask discovery, for its scope and to catch a kind not installed.
      const gk = parseKindKey(type, 'OBJECT kind');
      if (!gk.ok) throw new CliError(`argument ${gk.error.message}`);
    }
    const dot = type.indexOf('.');
    const core = dot < 0 ? matchResource(rowsOf(await this.get<ResourceList>('/api/v1')), type) : [];
    if (core.length > 0) return pick(type, core, this.where);
    const groups = await this.get<GroupList>('/apis');
    const wanted = dot < 0 ? undefined : type.slice(dot + 1).toLowerCase();
    const candidates = groups.groups.filter(
      (g) => wanted === undefined || g.name === wanted || g.name.startsWith(wanted + '.'),
    );
    const lists = await Promise.all(
      candidates.map((g) =>
        this.get<ResourceList>(`/apis/${(g.preferredVersion ?? g.versions[0])!.groupVersion}`).catch(() => undefined),
      ),
    );
    const rows = lists.flatMap((l) => (l ? rowsOf(l) : []));
    return pick(type, matchResource(rows, type), this.where);
  }

  private async get<T>(path: string): Promise<T> {
    try {
      return await this.client.getJSON<T>(path);
    } catch (e) {
      throw new CliError(`cannot reach the cluster (${this.where}): ${describeCause(e)}`);
    }
  }
}

/**
 * SnapshotKinds resolves TYPE against the kinds a refwatch server knows: the
 * referrers', referents' and reference controllers' kinds in its snapshot.
 * A kind's plural is guessed (`databases`, `policies`); short names are not
 * known without discovery, so the error suggests the kinds it has.
 */
export class SnapshotKinds implements KindCatalog {
  constructor(private readonly snapshot: () => Promise<Pick<Snapshot, 'referrers' | 'referents' | 'controllers'>>) {}

  async resolve(type: string): Promise<ResolvedKind> {
    const s = await this.snapshot();
    const scope = new Map<string, boolean>();
    const note = (key: string) =>
      scope.set(kindOfKey(key), namespaceOfKey(key) !== '' || scope.get(kindOfKey(key)) === true);
    for (const r of s.referrers) note(r.key);
    for (const r of s.referents) note(r.key);
    for (const c of s.controllers) if (!scope.has(c.kind)) scope.set(c.kind, true);
    const rows: DiscoveredResource[] = [];
    for (const [kindKey, namespaced] of scope) {
      const gk = parseKindKey(kindKey);
      if (gk.ok)
        rows.push({
          ...gk.value,
          namespaced,
          resource: pluralOf(gk.value.kind.toLowerCase()),
          singularName: gk.value.kind.toLowerCase(),
        });
    }
    const m = matchResource(rows, type)[0];
    if (!m) {
      const known = [...scope.keys()].sort().join(', ') || 'none yet';
      throw new CliError(
        `argument OBJECT: the server knows no kind "${type}"; it knows ${known}; give a key such as Pod/shop/web`,
      );
    }
    return { group: m.group, kind: m.kind, namespaced: m.namespaced };
  }
}

/** pluralOf guesses a resource's plural the way CRDs and built-in kinds mostly spell it. */
export function pluralOf(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return singular + 'es';
  if (/[^aeiou]y$/.test(singular)) return singular.slice(0, -1) + 'ies';
  return singular + 's';
}
