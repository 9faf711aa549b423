import { describe, expect, it } from 'vitest';
import { compileRuleSet, parseRulesText, readinessOf, scanReferences, type RulesDocument } from '@/lib/rules';

function parsed(text: string): RulesDocument {
  const r = parseRulesText(text, 'rules.yaml');
  if (!r.ok) throw r.error;
  return r.value;
}

describe('rules file: produces, namespace and all', () => {
  const doc = parsed(`
rules:
  - referrer: { group: backup.example.com, kind: Backup }
    references:
      - { path: spec.target, referent: { kind: Secret }, produces: true }
  - referrer: { group: backup.example.com, kind: ClusterBackupStore }
    references:
      - { path: spec.credentials.name, referent: { kind: Secret }, namespace: backup-system }
kinds:
  - group: backup.example.com
    kind: Backup
    ready: { all: [{ condition: Ready }, { field: status.phase, equals: Done }] }
`);
  const rs = compileRuleSet([doc]);

  it('lists a produced referent apart from the references the referrer waits on', () => {
    const scan = scanReferences(rs, {
      apiVersion: 'backup.example.com/v1',
      kind: 'Backup',
      metadata: { name: 'nightly', namespace: 'shop' },
      spec: { target: 'nightly-archive' },
    });
    expect(scan.references).toEqual([]);
    expect(scan.produced).toEqual([{ referent: 'Secret/shop/nightly-archive', fieldPath: 'spec.target' }]);
  });

  it("puts a cluster-scoped referrer's namespaced referent in the rule's namespace", () => {
    const scan = scanReferences(rs, {
      apiVersion: 'backup.example.com/v1',
      kind: 'ClusterBackupStore',
      metadata: { name: 's3' },
      spec: { credentials: { name: 's3-keys' } },
    });
    expect(scan.references).toEqual([{ referent: 'Secret/backup-system/s3-keys', fieldPath: 'spec.credentials.name' }]);
  });

  it('judges {all: [...]} by its first predicate that does not hold', () => {
    const backup = (ready: string, phase: string) => ({
      apiVersion: 'backup.example.com/v1',
      kind: 'Backup',
      metadata: { name: 'b', namespace: 'shop' },
      status: { phase, conditions: [{ type: 'Ready', status: ready }] },
    });
    expect(readinessOf(rs, backup('True', 'Done'))).toEqual({ ready: true });
    expect(readinessOf(rs, backup('True', 'Running'))).toMatchObject({ ready: false, field: 'status.phase' });
    expect(readinessOf(rs, backup('False', 'Done'))).toMatchObject({ ready: false, condition: 'Ready' });
  });

  it('rejects produces beside optional, a bad namespace and a one-item all, naming the field', () => {
    const r = parseRulesText(
      `
rules:
  - referrer: { kind: Pod }
    references:
      - { path: spec.a, referent: { kind: Secret }, produces: true, optional: true }
      - { path: spec.b, referent: { kind: Secret }, namespace: Not_A_Namespace }
kinds:
  - { kind: Secret, ready: { all: [{ condition: Ready }] } }
`,
      'rules.yaml',
    );
    expect(r.ok).toBe(false);
    const issues = r.ok ? [] : r.error.issues.map((i) => `${i.path}: ${i.reason}`);
    expect(issues).toContainEqual(
      'rules[0].references[0].produces: a produced referent is never waited on: drop optional/optionalField',
    );
    expect(issues).toContainEqual(
      'rules[0].references[1].namespace: namespace must be a namespace name (cert-manager)',
    );
    expect(issues.some((i) => i.startsWith('kinds[0].ready'))).toBe(true);
  });
});
