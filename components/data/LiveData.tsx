'use client';

import { QueryClient, QueryClientProvider, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { Snapshot } from '@/lib/changelog/wire';
import { subscribeAccess, accessState } from './access';
import { applyDeltas } from './applyDelta';
import { markBatchFlushed, markSnapshotInHand } from './performanceMarks';
import { ApiError, SNAPSHOT_QUERY_KEY, fetchSnapshot, normalizeSnapshot } from './snapshotQuery';
import { SnapshotStream, type ConnectionState } from './stream';
import { TokenDialog } from './TokenDialog';

export interface Connection {
  state: ConnectionState;
  detail?: string;
  /** retry reopens the stream and refetches the snapshot now. */
  retry(): void;
}

const ConnectionContext = createContext<Connection>({ state: 'connecting', retry: () => {} });

export function useConnection(): Connection {
  return useContext(ConnectionContext);
}

/**
 * useSnapshot reads the live snapshot. It never goes stale by time: the
 * stream keeps it current with deltas, and a gap or resync refetches it.
 */
export function useSnapshot() {
  const client = useQueryClient();
  return useQuery({
    queryKey: SNAPSHOT_QUERY_KEY,
    queryFn: async ({ signal }) => {
      const fetched = await fetchSnapshot(signal);
      // The stream may have delivered something newer while this was in flight.
      const current = client.getQueryData<Snapshot>(SNAPSHOT_QUERY_KEY);
      const next = current && current.revision > fetched.revision ? current : fetched;
      markSnapshotInHand(next);
      return next;
    },
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
    // 404: no such API; 401: the token dialog asks, and a new token refetches.
    retry: (count, error) => !(error instanceof ApiError && (error.status === 404 || error.status === 401)) && count < 3,
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
  const streamRef = useRef<SnapshotStream | undefined>(undefined);

  useEffect(() => {
    const refetch = () => void client.refetchQueries({ queryKey: SNAPSHOT_QUERY_KEY, exact: true });
    const stream = new SnapshotStream({
      snapshot: (s) => {
        const snapshot = normalizeSnapshot(s);
        markSnapshotInHand(snapshot);
        client.setQueryData(SNAPSHOT_QUERY_KEY, snapshot);
      },
      deltas: (deltas) => {
        const current = client.getQueryData<Snapshot>(SNAPSHOT_QUERY_KEY);
        if (!current) return; // the initial snapshot (fetch or stream) brings these in
        const { snapshot, gap } = applyDeltas(current, deltas);
        if (snapshot !== current) {
          markBatchFlushed();
          client.setQueryData(SNAPSHOT_QUERY_KEY, snapshot);
        }
        if (gap) refetch();
      },
      cluster: (info) => client.setQueryData<Snapshot>(SNAPSHOT_QUERY_KEY, (prev) => (prev ? { ...prev, cluster: info } : prev)),
      resync: refetch,
      state: (s, detail) => setState({ state: s, ...(detail ? { detail } : {}) }),
    });
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
  }, [client]);

  const value = useMemo<Connection>(
    () => ({
      ...state,
      retry: () => {
        streamRef.current?.reconnect();
        void client.refetchQueries({ queryKey: SNAPSHOT_QUERY_KEY, exact: true });
      },
    }),
    [state, client],
  );
  return <ConnectionContext.Provider value={value}>{children}</ConnectionContext.Provider>;
}
