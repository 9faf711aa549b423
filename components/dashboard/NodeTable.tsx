'use client';

import type { GraphNode } from '../graph/model';
import { shortKind } from '../graph/model';
import { STATE_LOOK } from '../graph/style';
import { StateBadge } from '../ui/StateBadge';
import { onListKeyDown } from '../ui/useListKeyboard';
import styles from './Dashboard.module.css';

const ROW_LIMIT = 500;

/**
 * NodeTable mirrors the graph's nodes as a real table: the way to reach every
 * node by keyboard or screen reader. Arrow keys move between rows, Enter
 * selects, exactly like clicking the node in the graph.
 */
export function NodeTable({ nodes, selectedId, onSelect }: { nodes: GraphNode[]; selectedId: string; onSelect(nodeId: string): void }) {
  const rows = nodes
    .filter((n) => n.type !== 'group')
    .sort((a, b) => (a.context === b.context ? 0 : a.context ? 1 : -1) || attention(b) - attention(a) || a.key.localeCompare(b.key));
  const shown = rows.slice(0, ROW_LIMIT);
  return (
    <section className={styles.objects} id="objects" aria-labelledby="objects-title">
      <header className={styles.sectionHeader}>
        <h2 id="objects-title">Objects</h2>
        <span className={styles.muted}>
          {rows.length.toLocaleString('en-US')} {rows.length === 1 ? 'node' : 'nodes'}
          {rows.length > ROW_LIMIT ? ` · first ${ROW_LIMIT} shown; narrow with search` : ''} · <kbd>↑</kbd> <kbd>↓</kbd> move, <kbd>Enter</kbd> selects
        </span>
      </header>
      <div className={styles.tableScroll}>
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">State</th>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Namespace</th>
              <th scope="col">Role</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody onKeyDown={onListKeyDown}>
            {shown.map((n) => (
              <tr
                key={n.id}
                data-row
                tabIndex={0}
                aria-current={n.id === selectedId ? "true" : undefined}
                data-context={n.context ? 'true' : undefined}
                onClick={() => onSelect(n.id)}
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
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function attention(n: GraphNode): number {
  return { error: 5, stuck: 4, notfound: 3, waiting: 2 }[n.state as string] ?? 0;
}
