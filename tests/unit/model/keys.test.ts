import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  formatKey,
  isPlainKey,
  isPlainReference,
  keyOf,
  kindKey,
  parseApiVersion,
  parseKey,
  parseKindKey,
  shared,
  validateReference,
} from '@/lib/model';

describe('object keys', () => {
  it('parses namespaced, cluster-scoped and core keys', () => {
    expect(parseKey('Database.demo.refwatch.dev/shop/orders')).toEqual({
      ok: true,
      value: { kind: 'Database', group: 'demo.refwatch.dev', namespace: 'shop', name: 'orders' },
    });
    expect(parseKey('ClusterRole.rbac.authorization.k8s.io//system:aggregate-to-view')).toMatchObject({
      ok: true,
      value: { namespace: '', name: 'system:aggregate-to-view' },
    });
    expect(parseKey('Secret/shop/db-password')).toMatchObject({ ok: true, value: { kind: 'Secret', group: '' } });
  });

  it('names the offending part and shows an example', () => {
    const cases: [string, RegExp][] = [
      ['Database/shop', /three '\/'-separated parts/],
      ['database/shop/x', /object\.kind "database"/],
      ['Database.Demo/shop/x', /object\.kind "Demo"/],
      ['Database/Shop/x', /object\.namespace "Shop"/],
      ['Database/shop/Orders', /object\.name "Orders"/],
      ['Database/shop/', /object\.name ""/],
      ['', /empty/],
    ];
    for (const [key, re] of cases) {
      const r = parseKey(key);
      expect(r.ok, key).toBe(false);
      if (!r.ok) {
        expect(r.error.message).toMatch(re);
        expect(r.error.message).toMatch(/example: /);
        expect(r.error.field).toMatch(/^object/);
      }
    }
  });

  it('rejects a colon in names except for RBAC kinds', () => {
    expect(parseKey('Secret/shop/a:b').ok).toBe(false);
    expect(parseKey('Role.rbac.authorization.k8s.io/shop/a:b').ok).toBe(true);
  });

  it('formatKey and parseKey round-trip', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z][a-zA-Z0-9]{0,10}$/),
        fc.oneof(
          fc.constant(''),
          label.map((l) => `${l}.io`),
        ),
        fc.oneof(fc.constant(''), label),
        label,
        (kind, group, namespace, name) => {
          const key = formatKey({ kind, group, namespace, name });
          const parsed = parseKey(key);
          expect(parsed).toEqual({ ok: true, value: { kind, group, namespace, name } });
        },
      ),
    );
  });

  describe('isPlainKey, the fast path of parseKey', () => {
    // Keys near the grammar's edges: its characters and a few others, cut and joined at random.
    const piece = fc
      .array(
        fc.oneof(
          fc.constantFrom('/', '.', '-', ':', '%', 'A', 'Z', 'a', 'z', '0', '9', 'É', ' ', 'rbac.authorization.k8s.io'),
          fc.stringMatching(/^[A-Za-z0-9.-]{1,8}$/),
        ),
        { maxLength: 6 },
      )
      .map((parts) => parts.join(''));
    // Three pieces joined by '/' most of the time, so that each part of a key meets the edges of its own rules.
    const near = fc.oneof(
      fc.tuple(fc.stringMatching(/^[A-Z]$/), piece, piece, piece).map(([k, a, b, c]) => `${k}${a}/${b}/${c}`),
      piece,
    );
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    const subdomain = fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => l.join('.'));

    it('accepts only keys that parseKey accepts', () => {
      fc.assert(
        fc.property(fc.oneof(near, fc.string()), (key) => {
          if (isPlainKey(key)) expect(parseKey(key).ok).toBe(true);
        }),
        { numRuns: 20_000 },
      );
    });

    it('accepts every key of the usual form, and refuses what breaks each of its parts', () => {
      fc.assert(
        fc.property(
          fc.stringMatching(/^[A-Z][a-zA-Z0-9]{0,10}$/),
          fc.oneof(fc.constant(''), subdomain),
          fc.oneof(fc.constant(''), label),
          subdomain,
          (kind, group, namespace, name) => {
            const key = formatKey({ kind, group, namespace, name });
            expect(isPlainKey(key)).toBe(true);
            expect(parseKey(key).ok).toBe(true);
          },
        ),
      );
      for (const key of [
        'Database.demo.refwatch.dev/shop/orders',
        'Secret/shop/db-password',
        'Namespace//shop',
        'Node//ip-10-0-0-1.ec2.internal',
      ])
        expect(isPlainKey(key), key).toBe(true);
      for (const key of [
        '',
        'Database/shop',
        'Database/shop/a/b',
        '/shop/orders',
        'database/shop/orders',
        'Data_base/shop/orders',
        'Database.Demo/shop/orders',
        'Database.demo..dev/shop/orders',
        'Database.-demo/shop/orders',
        'Database./shop/orders',
        'Database/Shop/orders',
        'Database/sh.op/orders',
        'Database/shop-/orders',
        'Database/shop/',
        'Database/shop/Orders',
        'Database/shop/orders.',
        'Database/shop/a:b',
        `Database/shop/${'a'.repeat(254)}`,
        `Database/${'a'.repeat(64)}/orders`,
        `D${'a'.repeat(63)}/shop/orders`,
        // Valid, but for parseKey to judge: an RBAC kind's path-segment name beyond DNS.
        'Role.rbac.authorization.k8s.io/shop/a:b',
      ])
        expect(isPlainKey(key), key).toBe(false);
      expect(isPlainKey(42 as unknown as string)).toBe(false);
    });

    it('isPlainReference accepts only references that validateReference accepts', () => {
      fc.assert(
        fc.property(near, fc.oneof(fc.constant('spec.databaseRef'), fc.string()), (referent, fieldPath) => {
          const ref = { referent, fieldPath };
          if (isPlainReference(ref)) expect(validateReference(ref).ok).toBe(true);
        }),
        { numRuns: 5_000 },
      );
      expect(isPlainReference({ referent: 'Secret/shop/x', fieldPath: 'spec.secretRef' })).toBe(true);
      expect(isPlainReference({ referent: 'Secret/shop/x', fieldPath: '' })).toBe(false);
      expect(isPlainReference(null as unknown as { referent: string; fieldPath: string })).toBe(false);
    });
  });

  it('keys objects from apiVersion, kind and metadata', () => {
    expect(
      keyOf({
        apiVersion: 'demo.refwatch.dev/v1alpha1',
        kind: 'Database',
        metadata: { name: 'orders', namespace: 'shop' },
      }),
    ).toBe('Database.demo.refwatch.dev/shop/orders');
    expect(keyOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } })).toBe('Namespace//shop');
  });

  it('parses kind keys and apiVersions', () => {
    expect(kindKey({ group: '', kind: 'Secret' })).toBe('Secret');
    expect(parseKindKey('Database.demo.refwatch.dev')).toEqual({
      ok: true,
      value: { kind: 'Database', group: 'demo.refwatch.dev' },
    });
    expect(parseApiVersion('apps/v1')).toEqual({ ok: true, value: { group: 'apps', version: 'v1' } });
    expect(parseApiVersion('a/b/c').ok).toBe(false);
  });

  it('validates references', () => {
    expect(validateReference({ referent: 'Secret/shop/x', fieldPath: 'spec.volumes[2].secret.secretName' }).ok).toBe(
      true,
    );
    const bad = validateReference({ referent: 'Secret/shop/x', fieldPath: '' });
    expect(bad.ok).toBe(false);
  });
});

describe('shared', () => {
  it('gives back a string equal to the one given, first seen or not', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const key = `App.demo.refwatch.dev/${s}/x`;
        const namespace = key.slice(key.indexOf('/') + 1, key.lastIndexOf('/'));
        expect(shared(namespace)).toBe(s);
        expect(shared(namespace.slice())).toBe(s);
      }),
    );
  });
});
