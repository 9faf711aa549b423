'use client';

import { memo, useEffect, useState } from 'react';
import type { Summary, SummaryGroup, SummaryStuck } from '@/lib/changelog/wire';
import { nameOfKey } from '@/lib/model/keys';
import { shortKind } from '../graph/model';
import { formatDuration } from '../ui/format';
import { markOverviewRendered } from '../data/performanceMarks';
import styles from './Overview.module.css';

/** What choosing something in the overview asks for; the dashboard turns it into the URL's scope. */
export interface OverviewChoice {
  ns?: string;
  kind?: string;
  q?: string;
  object?: string;
  stuck?: boolean;
}

export interface OverviewProps {
  summary: Summary;
  now: number;
  onChoose(choice: OverviewChoice): void;
}

/** Rows drawn per table before "Show all": the stuck and busiest groups come first. */
const ROWS = 100;

/**
 * Overview is the first screen on a large registry: namespaces and kinds
 * with their referrers by state and their stuck counts, stuck first, and
 * the oldest stuck referrers. Choosing one loads just that scope.
 */
export const Overview = memo(function Overview({ summary, now, onChoose }: OverviewProps) {
  const [q, setQ] = useState('');
  useEffect(() => markOverviewRendered(), []);
  const t = summary.totals;
  return (
    <main className={styles.overview} aria-label="Overview" data-testid="overview">
      <section className={styles.groups}>
        <div className={styles.intro}>
          <h1>Overview</h1>
          <p>
            <strong>{t.referrers.toLocaleString('en-US')}</strong> referrers with{' '}
            <strong>{t.references.toLocaleString('en-US')}</strong> references to{' '}
            <strong>{t.referents.toLocaleString('en-US')}</strong> referents in{' '}
            {summary.namespaces.length.toLocaleString('en-US')}{' '}
            {summary.namespaces.length === 1 ? 'namespace' : 'namespaces'}. Choose a namespace, a kind, a search or a
            stuck object: only that scope is loaded.
          </p>
          <div className={styles.actions}>
            <form
              role="search"
              className={styles.search}
              onSubmit={(e) => {
                e.preventDefault();
                if (q.trim() !== '') onChoose({ q: q.trim() });
              }}
            >
              <input
                type="search"
                value={q}
                onChange={(e) => setQ(e.target.value)}
                placeholder="Part of an object key, e.g. shop/orders"
                aria-label="Search object keys"
              />
              <button type="submit">Search</button>
            </form>
            <button
              type="button"
              className={styles.stuckButton}
              data-tone={t.stuck > 0 ? 'attention' : undefined}
              disabled={t.stuck === 0}
              onClick={() => onChoose({ stuck: true })}
            >
              {t.stuck > 0 ? `Show the ${t.stuck.toLocaleString('en-US')} stuck referrers` : 'Nothing is stuck'}
            </button>
          </div>
        </div>
        <GroupTable
          title="Namespaces"
          groups={summary.namespaces}
          label={(g) => g.name}
          onChoose={(g) => onChoose({ ns: g.name })}
        />
        <GroupTable
          title="Kinds"
          groups={summary.kinds}
          label={(g) => shortKind(g.name)}
          onChoose={(g) => onChoose({ kind: g.name })}
        />
      </section>
      <aside className={styles.stuck} aria-label="Stuck referrers">
        <h2>
          Stuck <span className={styles.count}>{t.stuck.toLocaleString('en-US')}</span>
        </h2>
        <p className={styles.muted}>
          Unresolved for longer than {formatDuration(summary.stuckThresholdMs)}, oldest first.
        </p>
        {summary.stuckList.length === 0 ? (
          <p className={styles.empty}>Nothing is stuck.</p>
        ) : (
          <ol className={styles.stuckList}>
            {summary.stuckList.map((s) => (
              <StuckItem key={`${s.controller}|${s.key}`} item={s} now={now} onChoose={onChoose} />
            ))}
          </ol>
        )}
        {t.stuck > summary.stuckList.length ? (
          <button type="button" className={styles.more} onClick={() => onChoose({ stuck: true })}>
            All {t.stuck.toLocaleString('en-US')} stuck referrers
          </button>
        ) : null}
      </aside>
    </main>
  );
});

function StuckItem({
  item,
  now,
  onChoose,
}: {
  item: SummaryStuck;
  now: number;
  onChoose(choice: OverviewChoice): void;
}) {
  return (
    <li>
      <button
        type="button"
        className={styles.stuckItem}
        onClick={() => onChoose({ object: item.key })}
        title={`Open ${item.key}`}
      >
        <span className={styles.kindTag}>{shortKind(item.kind)}</span>
        <span className={styles.ns}>{item.namespace}/</span>
        <strong>{nameOfKey(item.key)}</strong>
        <span className={styles.age}>{formatDuration(Math.max(0, now - item.since))}</span>
        <span className={styles.reason}>
          {item.state}
          {item.reason ? ` · ${item.reason}` : ''}
        </span>
      </button>
    </li>
  );
}

function GroupTable({
  title,
  groups,
  label,
  onChoose,
}: {
  title: string;
  groups: SummaryGroup[];
  label(g: SummaryGroup): string;
  onChoose(g: SummaryGroup): void;
}) {
  const [all, setAll] = useState(false);
  const shown = all ? groups : groups.slice(0, ROWS);
  return (
    <section className={styles.tableSection} aria-label={title}>
      <h2>
        {title} <span className={styles.count}>{groups.length.toLocaleString('en-US')}</span>
      </h2>
      <table className={styles.table}>
        <thead>
          <tr>
            <th scope="col">{title === 'Kinds' ? 'Kind' : 'Namespace'}</th>
            <th scope="col">Stuck</th>
            <th scope="col">Referrers</th>
            <th scope="col">Resolved</th>
            <th scope="col">Waiting</th>
            <th scope="col">Not found</th>
            <th scope="col">Error</th>
            {/* A kind's references are those to it; a namespace's, those of its referrers. */}
            <th scope="col">{title === 'Kinds' ? 'Referenced' : 'References'}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((g) => (
            <tr key={g.name} data-stuck={g.stuck > 0 ? 'true' : undefined}>
              <th scope="row">
                <button type="button" onClick={() => onChoose(g)} title={`Load ${g.name}`}>
                  {label(g)}
                </button>
              </th>
              <td data-tone={g.stuck > 0 ? 'attention' : undefined}>{num(g.stuck)}</td>
              <td>{num(g.referrers)}</td>
              <td>{num(g.states.Resolved)}</td>
              <td>{num(g.states.Waiting)}</td>
              <td>{num(g.states.NotFound)}</td>
              <td>{num(g.states.Error)}</td>
              <td>{num(g.references)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {groups.length > shown.length ? (
        <button type="button" className={styles.more} onClick={() => setAll(true)}>
          Show all {groups.length.toLocaleString('en-US')}
        </button>
      ) : null}
    </section>
  );
}

const num = (n: number) => (n === 0 ? <span className={styles.zero}>0</span> : n.toLocaleString('en-US'));
