import { describe, expect, it } from 'vitest';
import {
  OVERVIEW_ABOVE_REFERENCES,
  chooseMode,
  isSummary,
  modeKey,
  scopeQuery,
  type ScopeParams,
} from '@/components/data/scope';

const none: ScopeParams = { ns: '', kind: '', q: '', object: '', stuck: false, view: '' };
const large = OVERVIEW_ABOVE_REFERENCES + 1;

describe('chooseMode', () => {
  it('opens a small registry, or one of unknown size, on the whole graph, and a large one on the overview', () => {
    expect(chooseMode(none, OVERVIEW_ABOVE_REFERENCES)).toEqual({ mode: 'all' });
    expect(chooseMode(none, undefined)).toEqual({ mode: 'all' });
    expect(chooseMode(none, large)).toEqual({ mode: 'overview' });
  });

  it('scopes a large registry to what the URL names, and filters a small one in the browser', () => {
    const p = { ...none, ns: 'shop', q: ' orders ', stuck: true };
    expect(chooseMode(p, large)).toEqual({
      mode: 'scoped',
      scope: { namespace: 'shop', kind: '', q: 'orders', object: '', stuck: true },
    });
    expect(chooseMode(p, 10)).toEqual({ mode: 'all' });
  });

  it('honours an explicit view=overview or view=graph', () => {
    expect(chooseMode({ ...none, view: 'overview' }, 10)).toEqual({ mode: 'overview' });
    expect(chooseMode({ ...none, view: 'graph' }, large)).toEqual({ mode: 'all' });
  });
});

describe('scopeQuery', () => {
  it('asks both endpoints for the same scope', () => {
    const mode = chooseMode({ ...none, kind: 'Secret', object: 'Secret/shop/db', stuck: true }, large);
    expect(scopeQuery(mode)).toBe('?kind=Secret&object=Secret%2Fshop%2Fdb&stuck=1');
    expect(scopeQuery({ mode: 'overview' })).toBe('?overview=1');
    expect(scopeQuery({ mode: 'all' })).toBe('');
    expect(modeKey(mode)).not.toBe(modeKey(chooseMode({ ...none, kind: 'Secret' }, large)));
  });
});

describe('isSummary', () => {
  it('tells a summary from other JSON', () => {
    expect(isSummary({ totals: {}, namespaces: [], kinds: [], stuckList: [] })).toBe(true);
    expect(isSummary({ error: { code: 'NotFound' } })).toBe(false);
    expect(isSummary(null)).toBe(false);
  });
});

describe('view=scope', () => {
  it('asks the server for the scope on a small registry too', () => {
    expect(chooseMode({ ...none, ns: 'shop', view: 'scope' }, 10)).toMatchObject({
      mode: 'scoped',
      scope: { namespace: 'shop' },
    });
    expect(chooseMode({ ...none, view: 'scope' }, 10)).toEqual({ mode: 'overview' });
  });
});
