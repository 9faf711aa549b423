import type { StuckEntry } from '@/lib/changelog/wire';
import { apiFetch } from './access';
import { apiErrorMessage } from './apiError';
import { ApiError } from './snapshotQuery';

/** fetchStuck reads the server's stuck referrers now (GET /api/v1/stuck), with their diagnosis and root causes. */
export async function fetchStuck(namespace: string, signal?: AbortSignal): Promise<StuckEntry[]> {
  const q = new URLSearchParams();
  if (namespace) q.set('namespace', namespace);
  const path = `/api/v1/stuck${q.size > 0 ? `?${q.toString()}` : ''}`;
  const res = await apiFetch(path, { signal, headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new ApiError(await apiErrorMessage(res, 'GET /api/v1/stuck'), res.status);
  const body = (await res.json()) as { items?: unknown };
  return Array.isArray(body.items) ? (body.items as StuckEntry[]) : [];
}
