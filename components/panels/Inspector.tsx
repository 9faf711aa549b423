'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { Snapshot } from '@/lib/changelog/wire';
import { kindOfKey, nameOfKey, namespaceOfKey } from '@/lib/model/keys';
import { fetchExplain, type ExplainReference } from '../data/explain';
import { RootCauseChain } from './RootCauseChain';
import type { ReferentState } from '@/lib/changelog/entities';
import type { GraphNode } from '../graph/model';
import { REFERENT_STATE, shortKind } from '../graph/model';
import { STATE_LOOK } from '../graph/style';
import { StateBadge } from '../ui/StateBadge';
import { formatAgo, formatDuration } from '../ui/format';
import { ControllersPanel } from './ControllersPanel';
import { objectDetails, type OutgoingReference } from './inspect';
import { ObjectDetails } from './ObjectDetails';
import styles from './panels.module.css';

export interface InspectorProps {
  node: GraphNode;
  snapshot: Snapshot;
  now: number;
  onSelectKey(key: string): void;
  onClose(): void;
}

/**
 * Inspector explains one selected node: for a referrer, each reference with
 * the referent's state, the reason and the fix (from /api/v1/explain, or
 * from the snapshot while explain is unavailable); for a referent, who
 * refers to it; for any object, its details (kubectl fixes, Events, state
 * history, owners, YAML); for a reference controller, its lifecycle.
 */
