'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { kindOfKey, nameOfKey, namespaceOfKey } from '@/lib/model/keys';
import { fetchObjectDetails, type DetailsProblem, type ObjectDetailsView } from '../data/objectDetails';
import { shortKind } from '../graph/model';
import { formatAgo, formatIso } from '../ui/format';
import { describeStored } from './timeline';
import styles from './panels.module.css';

export interface ObjectDetailsProps {
  objectKey: string;
  /** Changes when the object's state does, so the details are read again. */
  version: string;
  now: number;
  /** Whether a key is a node of the graph, so a link to it can select it. */
  inGraph(key: string): boolean;
  onSelectKey(key: string): void;
  /** The inspector already shows each reference's fix text: show only the commands. */
  commandsOnly: boolean;
}

/**
 * ObjectDetails is the part of the inspector read from GET /api/v1/objects:
 * kubectl commands that fix what holds the object up, its recent core
 * Events, its state history, its owners and its YAML (Secret values never
 * reach the browser).
 */
export function ObjectDetails({ objectKey, version, ...rest }: ObjectDetailsProps) {
  const q = useQuery({
    queryKey: ['objectDetails', objectKey, version],
    queryFn: ({ signal }) => fetchObjectDetails(objectKey, signal),
    retry: false,
    staleTime: 5_000,
    // New Events arrive without a change of state: read them again while the panel is open.
    refetchInterval: 15_000,
  });
  const state: DetailsState = q.isPending
    ? { status: 'pending' }
    : q.isError
      ? { status: 'error', message: q.error.message, retry: () => void q.refetch() }
      : { status: 'success', data: q.data };
  return <ObjectDetailsBody state={state} {...rest} />;
}

/** DetailsState is where the request for the details stands. */
export type DetailsState =
  | { status: 'pending' }
  | { status: 'error'; message: string; retry(): void }
  | { status: 'success'; data: ObjectDetailsView };

