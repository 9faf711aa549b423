import { kubeRequest, type KubeEndpoint } from '../../tests/setup/kube-http';

/**
 * The resources the benchmark's objects live in, keyed as kube-apiserver's
 * metrics label them (`resource.group`, or `resource` for the core group).
 * Requests on any other resource (namespaces, CRDs, leases, discovery) are
 * not the controllers' per-App work and are left out of the counts.
 */
export const COUNTED_RESOURCES = new Set([
  'apps.demo.refwatch.dev',
  'databases.demo.refwatch.dev',
  'caches.demo.refwatch.dev',
  'secrets',
]);

/** ApiServerCounts is one scrape of kube-apiserver's /metrics, restricted to COUNTED_RESOURCES. */
export interface ApiServerCounts {
  /** apiserver_request_total summed, by "VERB resource[/subresource]". A WATCH is counted when it ends. */
  requests: Record<string, number>;
  /** apiserver_longrunning_requests{verb="WATCH"}: watches open now, in all and by resource. */
  openWatches: number;
  openWatchesByResource: Record<string, number>;
}

const SAMPLE = /^(apiserver_request_total|apiserver_longrunning_requests)\{([^}]*)\}\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** parseApiServerCounts reads the two metrics the benchmark needs from the Prometheus text format. */
export function parseApiServerCounts(text: string): ApiServerCounts {
  const out: ApiServerCounts = { requests: {}, openWatches: 0, openWatchesByResource: {} };
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of m[2]!.matchAll(LABEL)) labels[l[1]!] = l[2]!;
    const resource = labels.group ? `${labels.resource}.${labels.group}` : (labels.resource ?? '');
    if (!COUNTED_RESOURCES.has(resource)) continue;
    const value = Number(m[3]);
    if (m[1] === 'apiserver_longrunning_requests') {
      if (labels.verb !== 'WATCH') continue;
      out.openWatches += value;
      out.openWatchesByResource[resource] = (out.openWatchesByResource[resource] ?? 0) + value;
      continue;
    }
    const key = `${labels.verb} ${resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.requests[key] = (out.requests[key] ?? 0) + value;
  }
  return out;
}

export async function scrapeApiServer(endpoint: KubeEndpoint): Promise<ApiServerCounts> {
  const res = await kubeRequest(endpoint, 'GET', '/metrics', { timeoutMs: 30_000 });
  if (res.status !== 200)
    throw new Error(`GET /metrics on kube-apiserver failed (${res.status}): ${res.body.slice(0, 200)}`);
  return parseApiServerCounts(res.body);
}

/** requestsBetween is after − before, per key and in total. */
export function requestsBetween(
  before: ApiServerCounts,
  after: ApiServerCounts,
): { total: number; byKey: Record<string, number> } {
  const byKey: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(after.requests)) {
    const d = v - (before.requests[k] ?? 0);
    if (d === 0) continue;
    byKey[k] = d;
    total += d;
  }
  return { total, byKey };
}
