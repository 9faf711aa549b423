import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheck, SetLookup } from '@/lib/cli/check';
import { readManifests } from '@/lib/cli/manifests';
import { builtinRuleSet } from '@/lib/rules';

const rules = builtinRuleSet(['core']);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refwatch-check-unit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readManifests', () => {
  it('reads multi-document YAML and JSON Lists, numbering documents from 1, and skips what is not an object', async () => {
    const f = path.join(dir, 'set.yaml');
    fs.writeFileSync(
      f,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\n' +
        '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}]}\n',
    );
    const m = await readManifests([f], { recursive: false });
    expect(m.map((x) => [x.document, x.object.kind, x.object.metadata.name])).toEqual([
      [1, 'ConfigMap', 'a'],
      [3, 'Secret', 's'],
    ]);
  });

  it('names the file and document of invalid YAML', async () => {
    const f = path.join(dir, 'bad.yaml');
    fs.writeFileSync(f, 'apiVersion: v1\n---\nkind: [unclosed\n');
    await expect(readManifests([f], { recursive: false })).rejects.toThrow(/bad\.yaml document 2 is not valid YAML/);
  });

  it('reads stdin for -', async () => {
    const m = await readManifests(['-'], {
      recursive: false,
      stdin: async () => 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-stdin}\n',
    });
    expect(m).toEqual([expect.objectContaining({ file: '-', document: 1 })]);
  });
});

describe('runCheck offline', () => {
  it('counts an object of the set as present, in any order, and suggests names of the set', async () => {
    const manifests = [
      {
        file: 'a.yaml',
        document: 1,
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p' },
          spec: {
            serviceAccountName: 'runner',
            volumes: [
              { name: 'v', configMap: { name: 'settings' } },
              { name: 'w', secret: { secretName: 'tokn' } },
            ],
          },
        },
      },
      { file: 'b.yaml', document: 1, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } } },
      { file: 'b.yaml', document: 2, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' } } },
      {
        file: 'b.yaml',
        document: 3,
        object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner' } },
      },
    ];
    const r = await runCheck({ ruleSet: rules, manifests, namespace: 'ci', timeoutMs: 1000 });
    expect(r.findings).toEqual([
      expect.objectContaining({
        file: 'a.yaml',
        document: 1,
        object: 'Pod/ci/p',
        referent: 'Secret/ci/tokn',
        message: 'spec.volumes[1].secret.secretName: Secret ci/tokn does not exist; did you mean token?',
      }),
    ]);
    expect(r.objects).toBe(4);
    expect(r.files).toBe(2);
  });

  it('asks the cluster only for what the set lacks', () => {
    const asked: string[] = [];
    const lookup = new SetLookup(
      new Map([['Secret/ci/a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a' } }]]),
      {
        lookup: (k) => {
          asked.push(k);
          return { state: 'unknown' };
        },
      },
    );
    expect(lookup.lookup('Secret/ci/a').state).toBe('found');
    expect(lookup.lookup('Secret/ci/b').state).toBe('unknown');
    expect(asked).toEqual(['Secret/ci/b']);
  });
});
