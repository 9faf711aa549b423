'use client';

import { useState } from 'react';
import styles from './Dashboard.module.css';

/**
 * TimePicker chooses the moment the graph shows: live, or a past instant
 * read from the history (read-only). In the past it says which moment it
 * shows and offers the way back to live.
 */
export function TimePicker({
  at,
  loading,
  error,
  onChange,
}: {
  /** The past instant shown (epoch ms), or null when live. */
  at: number | null;
  loading: boolean;
  error?: string | undefined;
  onChange(at: number | null): void;
}) {
  const [text, setText] = useState(() => localInput(at ?? Date.now() - 60_000));
  const show = () => {
    const picked = new Date(text).getTime();
    if (Number.isFinite(picked)) onChange(Math.min(picked, Date.now()));
  };
  return (
    <div
      className={styles.timePicker}
      data-testid="time-picker"
      data-past={at !== null ? 'true' : undefined}
      role={at !== null ? 'status' : undefined}
    >
      {at !== null ? (
        <strong data-testid="past-banner">
          Viewing {clock(at)}
          {sameDay(at) ? '' : ` on ${new Date(at).toLocaleDateString('en-CA')}`} — read-only
        </strong>
      ) : (
        <span className={styles.liveDot}>● Live</span>
      )}
      <label>
        <span className={styles.muted}>Show the graph at</span>{' '}
        <input
          type="datetime-local"
          step={1}
          value={text}
          max={localInput(Date.now())}
          aria-label="Moment to show"
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') show();
          }}
        />
      </label>
      <button type="button" onClick={show} disabled={!text}>
        Show
      </button>
      {at !== null ? (
        <button type="button" className={styles.liveButton} onClick={() => onChange(null)}>
          Back to live
        </button>
      ) : null}
      {loading ? <span className={styles.muted}>Reading the history…</span> : null}
      {error ? (
        <span role="alert" className={styles.pastError}>
          {error}
        </span>
      ) : null}
    </div>
  );
}

/** clock is the wall-clock time of an instant, to the second, as the timeline shows it. */
function clock(at: number): string {
  return new Date(at).toLocaleTimeString('en-GB', { hour12: false });
}

function sameDay(at: number): boolean {
  return new Date(at).toDateString() === new Date().toDateString();
}

/** localInput is an instant as a datetime-local input holds it: local time, to the second. */
export function localInput(at: number): string {
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
