import type { ChangeLog, EventEntity } from '../changelog';
import type { Clock, QueueMetricsProvider } from '../queue';
import type { ReferenceRegistry } from '../registry';
import type { ObjectKey } from '../model';
import type { InformerSource } from './informer-source';
import type { FallbackNamespace, ScopeFallback } from './scope-fallback';
import type { ReferenceControllers } from './reference-controllers';
import type { WakeFilters } from './wake';

/** EngineHooks let the host observe the engine (metrics, logs) without the engine knowing the host. */
export interface EngineHooks {
  /** A referrer became Resolved; latencyMs is measured from the referent event that woke it, when one did. */
  onResolved?(controller: string, key: ObjectKey, latencyMs: number | undefined): void;
  onReconcileError?(controller: string, key: ObjectKey, error: unknown): void;
  /** A kind is watched per namespace because listing it in all namespaces is Forbidden. */
  onScopeFallback?(fallback: ScopeFallback): void;
}

/** EngineContext is what the manager shares with its controllers. */
export interface EngineContext {
  readonly source: InformerSource;
  readonly registry: ReferenceRegistry;
  readonly changelog: ChangeLog;
  readonly referenceControllers: ReferenceControllers;
  readonly wake: WakeFilters;
  readonly clock: Clock;
  readonly hooks: EngineHooks;
  readonly queueMetrics?: (controller: string) => QueueMetricsProvider;
  /** The Manager's `namespaces` option: every watch is restricted to these. */
  readonly namespaces?: readonly string[];
  /** Where a controller's own kind is watched when its cluster-wide list is Forbidden (the Manager's option). */
  readonly fallbackNamespaces?: readonly FallbackNamespace[];
  /** Told that a kind is watched per namespace because its cluster-wide list was Forbidden. */
  scopeFallback(kind: string, namespaces: readonly FallbackNamespace[] | undefined): void;
  event(e: Omit<EventEntity, 'id' | 'at'>): void;
  /** How long a controller's stop waits for its reconciles in flight before it abandons them (ms). */
  readonly gracefulShutdownTimeout: number;
  /** A controller's stop gave up on these keys, whose reconciles were still running when the timeout ran out. */
  abandoned(controller: string, keys: readonly ObjectKey[]): void;
}
