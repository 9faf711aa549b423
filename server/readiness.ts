import type { ClusterInfo } from '../lib/changelog';
import type { ReflectorStatus } from '../lib/kube';
import { kindKey } from '../lib/model';

/**
 * Readiness is what /readyz answers. `ready` is false (503) only until the
 * server can answer at all: the cluster was reached once and every cache holds
 * its initial snapshot. Afterwards a failing watch or an unreachable cluster
 * makes it `degraded` (still 200, with warnings): the dashboard keeps serving
 * the last known state, which is what a person needs during an API server
 * outage, and every replica shares that outage, so taking them out of the
 * Service's endpoints would only turn stale data into connection errors.
 *
 * A kind the user may not read (403, with the RBAC rule it lacks) is an
 * answer too, like a kind the cluster does not serve: it makes the server
 * `degraded`, never not ready, since no wait would change it. Its references
 * are reported Forbidden, with the rule to grant.
 */
export interface Readiness {
  ready: boolean;
  status: 'ready' | 'degraded' | 'not ready';
  /** Why not ready. */
  reasons: string[];
  /** What is wrong while still ready: failing watches, an unreachable cluster. */
  warnings: string[];
}

export interface ReadinessInput {
  cluster: ClusterInfo;
  /** The cluster answered at least once since the server started. */
  everReachable: boolean;
  watches: ReflectorStatus[];
  now: number;
  /** Kinds watched per namespace because listing them in all namespaces is Forbidden (Manager.scopeFallbacks). */
  scopeFallbacks?: readonly string[];
}

export function judgeReadiness({ cluster, everReachable, watches, now, scopeFallbacks }: ReadinessInput): Readiness {
  const reasons: string[] = [];
  const warnings: string[] = [];
  const unreachable = cluster.message ?? `cluster ${cluster.server} is not reachable`;
  if (!cluster.reachable)
    (everReachable ? warnings : reasons).push(
      everReachable ? `${unreachable}; serving the last known state` : unreachable,
    );
  for (const w of watches) {
    const kind = kindKey(w.target) + (w.target.namespace ? ` in ${w.target.namespace}` : '');
    // A kind the cluster does not serve is an answer, not a wait: its references are reported stuck as KindUnknown.
    if (!w.primed && w.lastError?.reason === 'KindUnknown') continue;
    // So is a 403 naming the missing rule; a 401 (credentials rejected, no rule) still blocks.
    if (!w.primed && w.lastError?.reason === 'Forbidden' && w.lastError.missingRule)
      warnings.push(`${kind} is not watched: ${w.lastError.message}`);
    else if (!w.primed) reasons.push(`${kind} cache is not primed yet${w.lastError ? `: ${w.lastError.message}` : ''}`);
    else if (w.primed && w.lastError) {
      const since = w.failingSince ?? w.lastError.at;
      warnings.push(
        `watch of ${kind} failing for ${Math.max(0, Math.round((now - since) / 1000))} s (${w.lastError.reason}): ${w.lastError.message}; serving the last known state`,
      );
    }
  }
  warnings.push(...(scopeFallbacks ?? []));
  const ready = reasons.length === 0;
  return { ready, status: !ready ? 'not ready' : warnings.length > 0 ? 'degraded' : 'ready', reasons, warnings };
}
