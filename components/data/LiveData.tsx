'use client';

import { QueryClient, QueryClientProvider, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  createContext,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import type { Snapshot, Summary } from '@/lib/changelog/wire';
import { subscribeAccess, accessState } from './access';
import { applyDeltas } from './applyDelta';
import { markBatchFlushed, markSnapshotInHand } from './performanceMarks';
import { isLarge, modeKey, scopeQuery, type DataMode } from './scope';
import {
  ApiError,
  SNAPSHOT_QUERY_KEY,
  SUMMARY_QUERY_KEY,
  fetchSnapshot,
  fetchSummary,
  markFromDeltas,
  normalizeSnapshot,
  shareStructure,
} from './snapshotQuery';
import { SnapshotStream, type ConnectionState } from './stream';
import { TokenDialog } from './TokenDialog';

export interface Connection {
  state: ConnectionState;
  detail?: string;
  /** retry reopens the stream and refetches the snapshot now. */
  retry(): void;
}

const ConnectionContext = createContext<Connection>({ state: 'connecting', retry: () => {} });

/** What the page loads (undefined until it has decided), and how it changes that. */
const ModeContext = createContext<{ mode: DataMode | undefined; setMode(mode: DataMode | undefined): void }>({
  mode: undefined,
  setMode: () => {},
});

export function useConnection(): Connection {
  return useContext(ConnectionContext);
}

const snapshotKey = (mode: DataMode | undefined) => [...SNAPSHOT_QUERY_KEY, mode ? modeKey(mode) : 'none'] as const;

/**
 * useDataMode tells the data layer what to load: the stream reopens and the
 * snapshot is fetched for that mode (each scope is cached on its own).
 */
export function useDataMode(mode: DataMode | undefined): void {
  const { setMode } = useContext(ModeContext);
  const key = mode ? modeKey(mode) : '';
  const latest = useRef(mode);
  latest.current = mode;
  // Before paint: the stream and the snapshot request start with the frame that decided them.
  useLayoutEffect(() => setMode(latest.current), [key, setMode]);
}

/**
 * useSummary reads the overview's summary; the stream keeps it current.
 * When it shows a small registry and the URL asks for no other view, the
 * whole snapshot is requested as soon as the summary is in hand, not a few
 * renders later: a small cluster's page is as quick as before the overview.
 */
export function useSummary() {
  const client = useQueryClient();
  return useQuery({
    queryKey: SUMMARY_QUERY_KEY,
    queryFn: async ({ signal }) => {
      const summary = await fetchSummary(signal);
      const view = typeof location === 'undefined' ? null : new URLSearchParams(location.search).get('view');
      if (view === 'graph' || ((view === null || view === '') && !isLarge(summary.totals.references)))
        void client.prefetchQuery(snapshotQuery(client, { mode: 'all' }));
      return summary;
    },
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
    retry: (count, error) =>
      !(error instanceof ApiError && (error.status === 404 || error.status === 401)) && count < 2,
  });
}

/** snapshotQuery is the query of one mode's snapshot, for useSnapshot and for prefetching it. */
function snapshotQuery(client: QueryClient, mode: DataMode | undefined) {
  const queryKey = snapshotKey(mode);
  return {
    queryKey,
    structuralSharing: shareStructure,
    queryFn: async ({ signal }: { signal: AbortSignal }) => {
      const fetched = await fetchSnapshot(signal, mode ? scopeQuery(mode) : '');
      // The stream may have delivered something newer while this was in flight.
      const current = client.getQueryData<Snapshot>(queryKey);
      const next = current && current.revision > fetched.revision ? current : fetched;
      markSnapshotInHand(next);
      return next;
    },
  };
}

/**
 * useSnapshot reads the live snapshot of the current mode (none in the
 * overview). It never goes stale by time: the stream keeps it current with
 * deltas, and a gap or resync refetches it.
 */
export function useSnapshot() {
  const client = useQueryClient();
  const { mode } = useContext(ModeContext);
  return useQuery({
    ...snapshotQuery(client, mode),
    enabled: mode !== undefined && mode.mode !== 'overview',
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
    // 404: no such API; 401: the token dialog asks, and a new token refetches.
    retry: (count, error) =>
      !(error instanceof ApiError && (error.status === 404 || error.status === 401)) && count < 3,
  });
}

/** LiveData provides the query cache and runs the tab's single SSE connection into it. */
export function LiveData({ children }: { children: ReactNode }) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: Infinity } } }));
  return (
    <QueryClientProvider client={client}>
      <StreamConnection>{children}</StreamConnection>
      <TokenDialog />
    </QueryClientProvider>
  );
}

function StreamConnection({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [state, setState] = useState<{ state: ConnectionState; detail?: string }>({ state: 'connecting' });
  const [mode, setMode] = useState<DataMode | undefined>(undefined);
  const streamRef = useRef<SnapshotStream | undefined>(undefined);
  const key = mode ? modeKey(mode) : undefined;
  const modeValue = useMemo(() => ({ mode, setMode }), [mode]);

  useEffect(() => {
    // One stream per mode: until the page has decided, none.
    if (!mode) return;
    const queryKey = snapshotKey(mode);
    const refetch = () => void client.refetchQueries({ queryKey, exact: true });
    const stream = new SnapshotStream(
      {
        snapshot: (s) => {
          const snapshot = normalizeSnapshot(s);
          markSnapshotInHand(snapshot);
          client.setQueryData(queryKey, snapshot);
        },
        deltas: (deltas) => {
          const current = client.getQueryData<Snapshot>(queryKey);
          if (!current) return; // the initial snapshot (fetch or stream) brings these in
          const { snapshot, gap } = applyDeltas(current, deltas);
          if (snapshot !== current) {
            markFromDeltas(snapshot);
            markBatchFlushed();
            client.setQueryData(queryKey, snapshot);
          }
          if (gap) refetch();
        },
        cluster: (info) =>
          client.setQueryData<Snapshot>(queryKey, (prev) => (prev ? { ...prev, cluster: info } : prev)),
        summary: (summary) => client.setQueryData<Summary>(SUMMARY_QUERY_KEY, summary),
        resync: refetch,
        state: (s, detail) => setState({ state: s, ...(detail ? { detail } : {}) }),
      },
      { url: `/api/v1/stream${scopeQuery(mode)}` },
    );
    streamRef.current = stream;
    stream.start();
    // A new token: reopen the stream with it and refetch whatever was refused.
    let generation = accessState().generation;
    const unsubscribe = subscribeAccess(() => {
      if (accessState().generation === generation) return;
      generation = accessState().generation;
      stream.reconnect();
      void client.invalidateQueries();
    });
    return () => {
      unsubscribe();
      streamRef.current = undefined;
      void stream.stop();
    };
    // The mode's key names it: a new object for the same mode keeps the stream.
  }, [client, key]);

  const value = useMemo<Connection>(
    () => ({
      ...state,
      retry: () => {
        streamRef.current?.reconnect();
        void client.refetchQueries({ queryKey: SNAPSHOT_QUERY_KEY });
        void client.refetchQueries({ queryKey: SUMMARY_QUERY_KEY });
      },
    }),
    [state, client],
  );
  return (
    <ModeContext.Provider value={modeValue}>
      <ConnectionContext.Provider value={value}>{children}</ConnectionContext.Provider>
    </ModeContext.Provider>
  );
}
