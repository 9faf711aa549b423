import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { builtinRuleSet, PACK_NAMES, type PackName } from '@/lib/rules';
import {
  SERVER_RULES,
  clusterRoleRules,
  generatedFiles,
  grantsFor,
  serverRules,
  type PolicyRule,
} from '@/scripts/rbac';

const root = path.resolve(import.meta.dirname, '../../..');

/** Every subset of the built-in packs, the empty one included. */
const subsets: PackName[][] = Array.from({ length: 1 << PACK_NAMES.length }, (_, bits) =>
  PACK_NAMES.filter((_, i) => bits & (1 << i)),
);

/**
 * watchedKinds reads the kinds a set of packs makes refwatch watch from the
 * compiled rule set the server runs: referrer kinds, the referent kinds name
 * selector and lookup rules and conventions name (and Namespaces for a namespace selector), and the `kinds` table. Kinds named for any group
 * (`ProviderConfig.*`) or whose group comes from the referrer cannot be granted
 * without a wildcard and are left to rbac.extraRules.
 */
function watchedKinds(packs: PackName[]): Set<string> {
  const rs = builtinRuleSet(packs);
  const out = new Set<string>();
  const add = (group: unknown, kind: string | undefined) => {
    if (kind !== undefined && typeof group === 'string') out.add(`${group}/${kind}`);
  };
  for (const gk of rs.referrerKinds) add(gk.group, gk.kind);
  for (const refs of rs.rules.values()) for (const r of refs) add(r.group, r.kind);
  for (const sels of rs.selectors.values())
    for (const s of sels) {
      add(s.referent.group, s.referent.kind);
      // A namespace selector in label form reads the Namespaces' labels.
      if (s.namespaceSelector) add('', 'Namespace');
    }
  for (const lookups of rs.lookups.values()) for (const l of lookups) add(l.referent.group, l.referent.kind);
  for (const c of rs.conventions) for (const t of c.fields.values()) add(t.group, t.kind);
  for (const key of rs.kinds.keys()) {
    const dot = key.indexOf('.');
    const [kind, group] = dot < 0 ? [key, ''] : [key.slice(0, dot), key.slice(dot + 1)];
    if (group !== '*') add(group, kind);
  }
  return out;
}

/** isPluralOf: the REST resource is the kind's lowercase plural (pods, ingresses, gatewayclasses, policies). */
function isPluralOf(resource: string, kind: string): boolean {
  const k = kind.toLowerCase();
  return resource === `${k}s` || resource === `${k}es` || (k.endsWith('y') && resource === `${k.slice(0, -1)}ies`);
}

function flatten(rules: PolicyRule[]): string[] {
  return rules
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res} ${r.verbs.join(',')}`)))
    .sort();
}

describe('ClusterRole derived from the rule packs', () => {
  it.each(subsets.map((s) => [s.join('+') || 'no packs', s] as const))(
    '%s: get/list/watch on every watched kind and nothing else',
    (_name, packs) => {
      const rules = clusterRoleRules(grantsFor(packs));
      for (const r of rules) {
        expect(r.verbs).toEqual(['get', 'list', 'watch']);
        expect([...r.apiGroups, ...r.resources]).not.toContain('*');
      }
      const granted = rules.flatMap((r) => r.resources.map((resource) => ({ group: r.apiGroups[0]!, resource })));
      const kinds = watchedKinds(packs);
      for (const gk of kinds) {
        const [group, kind] = gk.split('/') as [string, string];
        expect(
          granted.some((g) => g.group === group && isPluralOf(g.resource, kind)),
          `no rule grants ${kind} in group '${group}'`,
        ).toBe(true);
      }
      // One resource per watched kind: no rule beyond what the packs watch.
      expect(granted).toHaveLength(kinds.size);
      expect(new Set(granted.map((g) => `${g.group}/${g.resource}`)).size).toBe(granted.length);
    },
  );

  it('grants Secrets only with a pack that names Secret', () => {
    for (const packs of subsets) {
      const names = [...watchedKinds(packs)].some((k) => k === '/Secret');
      expect(grantsFor(packs).some((g) => g.apiGroup === '' && g.resource === 'secrets')).toBe(names);
    }
  });

  it('the committed files are what scripts/rbac.ts generates (run `npx tsx scripts/rbac.ts` after changing a pack)', () => {
    for (const [file, text] of Object.entries(generatedFiles()))
      expect(readFileSync(path.join(root, file), 'utf8'), file).toBe(text);
  });

  it("the kustomize base's ClusterRole holds the core pack's rules and the server's own", () => {
    const role = parse(readFileSync(path.join(root, 'deploy/kubernetes/base/clusterrole.yaml'), 'utf8')) as {
      kind: string;
      rules: PolicyRule[];
    };
    expect(role.kind).toBe('ClusterRole');
    expect(flatten(role.rules)).toEqual(flatten([...clusterRoleRules(grantsFor(['core'])), ...SERVER_RULES]));
    expect(flatten(serverRules(['core']))).toEqual(flatten(role.rules));
  });

  it("the server's own rules list Events and read ReferenceRules, whatever the packs", () => {
    expect(flatten([...SERVER_RULES])).toEqual(['/events list', 'refwatch.dev/referencerules get,list,watch']);
    const template = readFileSync(path.join(root, 'deploy/helm/refwatch/templates/clusterrole.yaml'), 'utf8');
    // Unconditional in the chart: outside every pack's if-block.
    expect(template).toMatch(
      /\{\{- end \}\}\n {2}- apiGroups: \[""\]\n {4}resources: \["events"\]\n {4}verbs: \["list"\]\n {2}- apiGroups: \["refwatch.dev"\]\n {4}resources: \["referencerules"\]\n {4}verbs: \["get", "list", "watch"\]\n/,
    );
  });

  it("the chart's ClusterRole renders each resource when, and only when, a pack that watches it is enabled", () => {
    const template = readFileSync(path.join(root, 'deploy/helm/refwatch/templates/clusterrole.yaml'), 'utf8');
    const blocks = [
      ...template.matchAll(
        /\{\{- if (.+?) \}\}\n {2}- apiGroups: \[("[^"]*")\]\n {4}resources: \[("[^"]+")\]\n {4}verbs: \[(.+?)\]\n/g,
      ),
    ];
    const all = grantsFor(PACK_NAMES);
    expect(blocks).toHaveLength(all.length);
    for (const [, cond, group, resource, verbs] of blocks) {
      expect(verbs).toBe('"get", "list", "watch"');
      const packs = [...cond!.matchAll(/has "([\w-]+)" \$packs/g)].map((m) => m[1]).sort();
      const needing = PACK_NAMES.filter((p) =>
        grantsFor([p]).some((g) => JSON.stringify(g.apiGroup) === group && JSON.stringify(g.resource) === resource),
      ).sort();
      expect(packs, `${group} ${resource}`).toEqual(needing);
    }
  });
});
