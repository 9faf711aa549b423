import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  compileRuleSet,
  extractReferences,
  loadRulesFile,
  parseRulesText,
  readinessOf,
  validateRules,
  type RuleIssue,
  type RulesDocument,
} from '@/lib/rules';

function issuesOf(text: string, file = 'rules.yaml'): RuleIssue[] {
  const r = parseRulesText(text, file);
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.error.issues;
}

function parsed(text: string): RulesDocument {
  const r = parseRulesText(text, 'rules.yaml');
  if (!r.ok) throw r.error;
  return r.value;
}

const valid = `
rules:
  - referrer: { kind: Pod }
    references:
      - path: spec.volumes[*].configMap.name
        referent: { kind: ConfigMap }
        optionalField: optional
  - referrer: { group: gateway.networking.k8s.io, kind: HTTPRoute }
    references:
      - path: spec.parentRefs[*].name
        namespaceField: namespace
        kindField: kind
        groupField: group
        referent: { group: gateway.networking.k8s.io, kind: Gateway }
kinds:
  - { kind: Secret, ready: exists }
  - { group: apps, kind: Deployment, ready: { condition: Available } }
  - { kind: PersistentVolumeClaim, ready: { field: status.phase, equals: Bound } }
  - { group: storage.k8s.io, kind: StorageClass, scope: Cluster }
`;

describe('rules files', () => {
  it('accepts a valid YAML file and fills in defaults', () => {
    const doc = parsed(valid);
    expect(doc.rules[0]!.referrer).toEqual({ group: '', kind: 'Pod' });
    expect(doc.rules[0]!.references[0]!).toMatchObject({ referent: { group: '', kind: 'ConfigMap' } });
    expect(doc.conventions).toEqual([]);
    expect(doc.kinds[1]!.ready).toEqual({ condition: 'Available', status: 'True' });
  });

  it('accepts the same document written as JSON', () => {
    const json = JSON.stringify(
      {
        rules: [
          {
            referrer: { kind: 'Pod' },
            references: [{ path: 'spec.serviceAccountName', referent: { kind: 'ServiceAccount' } }],
          },
        ],
      },
      null,
      2,
    );
    const doc = parsed(json);
    const rs = compileRuleSet([doc]);
    const refs = extractReferences(rs, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'shop' },
      spec: { serviceAccountName: 'builder' },
    });
    expect(refs).toEqual([{ referent: 'ServiceAccount/shop/builder', fieldPath: 'spec.serviceAccountName' }]);
  });

  it('names the file, the path in the file, the line and the reason for a bad field path', () => {
    const [issue, ...rest] = issuesOf(`rules:
  - referrer: { kind: Pod }
    references:
      - path: spec.volumes[*.configMap.name
        referent: { kind: ConfigMap }
`);
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ file: 'rules.yaml', path: 'rules[0].references[0].path', line: 4, column: 15 });
    expect(issue!.reason).toContain("expected ']'");
  });

  it('reports every problem in the file, each at its own path', () => {
    const issues = issuesOf(`rules:
  - referrer: { kind: Pod }
    references:
      - path: spec.serviceAccountName
        referent: { kind: ServiceAccount }
      - path: spec.volumes[*].secret.secretName
        referent: { kind: secret }
        nmae: typo
  - referrer: { kind: Pod }
    references: []
`);
    expect(issues.map((i) => i.path)).toEqual([
      'rules[0].references[1].referent.kind',
      'rules[0].references[1].nmae',
      'rules[1].references',
    ]);
    expect(issues[0]!.reason).toContain('CamelCase');
    expect(issues[1]!.reason).toContain('unknown field');
    expect(issues[1]!.line).toBe(8);
    expect(issues[2]!.reason).toContain('at least one reference');
  });

  it('says which field is missing', () => {
    const [issue] = issuesOf(`rules:\n  - references:\n      - { path: spec.x, referent: { kind: X } }\n`);
    expect(issue).toMatchObject({ path: 'rules[0].referrer', line: 2 });
    expect(issue!.reason).toContain('required');
  });

  it('requires a referent unless the kind comes from the object', () => {
    const [issue] = issuesOf(`rules:\n  - referrer: { kind: Pod }\n    references:\n      - { path: spec.x }\n`);
    expect(issue!.path).toBe('rules[0].references[0].referent');
    expect(issue!.reason).toContain('kindField');
    expect(
      parseRulesText(
        `rules:\n  - referrer: { kind: Pod }\n    references:\n      - { path: spec.x.name, kindField: kind }\n`,
        'f',
      ).ok,
    ).toBe(true);
  });

  it('rejects groupField together with apiVersionField', () => {
    const [issue] = issuesOf(
      `rules:\n  - referrer: { kind: Pod }\n    references:\n      - { path: spec.x.name, referent: { kind: X }, groupField: group, apiVersionField: apiVersion }\n`,
    );
    expect(issue).toMatchObject({ path: 'rules[0].references[0].apiVersionField' });
    expect(issue!.reason).toContain('not both');
  });

  it('explains a bad readiness predicate inside the branch the author meant', () => {
    const [issue] = issuesOf(
      `kinds:\n  - kind: Deployment\n    group: apps\n    ready: { condition: Available, staus: 'True' }\n`,
    );
    expect(issue).toMatchObject({ path: 'kinds[0].ready.staus', line: 4 });
    expect(issue!.reason).toContain('unknown field');
  });

  it('explains an unknown predicate word', () => {
    const [issue] = issuesOf(`kinds:\n  - { kind: Secret, ready: present }\n`);
    expect(issue!.path).toBe('kinds[0].ready');
    expect(issue!.reason).toContain("'exists'");
  });

  it('rejects a kind described twice in one file', () => {
    const [issue] = issuesOf(`kinds:\n  - { kind: Secret, ready: exists }\n  - { kind: Secret, scope: Namespaced }\n`);
    expect(issue!.path).toBe('kinds[1]');
    expect(issue!.reason).toContain('kinds[0]');
  });

  it('rejects a convention field that is not a *Ref or *Refs name', () => {
    const [issue] = issuesOf(
      `conventions:\n  - name: c\n    under: [spec]\n    fields:\n      - { field: providerConfig, referent: { kind: ProviderConfig } }\n`,
    );
    expect(issue!.path).toBe('conventions[0].fields[0].field');
    expect(issue!.reason).toContain('Ref');
  });

  it('reports YAML syntax errors with their line', () => {
    const [issue] = issuesOf(`rules:\n  - referrer: { kind: Pod\n    references: []\n`, 'broken.yaml');
    expect(issue).toMatchObject({ file: 'broken.yaml', path: '' });
    expect(issue!.line).toBeGreaterThan(0);
    expect(issue!.reason).toContain('not valid YAML');
  });

  it('reports an empty file and a file that is not a mapping', () => {
    expect(issuesOf('')[0]!.reason).toContain('empty');
    expect(issuesOf('- a\n- b\n')[0]!.path).toBe('');
  });

  it('formats issues as file:line:column: path: reason in the error message', () => {
    const r = parseRulesText(`kinds:\n  - { kind: secret }\n`, 'team/rules.yaml');
    expect(!r.ok && r.error.message).toMatch(/^team\/rules\.yaml:2:13: kinds\[0\]\.kind: "secret" is not a kind/);
    expect(!r.ok && r.error.code).toBe('InvalidRules');
  });

  it('validates already-parsed values without line numbers', () => {
    const r = validateRules(
      { rules: [{ referrer: { kind: 'Pod' }, references: [{ path: 'spec.x', referent: { kind: 'X' }, extra: 1 }] }] },
      'inline',
    );
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.issues).toEqual([
        { file: 'inline', path: 'rules[0].references[0].extra', reason: expect.stringContaining('unknown field') },
      ]);
  });
});

