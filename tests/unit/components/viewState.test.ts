import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, parseViewState, serializeViewState } from '@/components/dashboard/viewState';

describe('URL view state', () => {
  it('round-trips selection, search and filters through the query string', () => {
    const view = {
      ...DEFAULT_VIEW,
      select: 'Database.demo.refwatch.dev/shop/orders',
      q: 'not found',
      ns: 'shop',
      kind: 'App.demo.refwatch.dev',
      state: 'stuck',
      group: 'kind' as const,
      tab: 'events' as const,
    };
    const query = serializeViewState(view);
    expect(parseViewState(new URLSearchParams(query))).toEqual(view);
  });

  it('writes nothing for the default view, so the plain URL is the default', () => {
    expect(serializeViewState(DEFAULT_VIEW)).toBe('');
    expect(serializeViewState({ ...DEFAULT_VIEW, ns: 'shop' })).toBe('?ns=shop');
  });

  it('reads an object key with slashes from a hand-written link', () => {
    const v = parseViewState(new URLSearchParams('select=Secret/shop/db-password&state=Stuck'));
    expect(v.select).toBe('Secret/shop/db-password');
    expect(v.state).toBe('stuck');
  });

  it('falls back to defaults for unknown grouping, unknown tab and oversized values', () => {
    const v = parseViewState(new URLSearchParams(`group=planet&tab=nope&q=${'x'.repeat(2000)}`));
    expect(v.group).toBe('none');
    expect(v.tab).toBe('stuck');
    expect(v.q).toBe('');
  });
});

describe('flat grouping in the URL', () => {
  it('keeps ?group=flat, which draws every node ungrouped', () => {
    const v = parseViewState(new URLSearchParams('group=flat'));
    expect(v.group).toBe('flat');
    expect(serializeViewState(v)).toBe('?group=flat');
  });
});

describe('layout in the URL', () => {
  it('is layered by default, keeps ?layout=force, and ignores an unknown one', () => {
    expect(parseViewState(new URLSearchParams('')).layout).toBe('layered');
    const force = parseViewState(new URLSearchParams('layout=force'));
    expect(force.layout).toBe('force');
    expect(serializeViewState(force)).toBe('?layout=force');
    expect(serializeViewState({ ...force, layout: 'layered' })).toBe('');
    expect(parseViewState(new URLSearchParams('layout=spiral')).layout).toBe('layered');
  });
});
