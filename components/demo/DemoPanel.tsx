'use client';

import styles from '../panels/panels.module.css';

/**
 * DemoPanel is the mount point of the fast-vs-backoff demo (POST /api/v1/demo/runs).
 * Until the demo controls land it says how to run the demo from a terminal.
 */
export function DemoPanel() {
  return (
    <div className={styles.empty} data-testid="demo-panel">
      <p className={styles.emptyTitle}>Fast vs backoff</p>
      <p>
        The demo runs two controllers side by side on the same Apps: one woken by refwatch&apos;s shared watches, one requeueing with exponential backoff. It plots how
        long each takes to notice that a Database, Cache or Secret became ready.
      </p>
      <p>
        Run it headless with <code>npm run demo</code>; its controls will appear here.
      </p>
    </div>
  );
}
