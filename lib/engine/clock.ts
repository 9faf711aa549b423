import type { Clock } from '../queue';

/**
 * wallClock is the engine's clock: epoch milliseconds, because the times it
 * records (since, primedAt, cancelledAt) are shown to people and compared
 * with Kubernetes timestamps.
 */
export const wallClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
