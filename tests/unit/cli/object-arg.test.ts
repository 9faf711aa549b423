import { describe, expect, it } from 'vitest';
import { CliError } from '@/lib/cli/errors';
import { pluralOf } from '@/lib/cli/kinds';
import { keyOfTyped, matchResource, parseObjectArg, type DiscoveredResource } from '@/lib/cli/object-arg';

describe('parseObjectArg', () => {
  it('reads refwatch keys, namespaced, core and cluster-scoped', () => {
    expect(parseObjectArg('Pod/shop/web')).toEqual({ form: 'key', key: 'Pod/shop/web' });
    expect(parseObjectArg('App.demo.refwatch.dev/shop/web')).toEqual({
      form: 'key',
      key: 'App.demo.refwatch.dev/shop/web',
    });
    expect(parseObjectArg('ClusterRole.rbac.authorization.k8s.io//view')).toEqual({
      form: 'key',
      key: 'ClusterRole.rbac.authorization.k8s.io//view',
    });
  });

  it("reads kubectl's TYPE/NAME and TYPE NAME", () => {
    expect(parseObjectArg('pod/web')).toEqual({ form: 'type', type: 'pod', name: 'web' });
    expect(parseObjectArg('apps.demo.refwatch.dev/web')).toEqual({
      form: 'type',
      type: 'apps.demo.refwatch.dev',
      name: 'web',
    });
    expect(parseObjectArg('App/web')).toEqual({ form: 'type', type: 'App', name: 'web' });
    expect(parseObjectArg('pods', 'web')).toEqual({ form: 'type', type: 'pods', name: 'web' });
  });

  it('refuses malformed objects with a message naming OBJECT and an example', () => {
    const cases: [string, string | undefined, RegExp][] = [
      ['', undefined, /argument OBJECT is empty: give an object such as pod\/web -n shop/],
      ['a/b/c/d', undefined, /argument OBJECT "a\/b\/c\/d" is not TYPE\/NAME/],
      ['pod/', undefined, /has no name after the type/],
      ['pod/web', 'api', /not both/],
      ['po d/web', undefined, /"po d" is not a resource type/],
      ['pod/Shop/web', undefined, /OBJECT/],
    ];
    for (const [text, name, message] of cases) {
      let caught: unknown;
      try {
        parseObjectArg(text, name);
      } catch (e) {
        caught = e;
      }
      expect(caught, text).toBeInstanceOf(CliError);
      expect((caught as CliError).exitCode).toBe(2);
      expect((caught as CliError).message).toMatch(message);
    }
  });
});

const RESOURCES: DiscoveredResource[] = [
  { group: '', kind: 'Pod', namespaced: true, resource: 'pods', singularName: 'pod', shortNames: ['po'] },
  {
    group: '',
    kind: 'Namespace',
    namespaced: false,
    resource: 'namespaces',
    singularName: 'namespace',
    shortNames: ['ns'],
  },
  {
    group: 'apps',
    kind: 'Deployment',
    namespaced: true,
    resource: 'deployments',
    singularName: 'deployment',
    shortNames: ['deploy'],
  },
  { group: 'demo.refwatch.dev', kind: 'App', namespaced: true, resource: 'apps', singularName: 'app' },
  { group: 'example.com', kind: 'Pod', namespaced: true, resource: 'pods', singularName: 'pod' },
];

describe('matchResource', () => {
  it('matches plural, singular, short name and kind, case-insensitively', () => {
    for (const t of ['pods', 'pod', 'po', 'Pod', 'PODS'])
      expect(matchResource(RESOURCES, t)[0], t).toMatchObject({ group: '', kind: 'Pod' });
    expect(matchResource(RESOURCES, 'deploy')[0]).toMatchObject({ group: 'apps', kind: 'Deployment' });
  });

  it('narrows by group, or by the start of one', () => {
    expect(matchResource(RESOURCES, 'apps.demo.refwatch.dev')).toEqual([RESOURCES[3]]);
    expect(matchResource(RESOURCES, 'app.demo')).toEqual([RESOURCES[3]]);
    expect(matchResource(RESOURCES, 'deployments.apps')).toEqual([RESOURCES[2]]);
    expect(matchResource(RESOURCES, 'pods.example.com')).toEqual([RESOURCES[4]]);
  });

  it('prefers the core group on a tie, and finds nothing for an unknown type', () => {
    expect(matchResource(RESOURCES, 'pods').map((r) => r.group)).toEqual(['', 'example.com']);
    expect(matchResource(RESOURCES, 'nosuch')).toEqual([]);
  });
});

describe('keyOfTyped', () => {
  it('puts namespaced objects in the namespace and cluster-scoped ones in none', () => {
    expect(keyOfTyped({ group: '', kind: 'Pod', namespaced: true }, 'web', 'shop')).toBe('Pod/shop/web');
    expect(keyOfTyped({ group: '', kind: 'Namespace', namespaced: false }, 'shop', 'default')).toBe('Namespace//shop');
  });

  it('names the flag or argument at fault', () => {
    expect(() => keyOfTyped({ group: '', kind: 'Pod', namespaced: true }, 'web', 'Bad_NS')).toThrow(/flag --namespace/);
    expect(() => keyOfTyped({ group: '', kind: 'Pod', namespaced: true }, 'Web!', 'shop')).toThrow(
      /argument OBJECT name/,
    );
  });
});

describe('pluralOf', () => {
  it('spells plurals as kinds are usually served', () => {
    expect(['database', 'policy', 'ingress', 'gateway', 'box'].map(pluralOf)).toEqual([
      'databases',
      'policies',
      'ingresses',
      'gateways',
      'boxes',
    ]);
  });
});
