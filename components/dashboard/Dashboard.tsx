'use client';

import { useQuery } from '@tanstack/react-query';
import { usePathname, useSearchParams } from 'next/navigation';
import { memo, useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import type { Snapshot } from '@/lib/changelog/wire';
import { ApiError } from '../data/snapshotQuery';
import { useConnection, useDataMode, useSnapshot, useSummary } from '../data/LiveData';
import { fetchPastState, pastSnapshot } from '../data/pastState';
import { fetchStuck } from '../data/stuckQuery';
import { chooseMode, hasScope, isLarge, type DataMode, type ScopeParams } from '../data/scope';
import { DemoPanel } from '../demo/DemoPanel';
import { GraphView } from '../graph/GraphView';
import { Legend } from '../graph/Legend';
import { hasFilters } from '../graph/filtering';
import { controllerNodeId, objectNodeId, keyOfNodeId } from '../graph/model';
import { ClusterPanel } from '../panels/ClusterPanel';
import { ControllersPanel } from '../panels/ControllersPanel';
import { EventsPanel } from '../panels/EventsPanel';
import { Inspector } from '../panels/Inspector';
import { StuckPanel } from '../panels/StuckPanel';
import { stuckList, unlistedStuck, withServerStuck } from '../panels/stuck';
import { ConnectionIndicator } from '../ui/ConnectionIndicator';
import { Tabs, type TabSpec } from '../ui/Tabs';
import { ThemeToggle } from '../ui/ThemeToggle';
import { Overview, type OverviewChoice } from '../overview/Overview';
import { useTheme } from '../ui/theme';
import { useNow } from '../ui/useNow';
import { NodeTable } from './NodeTable';
import { TimePicker } from './TimePicker';
import { Toolbar } from './Toolbar';
import { useGraphModel } from './useGraphModel';
import { AT_PARAM, formatPastMoment, parsePastMoment } from './pastMoment';
import { parseViewState, serializeViewState, type PanelTab, type ViewState } from './viewState';
import styles from './Dashboard.module.css';

/**
 * Dashboard is the whole page: header, then either the overview (a large
 * registry's first screen) or filters, graph with its table mirror, and the
 * side column (the selected node's explanation, or the Stuck / Controllers /
 * Events / Cluster / Demo tabs). Scope, filters and the selection live in
 * the URL so a link shows the same view.
 */
export function Dashboard() {
  const params = useSearchParams();
  const pathname = usePathname();
  const view = useMemo(() => parseViewState(params), [params]);
  const summary = useSummary();
  // The registry's size decides once per page whether it opens on the overview: undefined
  // when the server has no summary (it then loads everything, as it always did), null until known.
  // Kept in a ref, not state, so the page asks for its data in the same render the summary arrives.
  const sizeRef = useRef<number | undefined | null>(null);
  if (sizeRef.current === null && (summary.data !== undefined || summary.isError))
    sizeRef.current = summary.data?.totals.references;
  const registrySize = sizeRef.current;
  const scopeParams: ScopeParams = useMemo(
    () => ({
      ns: view.ns,
      kind: view.kind,
      q: view.q,
      object: view.object,
      stuck: view.stuck === '1',
      view: view.view,
    }),
    [view.ns, view.kind, view.q, view.object, view.stuck, view.view],
  );
  const mode: DataMode | undefined = useMemo(() => {
    if (view.view === 'overview' && !hasScope(scopeParams)) return { mode: 'overview' };
    return registrySize === null ? undefined : chooseMode(scopeParams, registrySize);
  }, [scopeParams, registrySize, view.view]);
  useDataMode(mode);
  const large = isLarge(registrySize);
  const { data: liveSnapshot, error, isPending, refetch } = useSnapshot();
  // A past moment, read from the history: the graph, table and panels show it read-only until "Back to live".
  // It lives in the URL (?at=), so a link or a reload shows the same moment; a bad value leaves the view live.
  const rawAt = params.get(AT_PARAM);
  const pastMoment = useMemo(() => parsePastMoment(rawAt, Date.now()), [rawAt]);
  const pastAt = pastMoment.at;
  const scopedNamespace = mode?.mode === 'scoped' ? view.ns : '';
  const past = useQuery({
    queryKey: ['history-state', pastAt, scopedNamespace],
    queryFn: ({ signal }) => fetchPastState(pastAt!, scopedNamespace, signal),
    enabled: pastAt !== null,
    staleTime: Infinity,
    retry: false,
  });
  const clusterInfo = liveSnapshot?.cluster;
  const stuckThresholdMs = liveSnapshot?.stuckThresholdMs;
  const received = useMemo(() => {
    if (pastAt === null) return liveSnapshot;
    if (!past.data || !clusterInfo) return undefined;
    return pastSnapshot(past.data, { cluster: clusterInfo, stuckThresholdMs });
  }, [pastAt, past.data, liveSnapshot, clusterInfo, stuckThresholdMs]);
  const connection = useConnection();
  const { theme } = useTheme();
  const liveNow = useNow(1000);
  const now = pastAt ?? liveNow;
  const modelNow = Math.floor(now / 5000) * 5000; // the graph's "stuck" cut-off moves in 5 s steps, not every tick
  // The server diagnoses the stuck referrers it sends with a snapshot. One that crosses the threshold later is
  // listed by the browser alone, undiagnosed, and the root causes of the others may stop at it: while there is
  // such a one, the server's list is read again (when the set changes, and every 10 s), for its diagnosis.
  // The stuck list, the Stuck panel and its count follow a batch of status changes in a deferred render: the
  // graph and the header take the batch first, and the list is worked in slices that give way to a click (a list
  // of hundreds made up half of a batch's frame, bench/ui.ts).
  const stuckSource = useDeferredValue(received);
  const receivedStuck = useMemo(() => (stuckSource ? stuckList(stuckSource, now) : []), [stuckSource, now]);
  const unlisted = useMemo(
    () => (stuckSource && pastAt === null ? unlistedStuck(stuckSource, receivedStuck) : []),
    [stuckSource, pastAt, receivedStuck],
  );
  const serverStuck = useQuery({
    queryKey: ['stuck', scopedNamespace, unlisted.join('\n')],
    queryFn: ({ signal }) => fetchStuck(scopedNamespace, signal),
    enabled: unlisted.length > 0,
    refetchInterval: 10_000,
    retry: false,
  });
  const diagnosed = unlisted.length > 0 ? serverStuck.data : undefined;
  const snapshot = useMemo(
    () => (received && diagnosed ? withServerStuck(received, diagnosed) : received),
    [received, diagnosed],
  );
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const openerRef = useRef<HTMLElement | null>(null);

  const setView = useCallback(
    (patch: Partial<ViewState>, mode: 'push' | 'replace' = 'replace') => {
      const next = serializeViewState({ ...parseViewState(new URLSearchParams(window.location.search)), ...patch });
      const url = `${pathname}${next}`;
      if (mode === 'push') window.history.pushState(null, '', url);
      else window.history.replaceState(null, '', url);
    },
    [pathname],
  );

  // Scoped, the server has done the namespace, kind and search; on a small registry the browser filters.
  const scoped = mode?.mode === 'scoped';
  const filters = useMemo(
    () =>
      scoped
        ? { q: '', ns: '', kind: '', state: view.state }
        : { q: view.q, ns: view.ns, kind: view.kind, state: view.state || (view.stuck === '1' ? 'stuck' : '') },
    [scoped, view.q, view.ns, view.kind, view.state, view.stuck],
  );
  const selectKey = view.select || view.object;
  // A scope carries every reference controller as context; the graph draws those of the kinds it holds.
  const drawn = useMemo(() => (scoped && snapshot ? withControllersInScope(snapshot) : snapshot), [scoped, snapshot]);
  const { model, facets, filtered, grouped } = useGraphModel(drawn, modelNow, filters, view.group, expanded);
  // The table, like the Stuck panel, takes a batch in the deferred render: it orders all its rows again.
  const tableNodes = useDeferredValue(filtered.nodes);
  const stuck = useMemo(
    () => (stuckSource && diagnosed ? stuckList(withServerStuck(stuckSource, diagnosed), now) : receivedStuck),
    [stuckSource, diagnosed, receivedStuck, now],
  );

  const selectedNode = useMemo(() => {
    if (!selectKey) return undefined;
    const objectId = objectNodeId(selectKey);
    const controllerId = controllerNodeId(selectKey);
    return model.nodes.find((n) => n.id === objectId) ?? model.nodes.find((n) => n.id === controllerId);
  }, [model, selectKey]);

  const select = useCallback(
    (key: string | null) => {
      if (
        key &&
        document.activeElement instanceof HTMLElement &&
        !document.activeElement.closest('[data-testid="inspector"]')
      )
        openerRef.current = document.activeElement;
      setView({ select: key ?? '' }, 'push');
    },
    [setView],
  );
  const selectNodeId = useCallback((id: string | null) => select(id ? keyOfNodeId(id) : null), [select]);
  const closeInspector = useCallback(() => {
    setView({ select: '', ...(scoped ? {} : { object: '' }) }, 'push');
    const opener = openerRef.current;
    openerRef.current = null;
    if (opener?.isConnected) requestAnimationFrame(() => opener.focus());
  }, [setView, scoped]);

  const choose = useCallback(
    (c: OverviewChoice) =>
      setView(
        {
          ns: c.ns ?? '',
          kind: c.kind ?? '',
          q: c.q ?? '',
          object: c.object ?? '',
          select: c.object ?? '',
          stuck: c.stuck ? '1' : '',
          state: '',
          view: large ? '' : 'scope',
        },
        'push',
      ),
    [setView, large],
  );
  // A large registry's overview is its home and scopes are its way of loading; a small one's home is
  // the whole graph, so its overview, and the scopes chosen from it, are asked for by name.
  const backToOverview = useCallback(
    () =>
      setView(
        { ns: '', kind: '', q: '', object: '', select: '', stuck: '', state: '', view: large ? '' : 'overview' },
        'push',
      ),
    [setView, large],
  );

  useEffect(() => {
    if (!selectKey) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) closeInspector();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [selectKey, closeInspector]);

  const toggleGroup = useCallback((id: string) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }, []);

  const tabs: TabSpec<PanelTab>[] = [
    { id: 'stuck', label: 'Stuck', count: stuck.length, ...(stuck.length > 0 ? { tone: 'attention' as const } : {}) },
    { id: 'controllers', label: 'Controllers', count: snapshot?.controllers.length ?? 0 },
    { id: 'events', label: 'Events' },
    { id: 'cluster', label: 'Cluster' },
    { id: 'demo', label: 'Demo' },
  ];

  const noReferences = snapshot !== undefined && snapshot.references.length === 0 && snapshot.referrers.length === 0;
  const counts = useMemo(() => {
    const c = { referrers: 0, resolved: 0, attention: 0 };
    for (const n of model.nodes) {
      if (n.type !== 'object' || !n.roles.includes('referrer')) continue;
      c.referrers++;
      if (n.state === 'resolved') c.resolved++;
      if (n.state === 'stuck' || n.state === 'error' || n.state === 'notfound') c.attention++;
    }
    return c;
  }, [model]);

  return (
    <div className={styles.app}>
      <a href="#objects" className="skip-link">
        Skip to the objects table
      </a>
      <header className={styles.topbar}>
        <div className={styles.brand}>
          <Logo />
          <span className={styles.brandName}>refwatch</span>
        </div>
        {snapshot ? (
          <div className={styles.clusterChip} data-ok={snapshot.cluster.reachable} title={snapshot.cluster.server}>
            <span aria-hidden="true">{snapshot.cluster.reachable ? '◉' : '◎'}</span>
            {snapshot.cluster.context ??
              (snapshot.cluster.mode === 'embedded' ? 'embedded cluster' : snapshot.cluster.mode)}
            {snapshot.cluster.version ? <span className={styles.muted}>{snapshot.cluster.version}</span> : null}
          </div>
        ) : null}
        {mode && mode.mode !== 'overview' ? (
          <button type="button" className={styles.overviewButton} onClick={backToOverview}>
            ← Overview
          </button>
        ) : null}
        {mode?.mode === 'scoped' ? <ScopeChip scope={scopeParams} /> : null}
        <div className={styles.spacer} />
        {mode?.mode === 'overview' && summary.data ? (
          <dl className={styles.summary} aria-label="Summary">
            <div>
              <dt>Referrers</dt>
              <dd>{summary.data.totals.referrers.toLocaleString('en-US')}</dd>
            </div>
            <div>
              <dt>Resolved</dt>
              <dd>{summary.data.totals.states.Resolved.toLocaleString('en-US')}</dd>
            </div>
            <div data-tone={summary.data.totals.stuck > 0 ? 'attention' : undefined}>
              <dt>Stuck</dt>
              <dd>{summary.data.totals.stuck.toLocaleString('en-US')}</dd>
            </div>
          </dl>
        ) : snapshot && !noReferences ? (
          <dl className={styles.summary} aria-label="Summary">
            <div>
              <dt>Referrers</dt>
              <dd>{counts.referrers}</dd>
            </div>
            <div>
              <dt>Resolved</dt>
              <dd>{counts.resolved}</dd>
            </div>
            <div data-tone={counts.attention > 0 ? 'attention' : undefined}>
              <dt>Need attention</dt>
              <dd>{counts.attention}</dd>
            </div>
          </dl>
        ) : null}
        <ConnectionIndicator {...(liveSnapshot ? { revision: liveSnapshot.revision } : {})} />
        <ThemeToggle />
      </header>

      {connection.state === 'lost' ? (
        <div className={styles.banner} data-tone="danger" role="alert">
          <strong>Live updates stopped.</strong> {connection.detail ?? 'The stream to the refwatch server is down.'}{' '}
          What you see may be out of date.{' '}
          <button type="button" onClick={connection.retry}>
            Reconnect
          </button>
        </div>
      ) : null}
      {snapshot && !snapshot.cluster.reachable ? (
        <div className={styles.banner} data-tone="warning" role="alert">
          <strong>Cluster unreachable.</strong>{' '}
          {snapshot.cluster.message ?? `refwatch cannot reach ${snapshot.cluster.server || 'the API server'}.`} Watches
          retry on their own; states shown are the last ones seen.
        </div>
      ) : null}

      {mode?.mode === 'overview' ? (
        summary.data ? (
          <Overview summary={summary.data} now={now} onChoose={choose} />
        ) : (
          <div className={styles.centered}>
            {summary.error ? (
              <SnapshotError error={summary.error} onRetry={() => void summary.refetch()} />
            ) : (
              <p>Loading the overview…</p>
            )}
          </div>
        )
      ) : (
        <>
          <Toolbar
            view={view}
            facets={facets}
            shown={filtered.matched}
            total={model.nodes.length}
            autoGrouped={grouped.large}
            onChange={setView}
          />

          <TimePicker
            at={pastAt}
            loading={pastAt !== null && past.isPending}
            error={pastMoment.error ?? past.error?.message}
            onChange={(at) => setView({ at: at === null ? '' : formatPastMoment(at) }, 'push')}
          />

          <main className={styles.workspace}>
            <div className={styles.graphColumn}>
              <section className={styles.graphArea} aria-label="Reference graph">
                <div className={styles.graphStage}>
                  {isPending || (pastAt !== null && past.isPending) ? (
                    <div className={styles.centered}>
                      <div className={styles.spinner} aria-hidden="true" />
                      <p>Loading the reference graph…</p>
                    </div>
                  ) : error && !snapshot ? (
                    <SnapshotError error={error} onRetry={() => void refetch()} />
                  ) : noReferences ? (
                    <NoReferences />
                  ) : (
                    <>
                      <GraphView
                        model={grouped}
                        theme={theme}
                        selectedId={selectedNode?.id ?? ''}
                        onSelect={selectNodeId}
                        onToggleGroup={toggleGroup}
                        layout={view.layout}
                      />
                      {filtered.nodes.length === 0 && hasFilters(filters) ? (
                        <div className={styles.overlayNote} role="status">
                          Nothing matches these filters.{' '}
                          <button type="button" onClick={() => setView({ q: '', ns: '', kind: '', state: '' })}>
                            Clear filters
                          </button>
                        </div>
                      ) : null}
                    </>
                  )}
                </div>
                {snapshot && !noReferences ? <Legend /> : null}
              </section>
              {snapshot && !noReferences ? (
                <NodeTable nodes={tableNodes} selectedId={selectedNode?.id ?? ''} onSelect={selectNodeId} />
              ) : null}
            </div>

            <aside className={styles.side} aria-label={selectedNode ? 'Selected object' : 'Panels'}>
              {selectedNode && snapshot ? (
                <Inspector
                  node={selectedNode}
                  snapshot={snapshot}
                  now={now}
                  onSelectKey={select}
                  onClose={closeInspector}
                />
              ) : (
                <>
                  {selectKey && snapshot ? (
                    <div className={styles.banner} data-tone="info" role="status">
                      <span className="mono">{selectKey}</span> is not in the graph (any more).{' '}
                      <button type="button" onClick={() => setView({ select: '', ...(scoped ? {} : { object: '' }) })}>
                        Dismiss
                      </button>
                    </div>
                  ) : null}
                  <Tabs tabs={tabs} active={view.tab} onChange={(tab) => setView({ tab })} label="Panels">
                    {!snapshot ? (
                      <p className={styles.panelPlaceholder}>Waiting for the first snapshot…</p>
                    ) : view.tab === 'stuck' ? (
                      <StuckPanel stuck={stuck} onSelectKey={select} />
                    ) : view.tab === 'controllers' ? (
                      <ControllersPanel controllers={snapshot.controllers} now={now} onSelectKind={select} />
                    ) : view.tab === 'events' ? (
                      <EventsPanel events={snapshot.events} onSelectKey={select} />
                    ) : view.tab === 'cluster' ? (
                      <ClusterPanel cluster={snapshot.cluster} watches={snapshot.watches} queues={snapshot.queues} />
                    ) : (
                      <MemoDemoPanel />
                    )}
                  </Tabs>
                </>
              )}
            </aside>
          </main>
        </>
      )}
    </div>
  );
}

