'use client';

import { useMemo, useState, memo } from 'react';
import type { EventEntity, EventType } from '@/lib/changelog/entities';
import { formatClock, formatIso } from '../ui/format';
import { onListKeyDown } from '../ui/useListKeyboard';
import styles from './panels.module.css';

type EventGroup = 'all' | 'resolution' | 'controllers' | 'problems';

const GROUP_OF: Record<EventType, Exclude<EventGroup, 'all'>> = {
  Resolved: 'resolution',
  Waiting: 'resolution',
  ReferentChanged: 'resolution',
  ReconcileError: 'problems',
  ControllerStarted: 'controllers',
  ControllerPrimed: 'controllers',
  ControllerGrace: 'controllers',
  ControllerCancelled: 'controllers',
  ControllerReactivated: 'controllers',
  WatchError: 'problems',
  WatchRecovered: 'controllers',
  AdmissionWarningResolved: 'resolution',
};

const GROUPS: { id: EventGroup; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'resolution', label: 'Resolution' },
  { id: 'controllers', label: 'Controllers' },
  { id: 'problems', label: 'Problems' },
];

/**
 * EventsPanel is the live timeline, newest first. Pausing freezes the list
 * where it is (new events are counted, not shown) so a row can be read
 * while the cluster keeps moving.
 */
export const EventsPanel = memo(function EventsPanel({
  events,
  onSelectKey,
}: {
  events: EventEntity[];
  onSelectKey(key: string): void;
}) {
  const [group, setGroup] = useState<EventGroup>('all');
  const [text, setText] = useState('');
  const [frozen, setFrozen] = useState<EventEntity[] | null>(null);
  const source = frozen ?? events;
  const newSincePause = frozen ? Math.max(0, events.length - frozen.length) : 0;

  const visible = useMemo(() => {
    const words = text.toLowerCase().split(/\s+/).filter(Boolean);
    return [...source]
      .filter((e) => group === 'all' || GROUP_OF[e.type] === group)
      .filter((e) =>
        words.every((w) => `${e.type} ${e.message} ${e.key ?? ''} ${e.controller ?? ''}`.toLowerCase().includes(w)),
      )
      .sort((a, b) => b.at - a.at)
      .slice(0, 300);
  }, [source, group, text]);

  return (
    <div className={styles.events}>
      <div className={styles.eventsBar}>
        <div role="group" aria-label="Event type" className={styles.segmented}>
          {GROUPS.map((g) => (
            <button key={g.id} type="button" aria-pressed={group === g.id} onClick={() => setGroup(g.id)}>
              {g.label}
            </button>
          ))}
        </div>
        <button
          type="button"
          className={styles.pauseButton}
          aria-pressed={frozen !== null}
          onClick={() => setFrozen(frozen ? null : events)}
        >
          {frozen ? `▶ Resume${newSincePause > 0 ? ` (${newSincePause} new)` : ''}` : '❚❚ Pause'}
        </button>
      </div>
      <input
        type="search"
        className={styles.eventFilter}
        placeholder="Filter events…"
        aria-label="Filter events"
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {visible.length === 0 ? (
        <div className={styles.empty}>
          <p>
            {events.length === 0
              ? 'No events yet. They appear here as references resolve and controllers start or stop.'
              : 'No event matches this filter.'}
          </p>
        </div>
      ) : (
        <ol
          className={styles.timeline}
          aria-label="Events, newest first"
          aria-live={frozen ? 'off' : 'polite'}
          aria-relevant="additions"
          onKeyDown={onListKeyDown}
        >
          {visible.map((e) => (
            <li key={e.id} className={styles.event} data-group={GROUP_OF[e.type] ?? 'resolution'}>
              <time dateTime={formatIso(e.at)} className={styles.eventTime}>
                {formatClock(e.at)}
              </time>
              <span className={styles.eventType}>{e.type}</span>
              <span className={styles.eventMessage}>
                {e.key ? (
                  <button
                    type="button"
                    data-row
                    className={styles.inlineLink}
                    onClick={() => onSelectKey(e.key!)}
                    title={`Select ${e.key}`}
                  >
                    {e.message}
                  </button>
                ) : (
                  e.message
                )}
                {e.latencyMs !== undefined ? <span className={styles.latency}> {e.latencyMs} ms</span> : null}
              </span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
});
