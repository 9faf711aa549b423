import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mergePatch } from '@/lib/embedded/patch';
import { ApiError } from '@/lib/embedded/status';
import { strategicMergePatch, strategicSchemaFor } from '@/lib/embedded/strategic-merge';

const pod = strategicSchemaFor({ group: '', kind: 'Pod' });
const configMap = strategicSchemaFor({ group: '', kind: 'ConfigMap' });

const names = (list: unknown) => (list as { name: string }[]).map((c) => c.name);

function refusal(f: () => unknown): { code?: number; message: string } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return { code: (e as ApiError).status.code, message: (e as ApiError).status.message ?? '' };
  }
  throw new Error('the patch was applied');
}

describe('strategic merge patch', () => {
  it('merges lists by their merge key and keeps the order kube-apiserver gives', () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] },
          { name: 'b', image: 'b:1' },
        ],
        tolerations: [{ key: 'k1' }],
      },
    };
    const out = strategicMergePatch(
      live,
      {
        spec: {
          containers: [{ name: 'b', image: 'b:2' }, { name: 'new' }, { name: 'a', env: [{ name: 'Y', value: '2' }] }],
          tolerations: [{ key: 'k2' }],
        },
      },
      pod,
    ) as typeof live;
    // Patch items in the patch's order, a server-only item before the first patch item it preceded; nothing here is server-only.
    expect(names(out.spec.containers)).toEqual(['b', 'new', 'a']);
    expect(out.spec.containers[2]).toEqual({
      name: 'a',
      image: 'a:1',
      // Y is new and X is not in the patch: Y comes first.
      env: [
        { name: 'Y', value: '2' },
        { name: 'X', value: '1' },
      ],
    });
    // tolerations carry no patch strategy: replaced.
    expect(out.spec.tolerations).toEqual([{ key: 'k2' }]);
    // The live object is not changed.
    expect(names(live.spec.containers)).toEqual(['a', 'b']);
  });

  it('puts a new item before the server items it does not follow', () => {
    const live = { spec: { volumes: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const out = strategicMergePatch(
      live,
      { spec: { volumes: [{ name: 'b', x: 1 }, { name: 'n' }] } },
      pod,
    ) as typeof live;
    expect(names(out.spec.volumes)).toEqual(['a', 'b', 'n', 'c']);
  });

  it('merges lists of scalars as a set, and $deleteFromPrimitiveList removes from them', () => {
    const live = { metadata: { finalizers: ['x', 'y'] } };
    const added = strategicMergePatch(live, { metadata: { finalizers: ['z', 'x'] } }, configMap) as typeof live;
    expect(added.metadata.finalizers).toEqual(['z', 'x', 'y']);
    const removed = strategicMergePatch(
      added,
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['x', 'absent'] } },
      configMap,
    ) as typeof live;
    expect(removed.metadata.finalizers).toEqual(['z', 'y']);
  });

  it('follows $patch, $retainKeys and $setElementOrder', () => {
    const live = {
      spec: {
        containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
        volumes: [{ name: 'v', configMap: { name: 'cm' } }],
        imagePullSecrets: [{ name: 'r1' }],
      },
    };
    const out = strategicMergePatch(
      live,
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }],
          containers: [{ name: 'b', $patch: 'delete' }],
          volumes: [{ name: 'v', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }],
          imagePullSecrets: [{ $patch: 'replace' }, { name: 'r2' }],
        },
      },
      pod,
    ) as typeof live;
    expect(names(out.spec.containers)).toEqual(['c', 'a']);
    expect(out.spec.volumes).toEqual([{ name: 'v', secret: { secretName: 's' } }]);
    expect(out.spec.imagePullSecrets).toEqual([{ name: 'r2' }]);
    expect(strategicMergePatch({ data: { a: '1' } }, { data: { $patch: 'replace', b: '2' } }, configMap)).toEqual({
      data: { b: '2' },
    });
    expect(strategicMergePatch({ data: { a: '1' } }, { data: { $patch: 'delete' } }, configMap)).toEqual({ data: {} });
  });

  it('refuses what kube-apiserver refuses, saying why', () => {
    const live = { spec: { containers: [{ name: 'a' }] } };
    expect(refusal(() => strategicMergePatch(live, { spec: { containers: [{ image: 'x' }] } }, pod))).toEqual({
      code: 500,
      message: 'map: {"image":"x"} does not contain declared merge key: name',
    });
    expect(refusal(() => strategicMergePatch(live, { spec: { $patch: 'merge' } }, pod))).toEqual({
      code: 500,
      message: 'unknown patch type: merge in map: {"$patch":"merge"}',
    });
    expect(
      refusal(() => strategicMergePatch({ spec: {} }, { spec: { $retainKeys: ['a'], b: 1 } }, configMap)).message,
    ).toMatch(/"b" is set but not listed in \$retainKeys/);
    expect(refusal(() => strategicMergePatch(live, [], pod)).code).toBe(400);
  });

  it('is a JSON merge patch where no list and no directive is involved', () => {
    const leaf = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean());
    const tree = fc.letrec((tie) => ({
      node: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.oneof(leaf, tie('node')), { maxKeys: 4 }),
    })).node;
    const patchTree = fc.letrec((tie) => ({
      node: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.oneof(leaf, fc.constant(null), tie('node')), {
        maxKeys: 4,
      }),
    })).node;
    fc.assert(
      fc.property(tree, patchTree, (live, patch) => {
        expect(strategicMergePatch(live, patch, configMap)).toEqual(mergePatch(live, patch));
      }),
    );
  });
});