/** ObjectDetailsBody renders the details, or their loading or error state. */
export function ObjectDetailsBody({
  state,
  now,
  inGraph,
  onSelectKey,
  commandsOnly,
}: Omit<ObjectDetailsProps, 'objectKey' | 'version'> & { state: DetailsState }) {
  if (state.status === 'pending') {
    return (
      <p className={styles.note} role="status" data-testid="details-loading">
        Loading details…
      </p>
    );
  }
  if (state.status === 'error') {
    return (
      <p className={styles.note} role="alert" data-testid="details-error">
        Details unavailable: {state.message}{' '}
        <button type="button" className={styles.inlineLink} onClick={state.retry}>
          Retry
        </button>
      </p>
    );
  }
  const d = state.data;
  return (
    <div data-testid="object-details">
      {d.fixes.some((f) => f.commands.length > 0 || !commandsOnly) ? (
        <FixSection details={d} commandsOnly={commandsOnly} onSelectKey={onSelectKey} />
      ) : null}
      <EventsSection details={d} now={now} />
      <TimelineSection details={d} />
      <HistorySection details={d} now={now} />
      {d.ownerReferences.length > 0 ? (
        <section className={styles.section} aria-labelledby="details-owners">
          <h3 id="details-owners" className={styles.subhead}>
            Owned by
          </h3>
          <ul className={styles.plainList}>
            {d.ownerReferences.map((o) => (
              <li key={o.key}>
                {inGraph(o.key) ? (
                  <button type="button" className={styles.inlineLink} onClick={() => onSelectKey(o.key)} title={o.key}>
                    {shortKind(kindOfKey(o.key))} {o.name}
                  </button>
                ) : (
                  <span title={`${o.key} (not in the graph)`}>
                    {o.kind} {o.name}
                  </span>
                )}
                {o.controller ? <span className={styles.muted}> · controller</span> : null}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <YamlSection details={d} />
    </div>
  );
}

function FixSection({
  details,
  commandsOnly,
  onSelectKey,
}: {
  details: ObjectDetailsView;
  commandsOnly: boolean;
  onSelectKey(key: string): void;
}) {
  return (
    <section className={styles.section} aria-labelledby="details-fix" data-testid="details-fix">
      <h3 id="details-fix" className={styles.subhead}>
        Fix with kubectl
      </h3>
      <ul className={styles.refList}>
        {details.fixes.map((f) => (
          <li key={`${f.referent}#${f.fieldPath}`} className={styles.fixItem}>
            <div className={styles.refHead}>
              <span className={styles.reasonTag} data-reason={f.state}>
                {f.state}
              </span>
              <button
                type="button"
                className={styles.inlineLink}
                onClick={() => onSelectKey(f.referent)}
                title={f.referent}
              >
                {shortKind(kindOfKey(f.referent))} {namespaceOfKey(f.referent) ? `${namespaceOfKey(f.referent)}/` : ''}
                {nameOfKey(f.referent)}
              </button>
            </div>
            {commandsOnly ? null : <p className={styles.fix}>{f.fix}</p>}
            {f.commands.map((c) => (
              <div key={c} className={styles.command}>
                <CommandText text={c} />
                <CopyButton text={c} label={`Copy command ${c}`} />
              </div>
            ))}
          </li>
        ))}
      </ul>
    </section>
  );
}

function EventsSection({ details, now }: { details: ObjectDetailsView; now: number }) {
  return (
    <section className={styles.section} aria-labelledby="details-events" data-testid="details-events">
      <h3 id="details-events" className={styles.subhead}>
        Recent events ({details.events.length})
      </h3>
      {details.eventsProblem ? <Problem problem={details.eventsProblem} /> : null}
      {details.events.length === 0 && !details.eventsProblem ? (
        <p className={styles.muted}>No events about this object.</p>
      ) : null}
      {details.events.length > 0 ? (
        <ol className={styles.detailsList}>
          {details.events.map((e, i) => (
            <li key={i} data-type={e.type}>
              <div className={styles.detailsLine}>
                <span className={styles.eventKind}>{e.type}</span>
                <span className="mono">{e.reason}</span>
                <span className={styles.muted} title={formatIso(e.at)}>
                  {e.at ? formatAgo(e.at, now) : '—'}
                  {e.count > 1 ? ` ×${e.count}` : ''}
                  {e.source ? ` · ${e.source}` : ''}
                </span>
              </div>
              <p className={styles.detailsText}>{e.message}</p>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}

/** TimelineSection shows the stored timeline, which survives restarts: the object's and its referents' transitions. */
function TimelineSection({ details }: { details: ObjectDetailsView }) {
  if (details.timeline === undefined && details.timelineProblem === undefined) return null;
  return (
    <section className={styles.section} aria-labelledby="details-timeline" data-testid="details-timeline">
      <h3 id="details-timeline" className={styles.subhead}>
        Timeline
      </h3>
      {details.timelineProblem ? (
        <p className={styles.muted}>{details.timelineProblem}</p>
      ) : details.timeline!.length === 0 ? (
        <p className={styles.muted}>Nothing recorded in the last day.</p>
      ) : (
        <ol className={styles.detailsList}>
          {details.timeline!.map((t) => (
            <li key={t.id}>
              <div className={styles.detailsLine}>
                <span className={`mono ${styles.muted}`} title={formatIso(t.at)}>
                  {new Date(t.at).toLocaleTimeString([], { hour12: false })}
                </span>
                <span>{describeStored(t)}</span>
              </div>
              {t.reason === 'WhileDown' && t.message ? <p className={styles.detailsText}>{t.message}</p> : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function HistorySection({ details, now }: { details: ObjectDetailsView; now: number }) {
  return (
    <section className={styles.section} aria-labelledby="details-history" data-testid="details-history">
      <h3 id="details-history" className={styles.subhead}>
        State history
      </h3>
      {details.history.length === 0 ? (
        <p className={styles.muted}>No state recorded since refwatch started.</p>
      ) : (
        <ol className={styles.detailsList}>
          {details.history.map((t, i) => (
            <li key={i}>
              <div className={styles.detailsLine}>
                <span className={styles.muted} title={formatIso(t.at)}>
                  {formatAgo(t.at, now)}
                </span>
                <span className="mono">{t.state}</span>
                <span className={styles.muted}>
                  {t.role === 'referrer' ? `as referrer${t.controller ? ` of ${t.controller}` : ''}` : 'as referent'}
                </span>
              </div>
              {t.message || t.reason ? <p className={styles.detailsText}>{t.message ?? t.reason}</p> : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function YamlSection({ details }: { details: ObjectDetailsView }) {
  if (details.yaml === undefined) {
    return (
      <section className={styles.section} aria-labelledby="details-yaml">
        <h3 id="details-yaml" className={styles.subhead}>
          YAML
        </h3>
        {details.objectProblem ? (
          <Problem problem={details.objectProblem} />
        ) : (
          <p className={styles.muted}>The cluster has no such object.</p>
        )}
      </section>
    );
  }
  return (
    <details className={styles.yaml} open data-testid="details-yaml">
      <summary>
        <span className={styles.subhead}>YAML</span>
        <span className={styles.muted}>
          {' '}
          {details.source === 'cache' ? 'from refwatch’s cache' : 'read from the cluster'}
        </span>
        <CopyButton text={details.yaml} label="Copy YAML" />
      </summary>
      {details.objectProblem ? <Problem problem={details.objectProblem} /> : null}
      <pre className={styles.yamlText}>
        <code>{details.yaml}</code>
      </pre>
    </details>
  );
}

function Problem({ problem }: { problem: DetailsProblem }) {
  return (
    <div className={styles.errorBox} role="note">
      <strong>{problem.reason}</strong> {problem.message}
      {problem.rule ? (
        <div className={styles.command}>
          <code>{problem.rule}</code>
          <CopyButton text={problem.rule} label="Copy RBAC rule" />
        </div>
      ) : null}
    </div>
  );
}

/** CommandText shows a command that wraps between its words only, never inside a flag such as --from-literal. */
function CommandText({ text }: { text: string }) {
  const words = text.split(' ');
  return (
    <code>
      {words.map((w, i) => (
        <span key={i}>
          <span className={styles.nowrap}>{w}</span>
          {i < words.length - 1 ? ' ' : null}
        </span>
      ))}
    </code>
  );
}

/** CopyButton copies text to the clipboard and says so for a moment. */
function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async (e: React.MouseEvent) => {
    // Inside a <summary>, a click would also fold the YAML.
    e.preventDefault();
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (an insecure origin): the text stays selectable.
    }
  };
  return (
    <button type="button" className={styles.copyButton} onClick={(e) => void copy(e)} aria-label={label} title={label}>
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
