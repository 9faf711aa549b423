import type { NodeState } from '../graph/model';
import { STATE_LOOK } from '../graph/style';
import styles from './ui.module.css';

/** StateBadge shows a state by glyph, word and colour together, never colour alone. */
export function StateBadge({ state, compact = false }: { state: NodeState; compact?: boolean }) {
  const look = STATE_LOOK[state];
  if (!look) return <span className={styles.badge}>{String(state)}</span>;
  return (
    <span
      className={`${styles.badge} ${compact ? styles.badgeCompact : ''}`}
      data-state={state}
      title={`${look.label}: ${look.description}`}
    >
      <span aria-hidden="true" className={styles.badgeGlyph}>
        {look.glyph}
      </span>
      {look.label}
    </span>
  );
}
