import { memo } from 'react';
import { CONTROLLER_STATES, OBJECT_STATES } from './model';
import { STATE_LOOK } from './style';
import styles from './Legend.module.css';

/** Legend is a strip under the graph: glyph, border style and colour per state, and what each shape and line means. */
export const Legend = memo(function Legend() {
  return (
    <div className={styles.legend} aria-label="Legend" role="group">
      <ul aria-label="Object states">
        {OBJECT_STATES.map((s) => (
          <li key={s} title={STATE_LOOK[s].description}>
            <span className={styles.swatch} data-state={s} aria-hidden="true">
              {STATE_LOOK[s].glyph}
            </span>
            {STATE_LOOK[s].label}
          </li>
        ))}
      </ul>
      <ul aria-label="Controller states">
        {CONTROLLER_STATES.map((s) => (
          <li key={s} title={STATE_LOOK[s].description}>
            <span className={`${styles.swatch} ${styles.hex}`} data-state={s} aria-hidden="true">
              {STATE_LOOK[s].glyph}
            </span>
            {STATE_LOOK[s].label}
          </li>
        ))}
      </ul>
      <ul aria-label="Shapes and lines" className={styles.shapes}>
        <li>
          <span className={styles.shapeRect} aria-hidden="true" /> referrer
        </li>
        <li>
          <span className={styles.shapeCircle} aria-hidden="true" /> referent
        </li>
        <li>
          <span className={styles.shapeHex} aria-hidden="true" /> controller
        </li>
        <li>
          <span className={styles.lineSolid} aria-hidden="true" /> reference
        </li>
        <li>
          <span className={styles.lineDotted} aria-hidden="true" /> selector match
        </li>
        <li>
          <span className={styles.lineDashed} aria-hidden="true" /> watched by
        </li>
      </ul>
    </div>
  );
});
