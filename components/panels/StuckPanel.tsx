'use client';

import { Fragment, memo, useState } from 'react';
import type { StuckEntry } from '@/lib/changelog/wire';
import { nameOfKey, namespaceOfKey, kindOfKey } from '@/lib/model/keys';
import { groupByRootCause, groupTitle, ownedText } from '@/lib/diagnose/grouping';
import { shortKind } from '../graph/model';
import { formatDuration } from '../ui/format';
import { onListKeyDown } from '../ui/useListKeyboard';
import { RootCauseChain } from './RootCauseChain';
import { firstLines } from './stuck';
import styles from './panels.module.css';

/**
 * Lines drawn at first, and added by each "Show more". A list of 900 stuck
 * referrers, laid out again on every frame of status changes, held the page
 * for half a second a frame (bench/ui.ts); the first fifty are the groups
 * that matter most, and the tab says how many there are in all.
 */
export const STUCK_LINES_SHOWN = 50;

/**
 * StuckPanel lists referrers unresolved past the threshold, each with its
 * reason and fix: grouped by the referent that blocks them in the end
 * (biggest group first, then oldest), a chain's path to it, and a workload's
 * Pods stuck on the same cause folded into the workload's line. It draws the
 * first STUCK_LINES_SHOWN lines, and a button adds as many again.
 */
export const StuckPanel = memo(function StuckPanel({
  stuck,
  onSelectKey,
}: {
  stuck: StuckEntry[];
  onSelectKey(key: string): void;
}) {
  const [shown, setShown] = useState(STUCK_LINES_SHOWN);
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
  const { shown: lines, hidden } = firstLines(groupByRootCause(stuck), shown);
  return (
    <>
      <ol
        className={styles.list}
        aria-label="Stuck references, grouped by root cause, oldest first"
        onKeyDown={onListKeyDown}
      >
        {lines.map(({ group: g, items }) => {
          // A group of one line is the plain entry; a shared cause gets a head naming it, and its lines indent.
          const shared = g.items.length > 1;
          return (
            <Fragment key={g.cause ?? g.items[0]!.entry.id}>
              {shared ? (
                <li role="presentation" className={styles.groupHead} data-testid="stuck-group">
                  {groupTitle(g)}
                </li>
              ) : null}
              {items.map((item) => (
                <StuckLine
                  key={item.entry.id}
                  entry={item.entry}
                  owned={ownedText(item.owned)}
                  grouped={shared}
                  onSelectKey={onSelectKey}
                />
              ))}
            </Fragment>
          );
        })}
      </ol>
      {hidden > 0 ? (
        <button
          type="button"
          className={styles.showMore}
          data-testid="stuck-show-more"
          onClick={() => setShown((n) => n + STUCK_LINES_SHOWN)}
        >
          Show {Math.min(STUCK_LINES_SHOWN, hidden)} more ({hidden} not shown)
        </button>
      ) : null}
    </>
  );
});

function StuckLine({
  entry: s,
  owned,
  grouped,
  onSelectKey,
}: {
  entry: StuckEntry;
  owned: string;
  grouped: boolean;
  onSelectKey(key: string): void;
}) {
  return (
    <li className={grouped ? `${styles.stuckItem} ${styles.grouped}` : styles.stuckItem}>
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
        {owned ? <span className={styles.owned}>{owned}</span> : null}
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
      {s.rootCause ? <RootCauseChain rootCause={s.rootCause} onSelectKey={onSelectKey} /> : null}
      {s.fix && !s.rootCause ? (
        <p className={styles.fix}>
          <span className={styles.fixLabel}>Fix</span> {s.fix}
        </p>
      ) : null}
    </li>
  );
}
