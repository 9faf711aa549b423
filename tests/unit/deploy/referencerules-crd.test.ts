import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  REFERENCE_RULES,
  conventionFieldSchema,
  conventionSchema,
  kindInfoSchema,
  referenceRuleSchema,
  referrerSelectorSchema,
  ruleSchema,
  rulesDocumentSchema,
  selectorReferenceSchema,
} from '@/lib/rules';

const root = path.resolve(import.meta.dirname, '../../..');
const KUSTOMIZE = 'deploy/kubernetes/base/referencerules-crd.yaml';
const CHART = 'deploy/helm/refwatch/crds/referencerules.yaml';

interface Node {
  type?: string;
  properties?: Record<string, Node>;
  items?: Node;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Crd {
  kind: string;
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: Node } }[];
  };
}

const crd = parse(readFileSync(path.join(root, KUSTOMIZE), 'utf8')) as Crd;
const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
const keys = (n: Node | undefined) => Object.keys(n?.properties ?? {}).sort();

describe('the ReferenceRules CustomResourceDefinition', () => {
  it('is the same file in the kustomize base and the Helm chart, and the base installs it', () => {
    expect(readFileSync(path.join(root, CHART), 'utf8')).toBe(readFileSync(path.join(root, KUSTOMIZE), 'utf8'));
    const kustomization = parse(readFileSync(path.join(root, 'deploy/kubernetes/base/kustomization.yaml'), 'utf8'));
    expect(kustomization.resources).toContain('referencerules-crd.yaml');
  });

  it('serves the kind refwatch watches: refwatch.dev/v1alpha1 ReferenceRules, namespaced', () => {
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect({ group: crd.spec.group, kind: crd.spec.names.kind }).toEqual(REFERENCE_RULES);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names.plural).toBe('referencerules');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1alpha1', true, true]]);
  });

  it("mirrors the rules file's schema field by field, so no field is pruned by the API server", () => {
    const rule = spec.properties!.rules!.items!;
    const reference = rule.properties!.references!.items!;
    const convention = spec.properties!.conventions!.items!;
    const kind = spec.properties!.kinds!.items!;
    const shape = (s: { shape: object }) => Object.keys(s.shape).sort();
    expect(keys(spec)).toEqual(shape(rulesDocumentSchema));
    expect(keys(rule)).toEqual(shape(ruleSchema));
    expect(keys(reference)).toEqual(
      [...new Set([...shape(referenceRuleSchema), ...shape(selectorReferenceSchema)])].sort(),
    );
    expect(keys(convention)).toEqual(shape(conventionSchema));
    expect(keys(convention.properties!.referrers)).toEqual(shape(referrerSelectorSchema));
    expect(keys(convention.properties!.fields!.items)).toEqual(shape(conventionFieldSchema));
    expect(keys(kind)).toEqual(shape(kindInfoSchema));
  });

  it('is structural: every field has a type, or keeps what it is given where the rules schema takes several shapes', () => {
    const untyped: string[] = [];
    const walk = (n: Node, at: string) => {
      if (n.type === undefined && n['x-kubernetes-preserve-unknown-fields'] !== true) untyped.push(at);
      for (const [k, child] of Object.entries(n.properties ?? {})) walk(child, `${at}.${k}`);
      if (n.items) walk(n.items, `${at}[*]`);
    };
    walk(spec, 'spec');
    expect(untyped).toEqual([]);
  });
});
