import type { Snapshot } from '@/lib/changelog/wire';

/**
 * User Timing entries the dashboard leaves for benchmarks and DevTools:
 *   refwatch:graph:first-render  first snapshot with references in hand → graph drawn after its first layout
 *   refwatch:graph:complete      first snapshot in hand → every element on the graph drawn: later than the first
 *                                render only where a dense first draw held edges outside the opening view back
 *   refwatch:graph:apply-batch   one frame's batch of deltas handed over → graph elements updated
 *   refwatch:overview:first-render  navigation start → the overview drawn with its summary
 */
export const FIRST_RENDER = 'refwatch:graph:first-render';
export const COMPLETE = 'refwatch:graph:complete';
export const APPLY_BATCH = 'refwatch:graph:apply-batch';
const SNAPSHOT_IN_HAND = 'refwatch:snapshot:in-hand';
const BATCH_FLUSHED = 'refwatch:deltas:flushed';

const timing = (): Performance | undefined =>
  typeof performance !== 'undefined' && typeof performance.mark === 'function' ? performance : undefined;

/** markSnapshotInHand marks the first snapshot that has something to draw; later ones do not move the mark. */
export function markSnapshotInHand(snapshot: Snapshot): void {
  const p = timing();
  if (!p || (snapshot.referrers.length === 0 && snapshot.references.length === 0)) return;
  if (p.getEntriesByName(SNAPSHOT_IN_HAND, 'mark').length > 0) return;
  p.mark(SNAPSHOT_IN_HAND);
}

/** markBatchFlushed marks a frame's deltas reaching the snapshot; the graph closes the measure when it has applied them. */
export function markBatchFlushed(): void {
  timing()?.mark(BATCH_FLUSHED);
}

/** measureFirstRender records FIRST_RENDER once per page, from the first snapshot in hand to now, and COMPLETE with it. */
export function measureFirstRender(): void {
  once(FIRST_RENDER);
  once(COMPLETE);
}

/** measureFirstRenderHeld records FIRST_RENDER alone: the graph still holds elements back, and measureComplete follows. */
export function measureFirstRenderHeld(): void {
  once(FIRST_RENDER);
}

/** measureComplete records COMPLETE once per page: the last held-back elements are drawn. */
export function measureComplete(): void {
  once(COMPLETE);
}

function once(name: string): void {
  const p = timing();
  if (!p || p.getEntriesByName(name, 'measure').length > 0) return;
  const start = p.getEntriesByName(SNAPSHOT_IN_HAND, 'mark')[0];
  if (!start) return;
  p.measure(name, { start: start.startTime, end: p.now() });
}

/** measureAppliedBatch records APPLY_BATCH from the oldest flush not yet on the graph to now; nothing when none is pending. */
export function measureAppliedBatch(): void {
  const p = timing();
  if (!p) return;
  const pending = p.getEntriesByName(BATCH_FLUSHED, 'mark');
  if (pending.length === 0) return;
  p.measure(APPLY_BATCH, { start: pending[0]!.startTime, end: p.now() });
  p.clearMarks(BATCH_FLUSHED);
}

/** OVERVIEW_RENDER: navigation start → the overview's first paint with its summary. */
export const OVERVIEW_RENDER = 'refwatch:overview:first-render';

/** markOverviewRendered records OVERVIEW_RENDER once per page, after the frame that shows the overview. */
export function markOverviewRendered(): void {
  const p = timing();
  if (!p || p.getEntriesByName(OVERVIEW_RENDER, 'measure').length > 0) return;
  requestAnimationFrame(() => {
    if (p.getEntriesByName(OVERVIEW_RENDER, 'measure').length === 0)
      p.measure(OVERVIEW_RENDER, { start: 0, end: p.now() });
  });
}
