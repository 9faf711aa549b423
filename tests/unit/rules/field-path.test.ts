import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FieldPath, compileFieldPath } from '@/lib/rules';
import { validateReference } from '@/lib/model';

const pod = {
  spec: {
    volumes: [
      { name: 'config', configMap: { name: 'app-config' } },
      { name: 'creds', secret: { secretName: 'db-password' } },
      { name: 'more', configMap: { name: 'extra-config' } },
    ],
    containers: [
      { name: 'app', envFrom: [{ secretRef: { name: 'a' } }, { configMapRef: { name: 'b' } }] },
      { name: 'sidecar', envFrom: [{ secretRef: { name: 'c' } }] },
    ],
  },
};

describe('FieldPath', () => {
  it('returns every match with its concrete path, in document order', () => {
    const matches = compileFieldPath('spec.volumes[*].configMap.name').match(pod);
    expect(matches.map((m) => [m.path, m.value])).toEqual([
      ['spec.volumes[0].configMap.name', 'app-config'],
      ['spec.volumes[2].configMap.name', 'extra-config'],
    ]);
  });

  it('expands nested wildcards', () => {
    const matches = compileFieldPath('spec.containers[*].envFrom[*].secretRef.name').match(pod);
    expect(matches.map((m) => m.path)).toEqual([
      'spec.containers[0].envFrom[0].secretRef.name',
      'spec.containers[1].envFrom[0].secretRef.name',
    ]);
  });

  it('follows fixed indices and ignores out-of-range ones', () => {
    expect(compileFieldPath('spec.volumes[1].secret.secretName').get(pod)).toBe('db-password');
    expect(compileFieldPath('spec.volumes[9].secret.secretName').match(pod)).toEqual([]);
  });

  it('gives the object holding each match, where sibling fields live', () => {
    const [m] = compileFieldPath('spec.volumes[*].secret.secretName').match(pod);
    expect(m?.holder).toEqual({ secretName: 'db-password' });
  });

  it('yields nothing through missing fields, scalars and wrong container types', () => {
    expect(compileFieldPath('spec.nothing[*].name').match(pod)).toEqual([]);
    expect(compileFieldPath('spec.volumes.name').match(pod)).toEqual([]);
    expect(compileFieldPath('spec[*]').match(pod)).toEqual([]);
    expect(compileFieldPath('a.b').match(null)).toEqual([]);
    expect(compileFieldPath('a.b').match('text')).toEqual([]);
  });

  it('does not read inherited properties', () => {
    expect(compileFieldPath('constructor').match({})).toEqual([]);
    expect(compileFieldPath('toString').get({})).toBeUndefined();
  });

  it('accepts a leading dot, as kubectl writes it', () => {
    const p = compileFieldPath('.spec.volumes[0].name');
    expect(p.source).toBe('spec.volumes[0].name');
    expect(p.get(pod)).toBe('config');
  });

  it('reads a quoted key that is no field name, and writes it quoted in the concrete path', () => {
    const ingress = { metadata: { annotations: { 'cert-manager.io/issuer': 'ca', 'x.io/kind': 'Issuer' } } };
    const [m] = compileFieldPath("metadata.annotations['cert-manager.io/issuer']").match(ingress);
    expect(m).toMatchObject({ path: "metadata.annotations['cert-manager.io/issuer']", value: 'ca' });
    expect(compileFieldPath('["x.io/kind"]').get(m?.holder)).toBe('Issuer');
    const bad = FieldPath.parse("metadata.annotations['']");
    expect(bad.ok ? '' : bad.error.message).toMatch(/expected a non-empty quoted key .* at character 22/);
  });

  it('writes its pattern with every index as [*] and keys as concrete paths write them', () => {
    expect(compileFieldPath("spec['volumes'][0].secret['a/b']").pattern).toBe("spec.volumes[*].secret['a/b']");
    expect(compileFieldPath('.spec.volumes[*].secret.secretName').pattern).toBe('spec.volumes[*].secret.secretName');
    expect(compileFieldPath("['x.y'].z").pattern).toBe("['x.y'].z");
  });

  it('knows whether a path is concrete', () => {
    expect(compileFieldPath('spec.volumes[0].name').isConcrete).toBe(true);
    expect(compileFieldPath('spec.volumes[*].name').isConcrete).toBe(false);
  });

  it.each([
    ['', 'empty'],
    ['spec..name', "after '.'"],
    ['spec.volumes[', "index or '*'"],
    ['spec.volumes[x]', "index or '*'"],
    ['spec.volumes[*', "expected ']'"],
    ['spec volumes', "unexpected ' '"],
    ['[0].name', 'expected a field name'],
    ['spec.9lives', "after '.'"],
  ])('rejects %j, saying where and why', (src, why) => {
    const r = FieldPath.parse(src, 'rules[0].references[0].path');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toContain('rules[0].references[0].path');
      expect(r.error.message).toContain(why);
      expect(r.error.field).toBe('rules[0].references[0].path');
    }
  });

  it('reports the character position of the fault', () => {
    const r = FieldPath.parse('spec.volumes[*');
    expect(!r.ok && r.error.message).toContain('at character 15');
  });

  it('produces concrete paths that are valid Reference field paths', () => {
    const matches = compileFieldPath('spec.containers[*].envFrom[*].configMapRef.name').match(pod);
    expect(matches).toHaveLength(1);
    for (const m of matches)
      expect(validateReference({ referent: 'ConfigMap/shop/b', fieldPath: m.path }).ok).toBe(true);
  });
});

