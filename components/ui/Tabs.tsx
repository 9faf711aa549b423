'use client';

import { useRef, type KeyboardEvent, type ReactNode } from 'react';
import styles from './ui.module.css';

export interface TabSpec<T extends string> {
  id: T;
  label: string;
  count?: number;
  tone?: 'attention';
}

/** Tabs follows the WAI-ARIA tabs pattern: one tab stop, arrow keys move between tabs, activation follows focus. */
export function Tabs<T extends string>({
  tabs,
  active,
  onChange,
  label,
  children,
}: {
  tabs: TabSpec<T>[];
  active: T;
  onChange(id: T): void;
  label: string;
  children: ReactNode;
}) {
  const listRef = useRef<HTMLDivElement>(null);
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const i = tabs.findIndex((t) => t.id === active);
    let next: number;
    if (e.key === 'ArrowRight') next = (i + 1) % tabs.length;
    else if (e.key === 'ArrowLeft') next = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = tabs.length - 1;
    else return;
    e.preventDefault();
    const tab = tabs[next];
    if (!tab) return;
    onChange(tab.id);
    listRef.current?.querySelector<HTMLElement>(`#tab-${tab.id}`)?.focus();
  };
  return (
    <div className={styles.tabs}>
      <div role="tablist" aria-label={label} className={styles.tablist} ref={listRef} onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            id={`tab-${t.id}`}
            role="tab"
            type="button"
            aria-selected={t.id === active}
            aria-controls={`tabpanel-${t.id}`}
            tabIndex={t.id === active ? 0 : -1}
            className={styles.tab}
            onClick={() => onChange(t.id)}
          >
            {t.label}
            {t.count !== undefined ? (
              <span className={styles.tabCount} data-tone={t.tone}>
                {t.count}
              </span>
            ) : null}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`tabpanel-${active}`}
        aria-labelledby={`tab-${active}`}
        className={styles.tabpanel}
        tabIndex={-1}
      >
        {children}
      </div>
    </div>
  );
}