/** withControllersInScope keeps the reference controllers of the referent kinds a scoped snapshot holds. */
function withControllersInScope(snapshot: Snapshot): Snapshot {
  const kinds = new Set<string>();
  for (const r of snapshot.referents) kinds.add(r.kind);
  for (const r of snapshot.references) kinds.add(r.kind);
  const controllers = snapshot.controllers.filter((c) => kinds.has(c.kind));
  return controllers.length === snapshot.controllers.length ? snapshot : { ...snapshot, controllers };
}

/** ScopeChip says which scope the graph holds, as the URL asks for it. */
function ScopeChip({ scope }: { scope: ScopeParams }) {
  const parts = [
    scope.ns && `namespace ${scope.ns}`,
    scope.kind && `kind ${scope.kind}`,
    scope.q && `search “${scope.q}”`,
    scope.object && `object ${scope.object}`,
    scope.stuck && 'stuck referrers',
  ].filter(Boolean);
  return (
    <span className={styles.scopeChip} data-testid="scope">
      Scope: {parts.join(' · ')}
    </span>
  );
}

const MemoDemoPanel = memo(DemoPanel);

function NoReferences() {
  return (
    <div className={styles.centered}>
      <div className={styles.emptyCard}>
        <h2>No references yet</h2>
        <p>
          refwatch is connected, but no controller has declared a reference. The graph fills in as soon as one does.
        </p>
        <ol>
          <li>
            Run the demo: open the <strong>Demo</strong> tab and start a run. It creates Apps that refer to Databases,
            Caches and Secrets, and reconciles them the watch way and the backoff way side by side.
          </li>
          <li>
            Or point refwatch at a cluster: <code>npm start -- --kubeconfig ~/.kube/config --context NAME</code>; the
            built-in reference rules find Pods, Ingresses, RoleBindings and more.
          </li>
        </ol>
      </div>
    </div>
  );
}

function SnapshotError({ error, onRetry }: { error: Error; onRetry(): void }) {
  const notServed = error instanceof ApiError && error.status === 404;
  return (
    <div className={styles.centered}>
      <div className={styles.emptyCard} data-tone="danger" role="alert">
        <h2>{notServed ? 'The refwatch API is not available' : 'Cannot load the reference graph'}</h2>
        <p>{error.message}</p>
        <p className={styles.muted}>
          {notServed
            ? 'This server does not serve /api/v1/snapshot. Start refwatch with npm start.'
            : 'Check that the refwatch server is running, then retry.'}
        </p>
        <button type="button" className={styles.primaryButton} onClick={onRetry}>
          Retry
        </button>
      </div>
    </div>
  );
}

function Logo() {
  return (
    <svg width="22" height="22" viewBox="0 0 24 24" aria-hidden="true" className={styles.logo}>
      <circle cx="5" cy="12" r="3" fill="none" stroke="currentColor" strokeWidth="2" />
      <circle cx="19" cy="5" r="3" fill="none" stroke="currentColor" strokeWidth="2" />
      <circle cx="19" cy="19" r="3" fill="currentColor" />
      <path d="M8 11l8-5M8 13l8 5" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
    </svg>
  );
}
