'use client';

import { memo } from 'react';
import type { ReferenceControllerEntity, ReferenceControllerState } from '@/lib/changelog/entities';
import type { ControllerNodeState } from '../graph/model';
import { shortKind } from '../graph/model';
import { StateBadge } from '../ui/StateBadge';
import { formatAgo, formatDuration, formatIso } from '../ui/format';
import styles from './panels.module.css';

const ORDER: Record<ReferenceControllerState, number> = { Starting: 0, Priming: 1, Grace: 2, Active: 3, Cancelled: 4 };

/** ControllersPanel shows each reference controller: lifecycle, cache, priming, errors and its transition history. */
export const ControllersPanel = memo(function ControllersPanel({
  controllers,
  now,
  onSelectKind,
}: {
  controllers: ReferenceControllerEntity[];
  now: number;
  onSelectKind(kind: string): void;
}) {
  if (controllers.length === 0) {
    return (
      <div className={styles.empty}>
        <p className={styles.emptyTitle}>No reference controllers</p>
        <p>A reference controller starts with the first reference to a kind: one shared watch per referent kind.</p>
      </div>
    );
  }
  const sorted = [...controllers].sort(
    (a, b) =>
      ORDER[a.state] - ORDER[b.state] ||
      a.kind.localeCompare(b.kind) ||
      (a.namespace ?? '').localeCompare(b.namespace ?? ''),
  );
  return (
    <ul className={styles.list} aria-label="Reference controllers">
      {sorted.map((c) => (
        <li key={c.id} className={styles.controllerItem} data-state={c.state}>
          <div className={styles.rowHead}>
            <button
              type="button"
              className={styles.objectLink}
              onClick={() => onSelectKind(c.kind)}
              title={`Select ${c.kind} in the graph`}
            >
              <strong>{shortKind(c.kind)}</strong>
              <span className={styles.ns}>{c.kind.includes('.') ? c.kind.slice(c.kind.indexOf('.') + 1) : 'core'}</span>
              {c.namespace !== undefined ? <span className={styles.ns}>(ns {c.namespace})</span> : null}
            </button>
            <StateBadge state={c.state.toLowerCase() as ControllerNodeState} compact />
          </div>
          <p className={styles.detailLine}>{stateLine(c, now)}</p>
          <dl className={styles.stats}>
            <div>
              <dt>References</dt>
              <dd>{c.references}</dd>
            </div>
            <div>
              <dt>{c.source === 'poll' ? 'Referents polled' : 'Referents cached'}</dt>
              <dd>{c.referents}</dd>
            </div>
            {c.source === 'poll' ? (
              <div>
                <dt>Polls</dt>
                <dd>{c.polls ?? 0}</dd>
              </div>
            ) : (
              <div>
                <dt>Priming</dt>
                <dd>
                  {c.primingMs !== undefined
                    ? formatDuration(c.primingMs)
                    : c.state === 'Priming' || c.state === 'Starting'
                      ? '…'
                      : '—'}
                </dd>
              </div>
            )}
            <div>
              <dt>Dispatches</dt>
              <dd>{c.dispatches}</dd>
            </div>
          </dl>
          {c.errors.length > 0 ? (
            <div className={styles.errorBox} role="note">
              <strong>
                {c.errors.at(-1)!.reason}: {c.errors.at(-1)!.message}
              </strong>
              <span>
                {' '}
                {formatAgo(c.errors.at(-1)!.at, now)}
                {c.errors.at(-1)!.retryAt ? ` · retry ${formatAgo(c.errors.at(-1)!.retryAt, now)}` : ''}
                {c.errors.length > 1 ? ` · ${c.errors.length} errors` : ''}
              </span>
            </div>
          ) : null}
          {c.history.length > 0 ? (
            <details className={styles.history}>
              <summary>History ({c.history.length})</summary>
              <ol>
                {[...c.history].reverse().map((h, i) => (
                  <li key={`${h.at}-${i}`}>
                    <time dateTime={formatIso(h.at)} title={formatIso(h.at)}>
                      {formatAgo(h.at, now)}
                    </time>{' '}
                    <strong>{h.state}</strong> <span className={styles.muted}>{h.reason}</span>
                  </li>
                ))}
              </ol>
            </details>
          ) : null}
        </li>
      ))}
    </ul>
  );
});

function stateLine(c: ReferenceControllerEntity, now: number): string {
  switch (c.state) {
    case 'Cancelled':
      return `Cancelled ${formatAgo(c.cancelledAt ?? c.history.at(-1)?.at, now)}: ${c.reason}`;
    case 'Grace':
      return c.graceUntil
        ? `No references left; cancels ${formatAgo(c.graceUntil, now)} unless re-referenced`
        : c.reason;
    case 'Active':
      if (c.source === 'poll')
        return `Polled every ${formatDuration(c.intervalMs ?? 0)}${c.lastPollAt !== undefined ? ` · last poll ${formatAgo(c.lastPollAt, now)}` : ' · first poll pending'}`;
      return `Watching since ${formatAgo(c.startedAt, now)}`;
    default:
      return c.reason;
  }
}
