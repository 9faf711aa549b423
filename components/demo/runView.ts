/**
 * The demo run as GET /api/v1/demo/runs/ID returns it (docs/api.md, "The run").
 * The browser keeps its own copy of the shape: client code never imports server/.
 */
export type DemoMode = 'watch' | 'backoff';
export const DEMO_MODES: readonly DemoMode[] = ['watch', 'backoff'];

export type RunPhase = 'Creating' | 'Running' | 'Completed' | 'TimedOut' | 'Stopped' | 'Failed';

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface ModeResult {
  mode: DemoMode;
  resolved: number;
  unresolved: number;
  latencyMs: Percentiles | null;
  censoredLatencyMs: Percentiles | null;
  reconciles: { total: number; perApp: number };
  requests: { total: number; reconcile: number; watches: number; perApp: number };
}

export type DanglingKind = 'typo' | 'wrongNamespace' | 'kindNotInstalled';

export interface DemoRunView {
  id: string;
  namespace: string;
  /** The run's watch controller on the engine, kept until the run is deleted. */
  watchController: string;
  phase: RunPhase;
  config: {
    apps: number;
    databases: number;
    caches: number;
    secrets: number;
    readyAfter: { distribution: 'uniform'; minMs: number; maxMs: number } | { distribution: 'fixed'; ms: number };
    dangling: Record<DanglingKind, number>;
    churn?: { dropKind: 'Cache'; afterMs: number };
    backoffPreset: 'client-go' | 'crossplane';
    timeoutMs: number;
  };
  seed: number;
  startedAt: string;
  endedAt?: string;
  error?: string;
  progress: {
    elapsedMs: number;
    objects: { planned: number; created: number };
    apps: { total: number; resolvable: number; dangling: number };
    referents: { total: number; ready: number };
    resolved: Record<DemoMode, number>;
  };
  results: {
    modes: Record<DemoMode, ModeResult>;
    speedup: { p50: number | null; p90: number | null; p99: number | null; censored: boolean };
    dangling: { total: number; byKind: Record<DanglingKind, number>; apps: { app: string; dangling: DanglingKind; reason?: string; message?: string }[] };
    churn?: { dropKind: 'Cache'; afterMs: number; appliedAt?: string; apps: number };
    apiServer?: { requests: number };
    setupRequests: number;
    simulatorRequests: number;
  };
  /** Ascending latencies (ms) of resolved Apps per mode; GET by id only. */
  latencies?: Record<DemoMode, number[]>;
}

/** isActivePhase: the run is still creating objects or waiting for resolutions, so it is worth polling. */
export function isActivePhase(phase: RunPhase | undefined): boolean {
  return phase === 'Creating' || phase === 'Running';
}
