'use client';

import { memo } from 'react';
import type { StuckEntry } from '@/lib/changelog/wire';
import { nameOfKey, namespaceOfKey, kindOfKey } from '@/lib/model/keys';
import { shortKind } from '../graph/model';
import { formatDuration } from '../ui/format';
import { onListKeyDown } from '../ui/useListKeyboard';
import styles from './panels.module.css';

/** StuckPanel lists referrers unresolved past the threshold, oldest first, each with its reason and fix. */
export const StuckPanel = memo(function StuckPanel({
  stuck,
  onSelectKey,
}: {
  stuck: StuckEntry[];
  onSelectKey(key: string): void;
}) {
  if (stuck.length === 0) {
    return (
      <div className={styles.empty}>
        <p className={styles.emptyTitle}>Nothing is stuck</p>
        <p>
          Every referrer resolved, or is waiting less than the threshold. Referrers that stay unresolved show up here,
          oldest first, with the reason and a fix.
        </p>
      </div>
    );
  }
  return (
    <ol className={styles.list} aria-label="Stuck references, oldest first" onKeyDown={onListKeyDown}>
      {stuck.map((s) => (
        <li key={s.id} className={styles.stuckItem}>
          <div className={styles.rowHead}>
            <button
              type="button"
              data-row
              className={styles.objectLink}
              onClick={() => onSelectKey(s.key)}
              title={`Select ${s.key} in the graph`}
            >
              <span className={styles.kindTag}>{shortKind(kindOfKey(s.key))}</span>
              <span className={styles.ns}>{namespaceOfKey(s.key)}/</span>
              <strong>{nameOfKey(s.key)}</strong>
            </button>
            <span className={styles.age} title={`stuck since ${new Date(s.since).toISOString()}`}>
              {formatDuration(s.ageMs)}
            </span>
          </div>
          <div className={styles.reasonLine}>
            <span className={styles.reasonTag} data-reason={s.reason}>
              {s.reason}
            </span>
            <span>{s.message}</span>
          </div>
          {s.referent ? (
            <p className={styles.detailLine}>
              waits on{' '}
              <button type="button" className={styles.inlineLink} onClick={() => onSelectKey(s.referent!)}>
                {s.referent}
              </button>
            </p>
          ) : null}
          {s.fix ? (
            <p className={styles.fix}>
              <span className={styles.fixLabel}>Fix</span> {s.fix}
            </p>
          ) : null}
        </li>
      ))}
    </ol>
  );
});
