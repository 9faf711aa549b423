import { grKey } from './resources';

/** FaultHooks lets a test make the embedded server misbehave the ways a real one does. */
export interface FaultHooks {
  /** dropWatches ends every open watch cleanly, as an API server restart or a load balancer does. */
  dropWatches(): void;
  /** compactNow forgets all history: older resourceVersions get 410 (in-stream ERROR for watch, HTTP 410 Expired for list continue). */
  compactNow(): void;
  /** failNext makes the next n resource requests (not discovery or probes) fail with this status; 429 carries Retry-After. */
  failNext(n: number, status: 429 | 500, retryAfterSeconds?: number): void;
  /**
   * forbid answers 403 Forbidden, worded like RBAC's denial, for every verb on
   * the resource: everywhere (scope omitted), at the cluster scope only
   * (scope '': lists and watches of all namespaces, as for a user bound by
   * Roles only), or in one namespace (scope: its name). unforbid lifts the
   * same scope.
   */
  forbid(group: string, resource: string, scope?: string): void;
  unforbid(group: string, resource: string, scope?: string): void;
  /** slowDown delays every response by ms (0 turns it off). */
  slowDown(ms: number): void;
  /** reset lifts every fault (history already compacted stays compacted). */
  reset(): void;
}

/** InjectedFailure is what failNext armed for the next request. */
export interface InjectedFailure {
  status: 429 | 500;
  retryAfterSeconds?: number;
}

/** FaultState is the fault configuration the request handler consults. */
export class FaultState {
  private failures: InjectedFailure[] = [];
  private readonly forbidden = new Set<string>();
  delayMs = 0;

  armFailures(n: number, status: 429 | 500, retryAfterSeconds?: number): void {
    const count = Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
    for (let i = 0; i < count; i++) this.failures.push({ status, retryAfterSeconds });
  }

  /** takeFailure consumes one armed failure, if any. */
  takeFailure(): InjectedFailure | undefined {
    return this.failures.shift();
  }

  forbid(group: string, resource: string, scope?: string): void {
    this.forbidden.add(forbiddenKey(group, resource, scope));
  }

  unforbid(group: string, resource: string, scope?: string): void {
    this.forbidden.delete(forbiddenKey(group, resource, scope));
  }

  /** isForbidden says whether a request for the resource in namespace ('' at the cluster scope) is refused. */
  isForbidden(group: string, resource: string, namespace = ''): boolean {
    return (
      this.forbidden.has(forbiddenKey(group, resource, undefined)) ||
      this.forbidden.has(forbiddenKey(group, resource, namespace))
    );
  }

  reset(): void {
    this.failures = [];
    this.forbidden.clear();
    this.delayMs = 0;
  }
}

function forbiddenKey(group: string, resource: string, scope: string | undefined): string {
  return `${grKey({ group, resource })}|${scope ?? '*'}`;
}
