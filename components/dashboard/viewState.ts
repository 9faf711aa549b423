import { GROUP_BY, type GroupBy } from '../graph/grouping';
import { LAYOUT_NAMES, type LayoutName } from '../graph/layout';

export type PanelTab = 'stuck' | 'controllers' | 'events' | 'cluster' | 'demo';
export const PANEL_TABS: readonly PanelTab[] = ['stuck', 'controllers', 'events', 'cluster', 'demo'];

/**
 * ViewState is everything a shared link restores:
 * `?select=KEY&ns=…&kind=…&state=…&q=…&object=KEY&stuck=1&view=overview|graph|scope&group=…&tab=…&layout=…&at=…`.
 * Empty means unset. On a large registry (or with view=scope) ns, kind, q,
 * object and stuck are the scope the server is asked for; on a small one
 * they filter in the browser. `at` is the past moment shown, as written in
 * the URL (pastMoment.ts reads it); empty is live.
 */
export interface ViewState {
  select: string;
  q: string;
  ns: string;
  kind: string;
  object: string;
  stuck: '' | '1';
  state: string;
  group: GroupBy;
  tab: PanelTab;
  view: '' | 'overview' | 'graph' | 'scope';
  layout: LayoutName;
  at: string;
}

export const DEFAULT_VIEW: ViewState = {
  select: '',
  q: '',
  ns: '',
  kind: '',
  object: '',
  stuck: '',
  state: '',
  group: 'none',
  tab: 'stuck',
  view: '',
  layout: 'layered',
  at: '',
};

const MAX_PARAM = 512;

/** parseViewState reads a URL query; unknown or oversized values fall back to the default rather than failing. */
export function parseViewState(params: URLSearchParams | { get(name: string): string | null }): ViewState {
  const text = (name: string) => {
    const v = params.get(name);
    return v === null || v.length > MAX_PARAM ? '' : v;
  };
  const group = text('group');
  const tab = text('tab');
  const view = text('view');
  const layout = text('layout');
  return {
    select: text('select').trim(),
    q: text('q'),
    ns: text('ns').trim(),
    kind: text('kind').trim(),
    object: text('object').trim(),
    stuck: text('stuck') === '1' || text('stuck') === 'true' ? '1' : '',
    view: view === 'overview' || view === 'graph' || view === 'scope' ? view : '',
    state: text('state').trim().toLowerCase(),
    group: (GROUP_BY as readonly string[]).includes(group) ? (group as GroupBy) : DEFAULT_VIEW.group,
    tab: (PANEL_TABS as readonly string[]).includes(tab) ? (tab as PanelTab) : DEFAULT_VIEW.tab,
    layout: (LAYOUT_NAMES as readonly string[]).includes(layout) ? (layout as LayoutName) : DEFAULT_VIEW.layout,
    at: text('at').trim(),
  };
}

/** serializeViewState writes only what differs from the default, in a stable order, so links stay short. */
export function serializeViewState(v: ViewState): string {
  const out = new URLSearchParams();
  for (const name of [
    'select',
    'q',
    'ns',
    'kind',
    'object',
    'stuck',
    'state',
    'group',
    'tab',
    'view',
    'layout',
    'at',
  ] as const) {
    const value = v[name];
    if (value !== '' && value !== DEFAULT_VIEW[name]) out.set(name, value);
  }
  const s = out.toString();
  return s === '' ? '' : `?${s}`;
}
