/**
 * The demo API's wire shapes (GET/POST /api/v1/demo/runs…, docs/api.md "Demo"):
 * one definition for the server that answers and the dashboard that reads.
 */
import type { ObjectKey } from '../model';

export type DemoMode = 'watch' | 'backoff';
export const DEMO_MODES: readonly DemoMode[] = ['watch', 'backoff'];

export type RunPhase = 'Creating' | 'Running' | 'Completed' | 'TimedOut' | 'Stopped' | 'Failed';

export type DanglingKind = 'typo' | 'wrongNamespace' | 'kindNotInstalled';

/** The distribution figures the demo reports per mode, in milliseconds. */
export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** A run's configuration once validated, defaults filled in. */
export interface DemoRunConfig {
  apps: number;
  databases: number;
  caches: number;
  secrets: number;
  readyAfter: { distribution: 'uniform'; minMs: number; maxMs: number } | { distribution: 'fixed'; ms: number };
  dangling: Record<DanglingKind, number>;
  churn?: { dropKind: 'Cache'; afterMs: number };
  backoffPreset: 'client-go' | 'crossplane';
  timeoutMs: number;
  seed?: number;
}

/** ModeResult is one controller's figures in a run. */
export interface ModeResult {
  mode: DemoMode;
  /** Resolvable Apps this controller resolved, and those it has not (yet). */
  resolved: number;
  unresolved: number;
  /** resolvedAt − the last referent's readyAt, over the resolved Apps (ms); null before the first. */
  latencyMs: Percentiles | null;
  /**
   * The same with each unresolved App counted at the time it has waited so far
   * (a lower bound of its latency, censored at the run's end); null when every
   * resolvable App is resolved.
   */
  censoredLatencyMs: Percentiles | null;
  reconciles: { total: number; perApp: number };
  /** API requests: by its reconciles (writes, GETs, discovery), by its watches (lists and watch requests), and per App. */
  requests: { total: number; reconcile: number; watches: number; perApp: number };
}

export interface DanglingApp {
  app: ObjectKey;
  dangling: DanglingKind;
  /** Why the watch controller is stuck on it, as the engine reports it. */
  reason?: string;
  message?: string;
}

/** DemoRunView is a run as the API returns it. */
export interface DemoRunView {
  id: string;
  namespace: string;
  /** The run's watch controller on the engine (and the dashboard); it stays until the run is deleted. */
  watchController: string;
  phase: RunPhase;
  config: DemoRunConfig;
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
    /** backoff ÷ watch at each percentile (censored figures for backoff when it left Apps unresolved). */
    speedup: { p50: number | null; p90: number | null; p99: number | null; censored: boolean };
    dangling: { total: number; byKind: Record<DanglingKind, number>; apps: DanglingApp[] };
    churn?: { dropKind: 'Cache'; afterMs: number; appliedAt?: string; apps: number };
    /** Requests the API server itself counted while the run ran, from every client (embedded cluster only). */
    apiServer?: { requests: number };
    /** Requests made to set the run up and to play the referents' controller. */
    setupRequests: number;
    simulatorRequests: number;
  };
  /** Per mode, every resolved App's latency in ms, ascending: for plotting a CDF or histogram. */
  latencies?: Record<DemoMode, number[]>;
}

/** isActivePhase: the run is still creating objects or waiting for resolutions, so it is worth polling. */
export function isActivePhase(phase: RunPhase | undefined): boolean {
  return phase === 'Creating' || phase === 'Running';
}