// Keys the grammar can name, including the characters it allows beyond letters.
const key = fc.stringMatching(/^[A-Za-z_$][\w$-]{0,6}$/);
const json = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
})).node;
const rootObject = fc.dictionary(key, json, { minKeys: 1, maxKeys: 4 });

/** Random paths over the same key alphabet, so some match and some do not. */
const step = fc.oneof(
  key.map((k) => `.${k}`),
  fc.constant('[*]'),
  fc.nat(4).map((n) => `[${n}]`),
);
const pathArb = fc.tuple(key, fc.array(step, { maxLength: 5 })).map(([head, rest]) => head + rest.join(''));

/** A path built by walking an actual tree, so it always matches something. */
function pathsIn(node: unknown, prefix: string, out: string[]): void {
  out.push(prefix);
  if (Array.isArray(node)) {
    node.forEach((v, i) => pathsIn(v, `${prefix}[${i}]`, out));
    if (node.length > 0) pathsIn(node[0], `${prefix}[*]`, out);
  } else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) pathsIn(v, `${prefix}.${k}`, out);
  }
}

describe('FieldPath properties', () => {
  it('every concrete path it returns reads back the same value, and only that value', () => {
    fc.assert(
      fc.property(rootObject, pathArb, (root, src) => {
        const p = FieldPath.parse(src);
        expect(p.ok).toBe(true);
        if (!p.ok) return;
        for (const m of p.value.match(root)) {
          const back = compileFieldPath(m.path);
          expect(back.isConcrete).toBe(true);
          const again = back.match(root);
          expect(again).toHaveLength(1);
          expect(again[0]!.value).toBe(m.value);
          expect(back.get(root)).toBe(m.value);
          expect(validateReference({ referent: 'Secret/shop/x', fieldPath: m.path }).ok).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('finds every value a path names: paths taken from the tree always match', () => {
    fc.assert(
      fc.property(rootObject, (root) => {
        const paths: string[] = [];
        for (const [k, v] of Object.entries(root)) pathsIn(v, k, paths);
        for (const src of paths) {
          const matches = compileFieldPath(src).match(root);
          expect(matches.length).toBeGreaterThan(0);
          if (!src.includes('[*]')) expect(matches.map((m) => m.path)).toEqual([src]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a wildcard yields exactly the sum of its concrete expansions', () => {
    fc.assert(
      fc.property(rootObject, key, fc.array(json, { maxLength: 5 }), key, (root, arrKey, items, leaf) => {
        const tree = { ...root, [arrKey]: items };
        const wild = compileFieldPath(`${arrKey}[*].${leaf}`).match(tree);
        const byIndex = items.flatMap((_, i) => compileFieldPath(`${arrKey}[${i}].${leaf}`).match(tree));
        expect(wild.map((m) => [m.path, m.value])).toEqual(byIndex.map((m) => [m.path, m.value]));
      }),
      { numRuns: 300 },
    );
  });
});
