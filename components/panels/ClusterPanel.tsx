'use client';

import { memo } from 'react';
import type { QueueEntity, WatchEntity } from '@/lib/changelog/entities';
import type { ClusterInfo } from '@/lib/changelog/wire';
import { shortKind } from '../graph/model';
import styles from './panels.module.css';

const MODE_LABEL: Record<ClusterInfo['mode'], string> = {
  embedded: 'Embedded API server',
  kubeconfig: 'kubeconfig context',
  'in-cluster': 'In-cluster',
};

/** ClusterPanel says which cluster refwatch watches, whether it answers, and what the shared watches and queues are doing. */
export const ClusterPanel = memo(function ClusterPanel({
  cluster,
  watches,
  queues,
}: {
  cluster: ClusterInfo;
  watches: WatchEntity[];
  queues: QueueEntity[];
}) {
  return (
    <div className={styles.cluster}>
      <dl className={styles.facts}>
        <dt>Cluster</dt>
        <dd>{MODE_LABEL[cluster.mode] ?? cluster.mode}</dd>
        {cluster.context ? (
          <>
            <dt>Context</dt>
            <dd className="mono">{cluster.context}</dd>
          </>
        ) : null}
        <dt>Server</dt>
        <dd className="mono">{cluster.server || '—'}</dd>
        <dt>Reachable</dt>
        <dd>
          <span className={styles.reach} data-ok={cluster.reachable}>
            {cluster.reachable ? '✓ yes' : '✕ no'}
          </span>
          {cluster.message ? <span className={styles.muted}> {cluster.message}</span> : null}
        </dd>
        <dt>Version</dt>
        <dd className="mono">{cluster.version ?? 'unknown'}</dd>
        {cluster.packs && cluster.packs.length > 0 ? (
          <>
            <dt>Rule packs</dt>
            <dd>
              <ul className={styles.scopeFallbacks} aria-label="Rule packs, on or off and why">
                {cluster.packs.map((m) => (
                  <li key={m}>{m}</li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
        {cluster.referenceRules && cluster.referenceRules.length > 0 ? (
          <>
            <dt>ReferenceRules</dt>
            <dd>
              <ul className={styles.scopeFallbacks} aria-label="ReferenceRules objects and their problems">
                {cluster.referenceRules.map((r) => (
                  <li key={r.message} className={r.ok ? undefined : styles.errorText}>
                    {r.message}
                    {r.problems.length > 0 ? (
                      <ul>
                        {r.problems.map((p) => (
                          <li key={p}>{p}</li>
                        ))}
                      </ul>
                    ) : null}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
        {cluster.scopeFallbacks && cluster.scopeFallbacks.length > 0 ? (
          <>
            <dt>Scope</dt>
            <dd>
              <ul className={styles.scopeFallbacks} aria-label="Kinds watched in fewer namespaces than asked">
                {cluster.scopeFallbacks.map((m) => (
                  <li key={m} className={styles.errorText}>
                    {m}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
      </dl>

      <h3 className={styles.subhead}>Shared watches</h3>
      {watches.length === 0 ? (
        <p className={styles.muted}>No watch is open.</p>
      ) : (
        <table className={styles.miniTable}>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Phase</th>
              <th scope="col">Objects</th>
              <th scope="col" title="watch requests opened / full lists">
                Opened / lists
              </th>
            </tr>
          </thead>
          <tbody>
            {watches.map((w) => (
              <tr key={w.id}>
                <td title={w.kind}>
                  {shortKind(w.kind)}
                  {w.namespace ? <span className={styles.muted}> in {w.namespace}</span> : null}
                </td>
                <td>
                  {w.phase}
                  {w.primed ? '' : ' (priming)'}
                  {w.lastError ? (
                    <span className={styles.errorText} title={w.lastError.message}>
                      {' '}
                      · {w.lastError.reason}
                    </span>
                  ) : null}
                </td>
                <td>{w.objects}</td>
                <td>
                  {w.watchesOpened} / {w.lists}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3 className={styles.subhead}>Work queues</h3>
      {queues.length === 0 ? (
        <p className={styles.muted}>No controller is registered.</p>
      ) : (
        <table className={styles.miniTable}>
          <thead>
            <tr>
              <th scope="col">Controller</th>
              <th scope="col">Depth</th>
              <th scope="col">Reconciles</th>
              <th scope="col">Errors</th>
            </tr>
          </thead>
          <tbody>
            {queues.map((q) => (
              <tr key={q.id}>
                <td className="mono">{q.controller}</td>
                <td>
                  {q.depth}
                  {q.processing > 0 ? <span className={styles.muted}> ({q.processing} running)</span> : null}
                </td>
                <td>{q.reconciles}</td>
                <td>{q.errors}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
});
