'use client';

import { memo, useEffect, useRef, useState } from 'react';
import type { Facets } from '../graph/filtering';
import { GROUP_BY, type GroupBy } from '../graph/grouping';
import { LAYOUT_NAMES, type LayoutName } from '../graph/layout';
import { shortKind } from '../graph/model';
import { STATE_LOOK } from '../graph/style';
import type { ViewState } from './viewState';
import styles from './Dashboard.module.css';

export interface ToolbarProps {
  view: ViewState;
  facets: Facets;
  shown: number;
  total: number;
  autoGrouped: boolean;
  onChange(patch: Partial<ViewState>): void;
}

const GROUP_LABEL: Record<GroupBy, string> = {
  none: 'No grouping',
  namespace: 'By namespace',
  kind: 'By kind',
  flat: 'Never group',
};
const LAYOUT_LABEL: Record<LayoutName, string> = { layered: 'Layered', force: 'Force' };

/** Toolbar holds search and filters; `/` focuses the search box from anywhere. */
export const Toolbar = memo(function Toolbar({ view, facets, shown, total, autoGrouped, onChange }: ToolbarProps) {
  const [q, setQ] = useState(view.q);
  const inputRef = useRef<HTMLInputElement>(null);
  const latest = useRef(onChange);
  latest.current = onChange;

  useEffect(() => setQ(view.q), [view.q]);
  useEffect(() => {
    if (q === view.q) return;
    const id = setTimeout(() => latest.current({ q }), 150);
    return () => clearTimeout(id);
  }, [q, view.q]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== '/' || e.metaKey || e.ctrlKey || e.altKey) return;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable))
        return;
      e.preventDefault();
      inputRef.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const filtered = view.q !== '' || view.ns !== '' || view.kind !== '' || view.state !== '';
  // A value from a shared link may not exist (yet) in this snapshot; keep it selectable.
  const withCurrent = (values: string[], current: string) =>
    current !== '' && !values.includes(current) ? [current, ...values] : values;

  return (
    <div className={styles.toolbar} role="search" aria-label="Find references">
      <div className={styles.searchBox}>
        <span aria-hidden="true" className={styles.searchIcon}>
          ⌕
        </span>
        <input
          ref={inputRef}
          type="search"
          value={q}
          placeholder="Search objects, kinds, reasons…"
          aria-label="Search objects"
          onChange={(e) => setQ(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') onChange({ q });
            if (e.key === 'Escape' && q !== '') {
              e.stopPropagation();
              setQ('');
              onChange({ q: '' });
            }
          }}
        />
        <kbd aria-hidden="true" className={styles.searchKey}>
          /
        </kbd>
      </div>
      <label className={styles.filter}>
        <span>Namespace</span>
        <select value={view.ns} onChange={(e) => onChange({ ns: e.target.value })}>
          <option value="">All</option>
          {withCurrent(facets.namespaces, view.ns).map((ns) => (
            <option key={ns} value={ns}>
              {ns}
            </option>
          ))}
        </select>
      </label>
      <label className={styles.filter}>
        <span>Kind</span>
        <select value={view.kind} onChange={(e) => onChange({ kind: e.target.value })}>
          <option value="">All</option>
          {withCurrent(facets.kinds, view.kind).map((k) => (
            <option key={k} value={k} title={k}>
              {shortKind(k)}
            </option>
          ))}
        </select>
      </label>
      <label className={styles.filter}>
        <span>State</span>
        <select value={view.state} onChange={(e) => onChange({ state: e.target.value })}>
          <option value="">All</option>
          {withCurrent(facets.states, view.state).map((s) => (
            <option key={s} value={s}>
              {STATE_LOOK[s as keyof typeof STATE_LOOK]?.label ?? s}
            </option>
          ))}
        </select>
      </label>
      <label className={styles.filter}>
        <span>Group</span>
        <select value={view.group} onChange={(e) => onChange({ group: e.target.value as GroupBy })}>
          {GROUP_BY.map((g) => (
            <option key={g} value={g}>
              {GROUP_LABEL[g]}
            </option>
          ))}
        </select>
      </label>
      <label className={styles.filter}>
        <span>Layout</span>
        <select
          value={view.layout}
          onChange={(e) => onChange({ layout: e.target.value as LayoutName })}
          title="Layered: referrers left, referents right. Force: a force-directed layout."
        >
          {LAYOUT_NAMES.map((l) => (
            <option key={l} value={l}>
              {LAYOUT_LABEL[l]}
            </option>
          ))}
        </select>
      </label>
      {filtered ? (
        <button
          type="button"
          className={styles.clearButton}
          onClick={() => {
            setQ('');
            onChange({ q: '', ns: '', kind: '', state: '' });
          }}
        >
          Clear filters
        </button>
      ) : null}
      <div className={styles.toolbarSpacer} />
      <p className={styles.matchCount} aria-live="polite">
        {filtered ? (
          <>
            <strong>{shown.toLocaleString('en-US')}</strong> of {total.toLocaleString('en-US')} match
          </>
        ) : (
          <>
            <strong>{total.toLocaleString('en-US')}</strong> nodes
          </>
        )}
        {autoGrouped ? (
          <span className={styles.autoGrouped}> · large graph: grouped, click a group to expand</span>
        ) : null}
      </p>
    </div>
  );
});
