import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referencesOf } from '@/lib/admission';
import { templateRuleSet } from '@/lib/admission/template-rules';
import type { KubeObject } from '@/lib/model';
import { builtinRuleSet, compileRuleSet, parseRulesText, scanReferences, type RuleSet } from '@/lib/rules';

const core = builtinRuleSet(['core']);

function ruleSet(text: string): RuleSet {
  const r = parseRulesText(`name: test\n${text}`, 'test.yaml');
  if (!r.ok) throw r.error;
  return compileRuleSet([r.value]);
}

/** naiveReferencesOf is the model: the workload's own references, then every Pod rule's on its template, deduplicated. */
function naiveReferencesOf(rs: RuleSet, object: KubeObject): { referent: string; fieldPath: string }[] {
  const own = scanReferences(rs, object).references.map((r) => ({ ...r }));
  const t = (object.spec as { template?: { metadata?: object } }).template;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    ...t,
    metadata: { ...t?.metadata, name: object.metadata.name, namespace: object.metadata.namespace },
  } as KubeObject;
  const seen = new Set(own.map((r) => `${r.referent}|${r.fieldPath}`));
  for (const r of scanReferences(rs, pod).references) {
    const fieldPath = `spec.template.${r.fieldPath}`;
    if (seen.has(`${r.referent}|${fieldPath}`)) continue;
    seen.add(`${r.referent}|${fieldPath}`);
    own.push({ ...r, fieldPath });
  }
  return own;
}

function deployment(spec: unknown, metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { template: { metadata, spec } },
  };
}

describe('templateRuleSet', () => {
  it("leaves out the Pod rules a Deployment's own rules already apply to its template, and keeps the others", () => {
    const paths = (rs: RuleSet) => (rs.rules.get('Pod') ?? []).map((r) => r.path.source);
    const trs = templateRuleSet(core, 'Deployment.apps', 'spec.template');
    expect(paths(core)).toContain('spec.volumes[*].secret.secretName');
    expect(paths(trs)).not.toContain('spec.volumes[*].secret.secretName');
    expect(paths(trs)).toContain('metadata.ownerReferences[*].name');
    expect(templateRuleSet(core, 'Deployment.apps', 'spec.template')).toBe(trs);
  });

  it('keeps a Pod rule that the workload rule on the same field does not match exactly', () => {
    const rs = ruleSet(`
rules:
  - referrer: { kind: Pod }
    references:
      - { path: "spec.volumes[*].secret.secretName", referent: { kind: Secret } }
  - referrer: { group: apps, kind: Deployment }
    references:
      - { path: "spec.template.spec.volumes[*].secret.secretName", referent: { kind: Secret }, optional: true }
`);
    expect(templateRuleSet(rs, 'Deployment.apps', 'spec.template').rules.get('Pod')).toHaveLength(1);
    expect(referencesOf(rs, deployment({ volumes: [{ secret: { secretName: 'db' } }] }))).toEqual([
      { referent: 'Secret/shop/db', fieldPath: 'spec.template.spec.volumes[0].secret.secretName', optional: true },
    ]);
  });

  it('finds what scanning the template with every Pod rule and deduplicating finds', () => {
    const name = fc.constantFrom('db', 'web-config', 'cache', '', 'Bad_Name');
    const spec = fc.record(
      {
        serviceAccountName: name,
        volumes: fc.array(
          fc.oneof(
            fc.record({ secret: fc.record({ secretName: name, optional: fc.boolean() }) }),
            fc.record({ configMap: fc.record({ name }) }),
            fc.record({ persistentVolumeClaim: fc.record({ claimName: name }) }),
          ),
          { maxLength: 4 },
        ),
        containers: fc.array(
          fc.record({
            envFrom: fc.array(
              fc.oneof(fc.record({ configMapRef: fc.record({ name }) }), fc.record({ secretRef: fc.record({ name }) })),
              {
                maxLength: 3,
              },
            ),
          }),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: [] },
    );
    const metadata = fc.record(
      { ownerReferences: fc.array(fc.record({ name }), { maxLength: 2 }) },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(spec, metadata, (s, m) => {
        const d = deployment(s, m);
        expect(referencesOf(core, d)).toEqual(naiveReferencesOf(core, d));
      }),
      { numRuns: 300 },
    );
  });
});
