'use client';

import { useConnection } from '../data/LiveData';
import styles from './ui.module.css';

const LABEL = {
  connecting: 'Connecting',
  live: 'Live',
  reconnecting: 'Reconnecting',
  lost: 'Connection lost',
} as const;

/** ConnectionIndicator reports the stream's state; it is a live region so screen readers hear drops. */
export function ConnectionIndicator({ revision }: { revision?: number }) {
  const { state, detail, retry } = useConnection();
  return (
    <div
      className={styles.connection}
      data-conn={state}
      role="status"
      aria-live="polite"
      title={detail ?? LABEL[state]}
    >
      <span className={styles.connDot} aria-hidden="true" />
      <span>{LABEL[state]}</span>
      {revision !== undefined && state === 'live' ? (
        <span className={styles.connRev}>rev {revision.toLocaleString('en-US')}</span>
      ) : null}
      {state === 'lost' || state === 'reconnecting' ? (
        <button type="button" className={styles.linkButton} onClick={retry}>
          Retry now
        </button>
      ) : null}
    </div>
  );
}