export function Inspector({ node, snapshot, now, onSelectKey, onClose }: InspectorProps) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), [node.id]);
  const isReferrer = node.type === 'object' && node.roles.includes('referrer');
  const explain = useQuery({
    queryKey: ['explain', node.key, node.state, node.since],
    queryFn: ({ signal }) => fetchExplain(node.key, signal),
    enabled: isReferrer,
    retry: false,
    staleTime: 5_000,
  });
  const details = node.type === 'object' ? objectDetails(snapshot, node.key) : undefined;
  // Live diagnosis first; the snapshot's stuck entry while explain is unavailable.
  const rootCause = explain.data ? explain.data.rootCause : details?.stuck?.rootCause;
  // A kind watched per namespace has one reference controller per namespace.
  const controllers = node.type === 'controller' ? snapshot.controllers.filter((c) => c.kind === node.key) : [];

  return (
    <section className={styles.inspector} aria-labelledby="inspector-title" data-testid="inspector">
      <header className={styles.inspectorHead}>
        <div className={styles.inspectorTitleRow}>
          <StateBadge state={node.state} />
          <button
            type="button"
            className={styles.closeButton}
            onClick={onClose}
            aria-label="Close details (Escape)"
            title="Close (Esc)"
          >
            ✕
          </button>
        </div>
        <h2 id="inspector-title" ref={headingRef} tabIndex={-1} className={styles.inspectorTitle}>
          {node.type === 'controller' ? `${shortKind(node.key)} reference controller` : node.label}
        </h2>
        <p className={styles.inspectorSub}>
          {node.type === 'controller' ? (
            <span className="mono">{node.key}</span>
          ) : (
            <>
              <span title={node.kind}>{shortKind(node.kind)}</span>
              {node.namespace ? (
                <>
                  {' '}
                  in namespace <strong>{node.namespace}</strong>
                </>
              ) : (
                ' (cluster-scoped)'
              )}
              {node.roles.length > 0 ? <span className={styles.muted}> · {node.roles.join(' and ')}</span> : null}
            </>
          )}
        </p>
        {node.type === 'object' ? (
          <div className={styles.keyRow}>
            <code className={styles.keyText}>{node.key}</code>
            <button
              type="button"
              className={styles.copyButton}
              onClick={() => void navigator.clipboard?.writeText(node.key)}
              aria-label="Copy object key"
            >
              Copy
            </button>
          </div>
        ) : null}
      </header>

      <div className={styles.inspectorBody}>
        {node.state !== 'resolved' && node.reason && node.type === 'object' ? (
          <div className={styles.callout} data-state={node.state}>
            <strong>{STATE_LOOK[node.state].label}</strong>
            {node.since ? <span className={styles.muted}> for {formatDuration(now - node.since)}</span> : null}
            <p>{node.reason}</p>
            {rootCause ? <RootCauseChain rootCause={rootCause} onSelectKey={onSelectKey} /> : null}
            {details?.stuck?.fix && !rootCause ? (
              <p className={styles.fix}>
                <span className={styles.fixLabel}>Fix</span> {details.stuck.fix}
              </p>
            ) : null}
          </div>
        ) : null}

        {isReferrer && details ? (
          <ReferencesSection
            details={details.outgoing}
            explainRefs={explain.data?.references}
            explainError={explain.error}
            loading={explain.isPending}
            onSelectKey={onSelectKey}
          />
        ) : null}

        {details && details.referrers.length > 0 ? (
          <section className={styles.section}>
            <h3 className={styles.subhead}>Reconciled by</h3>
            <ul className={styles.plainList}>
              {details.referrers.map((r) => (
                <li key={r.id}>
                  <span className="mono">{r.controller}</span> · {r.reconciles} reconciles · last{' '}
                  {formatAgo(r.lastReconcileAt, now)}
                  {r.resolvedAt ? ` · resolved ${formatAgo(r.resolvedAt, now)}` : ''}
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {details?.referent ? (
          <section className={styles.section}>
            <h3 className={styles.subhead}>As a referent</h3>
            <p>
              <StateBadge state={REFERENT_STATE[details.referent.state] ?? 'error'} compact />{' '}
              <span className="mono">{details.referent.state}</span>
              {details.referent.message ? <span> · {details.referent.message}</span> : null}
            </p>
            <p className={styles.muted}>
              {details.referent.state} since {formatAgo(details.referent.changedAt, now)}
              {details.referent.resourceVersion ? ` (resourceVersion ${details.referent.resourceVersion})` : ''}
              {details.controller ? (
                <>
                  {' '}
                  · watched by the{' '}
                  <button
                    type="button"
                    className={styles.inlineLink}
                    onClick={() => onSelectKey(details.controller!.kind)}
                  >
                    {shortKind(details.controller.kind)} controller
                  </button>{' '}
                  ({details.controller.state.toLowerCase()})
                </>
              ) : null}
            </p>
          </section>
        ) : null}

        {node.type === 'object' ? (
          <ObjectDetails
            objectKey={node.key}
            version={`${node.state}|${node.since ?? ''}`}
            now={now}
            inGraph={(k) => snapshot.referrers.some((r) => r.key === k) || snapshot.referents.some((r) => r.key === k)}
            onSelectKey={onSelectKey}
            commandsOnly={isReferrer}
          />
        ) : null}

        {details && details.incoming.length > 0 ? (
          <section className={styles.section}>
            <h3 className={styles.subhead}>Referred to by ({details.incoming.length})</h3>
            <ul className={styles.plainList}>
              {details.incoming.map((r) => (
                <li key={`${r.referrer}#${r.fieldPath}`}>
                  <button type="button" className={styles.inlineLink} onClick={() => onSelectKey(r.referrer)}>
                    {namespaceOfKey(r.referrer)}/{nameOfKey(r.referrer)}
                  </button>{' '}
                  <span className={styles.muted}>
                    {shortKind(kindOfKey(r.referrer))} · <code>{r.fieldPath}</code>
                  </span>
                </li>
              ))}
            </ul>
          </section>
        ) : null}

        {controllers.length > 0 ? (
          <ControllersPanel controllers={controllers} now={now} onSelectKind={onSelectKey} />
        ) : null}
      </div>
    </section>
  );
}

function ReferencesSection({
  details,
  explainRefs,
  explainError,
  loading,
  onSelectKey,
}: {
  details: OutgoingReference[];
  explainRefs: ExplainReference[] | undefined;
  explainError: Error | null;
  loading: boolean;
  onSelectKey(key: string): void;
}) {
  const byRef = new Map((explainRefs ?? []).map((r) => [`${r.referent}#${r.fieldPath}`, r]));
  // Explain may know references the snapshot does not show yet; list those too.
  const rows = details.map((d) => ({ d, e: byRef.get(`${d.referent}#${d.fieldPath}`) }));
  for (const e of explainRefs ?? []) {
    if (!details.some((d) => d.referent === e.referent && d.fieldPath === e.fieldPath))
      rows.push({ d: { referent: e.referent, fieldPath: e.fieldPath, count: 1 }, e });
  }
  return (
    <section className={styles.section}>
      <h3 className={styles.subhead}>References ({rows.length})</h3>
      {explainError ? (
        <p className={styles.note}>
          Live diagnosis unavailable ({explainError.message}); showing what the cache reports.
        </p>
      ) : null}
      {loading && !explainError ? <p className={styles.note}>Asking refwatch why…</p> : null}
      <ul className={styles.refList}>
        {rows.map(({ d, e }) => {
          const state = e?.state || d.referentEntity?.state || 'NotObserved';
          const nodeState = REFERENT_STATE[state as ReferentState] ?? (state === 'Ready' ? 'resolved' : 'waiting');
          const message =
            e?.message || d.referentEntity?.message || (state === 'NotObserved' ? 'not in the cache yet' : '');
          return (
            <li key={`${d.referent}#${d.fieldPath}`} className={styles.refItem} data-state={nodeState}>
              <div className={styles.refHead}>
                <code className={styles.fieldPath}>{d.fieldPath}</code>
                <span aria-hidden="true" className={styles.arrow}>
                  →
                </span>
                <button
                  type="button"
                  className={styles.inlineLink}
                  onClick={() => onSelectKey(d.referent)}
                  title={d.referent}
                >
                  {shortKind(kindOfKey(d.referent))} {namespaceOfKey(d.referent)}/{nameOfKey(d.referent)}
                </button>
                {d.count > 1 ? <span className={styles.muted}>×{d.count}</span> : null}
              </div>
              <div className={styles.refState}>
                <StateBadge state={nodeState} compact />
                <span className="mono">{e?.reason || state}</span>
                {message ? <span>{message}</span> : null}
              </div>
              {e?.fix ? (
                <p className={styles.fix}>
                  <span className={styles.fixLabel}>Fix</span> {e.fix}
                </p>
              ) : null}
              {e && e.suggestions.length > 0 ? (
                <p className={styles.suggestions}>
                  Did you mean{' '}
                  {e.suggestions.map((s, i) => (
                    <span key={s}>
                      {i > 0 ? ', ' : ''}
                      <button type="button" className={styles.inlineLink} onClick={() => onSelectKey(s)}>
                        {s}
                      </button>
                    </span>
                  ))}
                  ?
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
