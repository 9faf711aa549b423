/**
 * QueueMetricsProvider receives a queue's events as they happen, so a server
 * can feed its own instruments (prom-client counters and histograms) without
 * lib/queue depending on them. Every hook is optional and runs synchronously
 * after the queue's state is updated; it must be cheap and must not throw.
 */
export interface QueueMetricsProvider {
  /** A key became dirty: it was not already waiting to be handed out. */
  onAdd?(): void;
  /** A key was handed out, `ms` after the add that made it dirty. */
  onQueueLatency?(ms: number): void;
  /** A key was marked done, `ms` after it was handed out. */
  onWorkDuration?(ms: number): void;
  /** A key was re-added through the rate limiter. */
  onRetry?(): void;
}

/** QueueStats is a point-in-time view of a queue, cheap enough to poll from a gauge's collect(). */
export interface QueueStats {
  /** Keys queued and ready to be handed out (excludes keys waiting on a delay). */
  depth: number;
  /** Keys that became dirty since the queue was made (deduplicated adds). */
  adds: number;
  /** Rate-limited re-adds since the queue was made. */
  retries: number;
  /** Keys handed out and not yet done. */
  processing: number;
  /** How long the oldest key still processing has been processing; 0 when none. */
  longestRunningMs: number;
  /** Sum over the keys still processing of how long each has been processing. */
  unfinishedWorkMs: number;
}
