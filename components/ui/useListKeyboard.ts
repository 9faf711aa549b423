'use client';

import type { KeyboardEvent } from 'react';

/**
 * onListKeyDown moves focus between the list's rows with the arrow keys,
 * Home and End. Rows are the elements marked `data-row`; Enter on a row
 * is the row's own click handler (rows are buttons or have onKeyDown).
 */
export function onListKeyDown(event: KeyboardEvent<HTMLElement>): void {
  const keys = ['ArrowDown', 'ArrowUp', 'Home', 'End'];
  if (!keys.includes(event.key)) return;
  const rows = [...event.currentTarget.querySelectorAll<HTMLElement>('[data-row]')];
  if (rows.length === 0) return;
  const at = rows.findIndex((r) => r === document.activeElement || r.contains(document.activeElement));
  let next = at;
  if (event.key === 'ArrowDown') next = at < 0 ? 0 : Math.min(rows.length - 1, at + 1);
  if (event.key === 'ArrowUp') next = at < 0 ? 0 : Math.max(0, at - 1);
  if (event.key === 'Home') next = 0;
  if (event.key === 'End') next = rows.length - 1;
  event.preventDefault();
  rows[next]?.focus();
  rows[next]?.scrollIntoView({ block: 'nearest' });
}
