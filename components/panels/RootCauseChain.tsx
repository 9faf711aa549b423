'use client';

import { Fragment } from 'react';
import type { RootCause } from '@/lib/changelog/wire';
import { kindOfKey, nameOfKey, namespaceOfKey } from '@/lib/model/keys';
import { shortKind } from '../graph/model';
import styles from './panels.module.css';

/**
 * RootCauseChain shows the path from a blocked referrer to the deepest cause
 * of its chain, arrows between the objects, the deepest one highlighted,
 * then that cause's message and fix. Each object selects itself in the graph.
 */
export function RootCauseChain({
  rootCause,
  onSelectKey,
  showFix = true,
}: {
  rootCause: RootCause;
  onSelectKey(key: string): void;
  showFix?: boolean;
}) {
  const last = rootCause.path.length - 1;
  return (
    <div className={styles.chain} data-testid="root-cause">
      <p className={styles.chainPath} aria-label="Chain to the root cause">
        <span className={styles.chainLabel}>{rootCause.cycle ? 'Cycle' : 'Root cause'}</span>
        {rootCause.path.map((key, i) => (
          <Fragment key={`${i}-${key}`}>
            {i > 0 ? (
              <span className={styles.chainArrow} aria-hidden="true">
                {' → '}
              </span>
            ) : null}
            <button
              type="button"
              className={styles.chainStep}
              data-root={i === last && !rootCause.cycle ? 'true' : undefined}
              onClick={() => onSelectKey(key)}
              title={`Select ${key} in the graph`}
            >
              {shortKind(kindOfKey(key))} {namespaceOfKey(key) ? `${namespaceOfKey(key)}/` : ''}
              {nameOfKey(key)}
            </button>
          </Fragment>
        ))}
        {rootCause.truncated ? <span className={styles.muted}> → … (explain the last one to go on)</span> : null}
      </p>
      <p className={styles.chainMessage}>
        {rootCause.cycle ? 'These objects wait on each other: none can become ready first.' : rootCause.message}
      </p>
      {showFix && rootCause.fix && !rootCause.cycle ? (
        <p className={styles.fix}>
          <span className={styles.fixLabel}>Fix</span> {rootCause.fix}
        </p>
      ) : null}
    </div>
  );
}
