import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  apiVersionOf,
  formatKey,
  groupOfApiVersion,
  keyHasKind,
  keyHasNamespace,
  kindKey,
  kindOfKey,
  nameOfKey,
  namespaceOfKey,
  parseApiVersion,
  splitApiVersion,
  splitKey,
} from '@/lib/model';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const group = fc.oneof(
  fc.constant(''),
  label.map((l) => `${l}.io`),
);
const ref = fc.record({
  kind: fc.stringMatching(/^[A-Z][a-zA-Z0-9]{0,10}$/),
  group,
  namespace: fc.oneof(fc.constant(''), label),
  name: label,
});

describe('splitting keys without validating them', () => {
  it('splitKey gives back the parts formatKey joined, and agrees with kindOfKey, namespaceOfKey and nameOfKey', () => {
    fc.assert(
      fc.property(ref, (r) => {
        const key = formatKey(r);
        const parts = { kind: kindKey(r), namespace: r.namespace, name: r.name };
        expect(splitKey(key)).toEqual(parts);
        expect([kindOfKey(key), namespaceOfKey(key), nameOfKey(key)]).toEqual([
          parts.kind,
          parts.namespace,
          parts.name,
        ]);
      }),
    );
  });

  it('splitKey gives undefined for a string with fewer than two separators', () => {
    expect(splitKey('Secret')).toBeUndefined();
    expect(splitKey('Secret/shop')).toBeUndefined();
    expect(splitKey('')).toBeUndefined();
    expect(splitKey('ClusterRole.rbac.authorization.k8s.io//view')).toEqual({
      kind: 'ClusterRole.rbac.authorization.k8s.io',
      namespace: '',
      name: 'view',
    });
  });

  it('keyHasKind and keyHasNamespace answer as comparing the split parts would', () => {
    const key = fc.oneof(ref.map(formatKey), fc.string({ unit: fc.constantFrom('a', 'b', '/', 'S'), maxLength: 8 }));
    const part = fc.oneof(fc.constantFrom('', 'a', 'S', 'Secret', 'shop'), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(key, part, (k, p) => {
        const parts = splitKey(k);
        expect(keyHasKind(k, p)).toBe(k.includes('/') && kindOfKey(k) === p);
        expect(keyHasNamespace(k, p)).toBe(parts !== undefined && parts.namespace === p);
      }),
    );
    expect(keyHasKind('Secret/shop/x', 'Secret')).toBe(true);
    expect(keyHasKind('Secrets/shop/x', 'Secret')).toBe(false);
    expect(keyHasKind('Secret', 'Secret')).toBe(false);
    expect(keyHasNamespace('Secret/shop/x', 'shop')).toBe(true);
    expect(keyHasNamespace('Secret/shopping/x', 'shop')).toBe(false);
    expect(keyHasNamespace('Secret/shop', 'shop')).toBe(false);
  });
});

describe('splitting apiVersions without validating them', () => {
  it('splitApiVersion takes apart what apiVersionOf formats, as parseApiVersion does for valid ones', () => {
    fc.assert(
      fc.property(group, fc.stringMatching(/^v[1-9][0-9]?((alpha|beta)[1-9])?$/), (g, version) => {
        const apiVersion = apiVersionOf({ group: g, version });
        expect(splitApiVersion(apiVersion)).toEqual({ group: g, version });
        expect(groupOfApiVersion(apiVersion)).toBe(g);
        expect(parseApiVersion(apiVersion)).toEqual({ ok: true, value: { group: g, version } });
      }),
    );
  });

  it('splits at the first slash and never throws', () => {
    expect(splitApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
    expect(splitApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(splitApiVersion('')).toEqual({ group: '', version: '' });
    expect(groupOfApiVersion('demo.refwatch.dev/v1alpha1')).toBe('demo.refwatch.dev');
    expect(groupOfApiVersion('v1')).toBe('');
  });
});
