'use client';

import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { GraphNode } from '../graph/model';
import { shortKind } from '../graph/model';
import { STATE_LOOK } from '../graph/style';
import { StateBadge } from '../ui/StateBadge';
import { orderRows, rowWindow, scrollToShow, type RowOrder } from './rows';
import styles from './Dashboard.module.css';

/** Rows are a fixed height (Dashboard.module.css `.table tbody tr`), so the table renders only the rows in view. */
const ROW_HEIGHT = 26;
const OVERSCAN = 8;

export interface NodeTableProps {
  nodes: GraphNode[];
  selectedId: string;
  onSelect(nodeId: string): void;
}

/**
 * NodeTable mirrors the graph's nodes as a real table: the way to reach every
 * node by keyboard or screen reader. Only the rows in view are in the DOM;
 * aria-rowcount and aria-rowindex tell assistive technology where they sit.
 * Arrow keys, Page Up/Down, Home and End move between all rows, Enter
 * selects, exactly like clicking the node in the graph.
 */
export const NodeTable = memo(function NodeTable({ nodes, selectedId, onSelect }: NodeTableProps) {
  const orderRef = useRef<RowOrder | undefined>(undefined);
  const order = useMemo(() => {
    const next = orderRows(nodes, orderRef.current);
    orderRef.current = next;
    return next;
  }, [nodes]);
  const rows = order.rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const headRef = useRef<HTMLTableSectionElement>(null);
  const [viewport, setViewport] = useState({ scrollTop: 0, height: 600 });
  const [activeId, setActiveId] = useState('');
  const focusPending = useRef<string | undefined>(undefined);

  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const measure = () =>
      setViewport((v) =>
        v.height === el.clientHeight && v.scrollTop === el.scrollTop
          ? v
          : { scrollTop: el.scrollTop, height: el.clientHeight },
      );
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const { first, last } = rowWindow(rows.length, viewport.scrollTop, viewport.height, ROW_HEIGHT, OVERSCAN);
  const activeIndex = activeId ? rows.findIndex((n) => n.id === activeId) : -1;
  // One row is in the tab order: the active one when it is rendered, else the first rendered.
  const tabbable = activeIndex >= first && activeIndex < last ? activeIndex : first;

  useLayoutEffect(() => {
    const id = focusPending.current;
    if (id === undefined) return;
    focusPending.current = undefined;
    scrollRef.current?.querySelector<HTMLElement>(`tr[data-id="${CSS.escape(id)}"]`)?.focus({ preventScroll: true });
  });

  const moveTo = useCallback(
    (index: number) => {
      const el = scrollRef.current;
      const target = rows[index];
      if (!el || !target) return;
      const header = headRef.current?.offsetHeight ?? 0;
      el.scrollTop = scrollToShow(index, el.scrollTop, el.clientHeight, ROW_HEIGHT, header);
      focusPending.current = target.id;
      setActiveId(target.id);
      setViewport({ scrollTop: el.scrollTop, height: el.clientHeight });
    },
    [rows],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLTableSectionElement>) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>('tr[data-index]');
    const at = row ? Number(row.dataset.index) : -1;
    const page = Math.max(1, Math.floor(viewport.height / ROW_HEIGHT) - 1);
    const next: Record<string, number> = {
      ArrowDown: at < 0 ? 0 : Math.min(rows.length - 1, at + 1),
      ArrowUp: at < 0 ? 0 : Math.max(0, at - 1),
      PageDown: Math.min(rows.length - 1, Math.max(0, at) + page),
      PageUp: Math.max(0, at - page),
      Home: 0,
      End: rows.length - 1,
    };
    const to = next[event.key];
    if (to === undefined || rows.length === 0) return;
    event.preventDefault();
    moveTo(to);
  };

  return (
    <section className={styles.objects} id="objects" aria-labelledby="objects-title">
      <header className={styles.sectionHeader}>
        <h2 id="objects-title">Objects</h2>
        <span className={styles.muted}>
          {rows.length.toLocaleString('en-US')} {rows.length === 1 ? 'node' : 'nodes'} · <kbd>↑</kbd> <kbd>↓</kbd> move,{' '}
          <kbd>Enter</kbd> selects
        </span>
      </header>
      <div
        className={styles.tableScroll}
        ref={scrollRef}
        onScroll={(e) => setViewport({ scrollTop: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
      >
        <div style={{ paddingTop: first * ROW_HEIGHT, paddingBottom: (rows.length - last) * ROW_HEIGHT }}>
          <table className={styles.table} aria-rowcount={rows.length + 1} aria-labelledby="objects-title">
            <thead ref={headRef}>
              <tr aria-rowindex={1}>
                <th scope="col">State</th>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Namespace</th>
                <th scope="col">Role</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody onKeyDown={onKeyDown}>
              {rows.slice(first, last).map((n, i) => (
                <NodeRow
                  key={n.id}
                  node={n}
                  index={first + i}
                  selected={n.id === selectedId}
                  tabbable={first + i === tabbable}
                  onSelect={onSelect}
                  onFocusRow={setActiveId}
                />
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
});

interface NodeRowProps {
  node: GraphNode;
  index: number;
  selected: boolean;
  tabbable: boolean;
  onSelect(nodeId: string): void;
  onFocusRow(nodeId: string): void;
}

/** NodeRow re-renders only when its node, position or selection changed. */
const NodeRow = memo(function NodeRow({ node: n, index, selected, tabbable, onSelect, onFocusRow }: NodeRowProps) {
  return (
    <tr
      data-row
      data-id={n.id}
      data-index={index}
      aria-rowindex={index + 2}
      tabIndex={tabbable ? 0 : -1}
      aria-current={selected ? 'true' : undefined}
      data-context={n.context ? 'true' : undefined}
      onClick={() => onSelect(n.id)}
      onFocus={() => onFocusRow(n.id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          onSelect(n.id);
        }
      }}
      aria-label={`${n.label}, ${shortKind(n.kind)}${n.namespace ? ` in ${n.namespace}` : ''}, ${STATE_LOOK[n.state].label}`}
    >
      <td>
        <StateBadge state={n.state} compact />
      </td>
      <td className={styles.nameCell}>{n.label}</td>
      <td title={n.kind}>{shortKind(n.kind)}</td>
      <td>{n.namespace || <span className={styles.muted}>cluster</span>}</td>
      <td>{n.type === 'controller' ? 'controller' : n.roles.join(' + ')}</td>
      <td className={styles.reasonCell} title={n.reason}>
        {n.reason ?? ''}
      </td>
    </tr>
  );
});
