import { describe, expect, it } from 'vitest';
import { matchesSelector, parseNamespaceSelector, parseSelector, type Selector } from '@/lib/model';

function sel(raw: unknown, form: 'labelSelector' | 'map' = 'labelSelector', empty: 'all' | 'none' = 'all'): Selector {
  const r = parseSelector(raw, { form, empty, field: 'spec.selector' });
  if (!r.ok) throw r.error;
  if (!r.value) throw new Error('no selector');
  return r.value;
}

describe('label selectors', () => {
  it('match matchLabels and each matchExpressions operator with apimachinery semantics', () => {
    const s = sel({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'edge'] },
        { key: 'track', operator: 'NotIn', values: ['canary'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(s.text).toBe('app=web,legacy,team,tier in (edge,front),track!=canary'.replace('legacy', '!legacy'));
    const base = { app: 'web', tier: 'front', team: 'a' };
    expect(matchesSelector(s, base)).toBe(true);
    // NotIn matches an absent key, as in Kubernetes.
    expect(matchesSelector(s, { ...base, track: 'stable' })).toBe(true);
    expect(matchesSelector(s, { ...base, track: 'canary' })).toBe(false);
    expect(matchesSelector(s, { ...base, tier: 'back' })).toBe(false);
    expect(matchesSelector(s, { app: 'web', tier: 'front' })).toBe(false);
    expect(matchesSelector(s, { ...base, legacy: '' })).toBe(false);
    expect(matchesSelector(s, { ...base, app: 'api' })).toBe(false);
  });

  it('reads the map form a Service uses, and says an empty one is no reference', () => {
    expect(matchesSelector(sel({ app: 'web' }, 'map', 'none'), { app: 'web', x: 'y' })).toBe(true);
    expect(parseSelector({}, { form: 'map', empty: 'none' })).toEqual({ ok: true, value: undefined });
    expect(parseSelector(undefined, { form: 'map', empty: 'none' })).toEqual({ ok: true, value: undefined });
  });

  it('lets an empty label selector match everything where the field says so', () => {
    const all = sel({});
    expect(all.text).toBe('');
    expect(matchesSelector(all, {})).toBe(true);
    expect(matchesSelector(all, undefined)).toBe(true);
    expect(parseSelector({}, { form: 'labelSelector', empty: 'none' })).toEqual({ ok: true, value: undefined });
  });

  it('names the bad field and shows a fix', () => {
    const cases: [unknown, RegExp][] = [
      [{ matchLabel: { app: 'web' } }, /spec\.selector\.matchLabel is not a field of a label selector.*matchLabels/],
      [
        { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] },
        /matchExpressions\[0\]\.operator must be In/,
      ],
      [{ matchExpressions: [{ key: 'a', operator: 'In' }] }, /matchExpressions\[0\]\.values must not be empty/],
      [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, /values must be empty/],
      [{ matchLabels: { 'bad key!': 'x' } }, /matchLabels\["bad key!"\] is not a valid label key/],
      [{ matchLabels: { app: 'no spaces' } }, /matchLabels\["app"\] has an invalid label value/],
      ['app=web', /spec\.selector must be an object/],
    ];
    for (const [raw, re] of cases) {
      const r = parseSelector(raw, { form: 'labelSelector', field: 'spec.selector' });
      expect(r.ok, JSON.stringify(raw)).toBe(false);
      if (!r.ok) {
        expect(r.error.message).toMatch(re);
        expect(r.error.message).toMatch(/example:/);
        expect(r.error.field).toMatch(/^spec\.selector/);
      }
    }
  });

  it('reads namespace selectors in label form and in the Prometheus Operator form', () => {
    expect(parseNamespaceSelector({ any: true })).toEqual({ ok: true, value: { type: 'any' } });
    expect(parseNamespaceSelector({ matchNames: ['b', 'a', 'a'] })).toEqual({
      ok: true,
      value: { type: 'names', names: ['a', 'b'] },
    });
    const labels = parseNamespaceSelector({ matchLabels: { team: 'shop' } });
    expect(labels.ok && labels.value?.type === 'labels' && labels.value.selector.text).toBe('team=shop');
    const bad = parseNamespaceSelector({ matchNames: ['Not_A_Namespace'] }, 'spec.namespaceSelector');
    expect(!bad.ok && bad.error.message).toMatch(/spec\.namespaceSelector\.matchNames must be a list of namespace/);
  });
});