describe('loadRulesFile', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads and validates a file, naming the file in errors', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'refwatch-rules-'));
    const good = path.join(dir, 'good.yaml');
    const bad = path.join(dir, 'bad.json');
    await writeFile(good, valid);
    await writeFile(
      bad,
      '{\n  "rules": [\n    { "referrer": { "kind": "Pod" }, "references": [ { "path": "spec.", "referent": { "kind": "X" } } ] }\n  ]\n}\n',
    );
    const g = await loadRulesFile(good);
    expect(g.ok && g.value.rules).toHaveLength(2);
    const b = await loadRulesFile(bad);
    expect(b.ok).toBe(false);
    if (!b.ok) expect(b.error.issues[0]).toMatchObject({ file: bad, path: 'rules[0].references[0].path', line: 3 });
  });

  it('reports a missing file as an issue, not a throw', async () => {
    const r = await loadRulesFile('/nonexistent/refwatch/rules.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.issues[0]).toMatchObject({
        file: '/nonexistent/refwatch/rules.yaml',
        reason: expect.stringContaining('no such file'),
      });
  });
});

describe('compileRuleSet', () => {
  it('lets a later document override one fact of a kind and keep the others', () => {
    const base = parsed(`kinds:\n  - { group: storage.k8s.io, kind: StorageClass, scope: Cluster, ready: exists }\n`);
    const override = parsed(`kinds:\n  - { group: storage.k8s.io, kind: StorageClass, ready: { condition: Ready } }\n`);
    const rs = compileRuleSet([base, override]);
    expect(rs.kinds.get('StorageClass.storage.k8s.io')?.scope).toBe('Cluster');
    const sc = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fast' },
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'not yet' }] },
    };
    expect(readinessOf(rs, sc)).toEqual({
      ready: false,
      condition: 'Ready',
      reason: 'Provisioning',
      message: 'not yet',
    });
  });

  it('adds up rules for the same referrer from several documents', () => {
    const a = parsed(
      `rules:\n  - referrer: { kind: Pod }\n    references: [ { path: spec.serviceAccountName, referent: { kind: ServiceAccount } } ]\n`,
    );
    const b = parsed(
      `rules:\n  - referrer: { kind: Pod }\n    references: [ { path: spec.priorityClassName, referent: { group: scheduling.k8s.io, kind: PriorityClass }, scope: Cluster } ]\n`,
    );
    const rs = compileRuleSet([a, b]);
    expect(rs.referrerKinds).toEqual([{ group: '', kind: 'Pod' }]);
    const refs = extractReferences(rs, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'shop' },
      spec: { serviceAccountName: 'sa', priorityClassName: 'high' },
    });
    expect(refs.map((r) => r.referent)).toEqual(['ServiceAccount/shop/sa', 'PriorityClass.scheduling.k8s.io//high']);
  });
});
