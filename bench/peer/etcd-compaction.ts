/**
 * The peer benchmark's cluster compacts etcd between runs, never during one.
 *
 * kube-apiserver compacts etcd every five minutes by default, wherever a run
 * happens to be. A 5,000-App run lasts about two and a half minutes and
 * writes some 55,000 revisions; compacting them after it took 0.7–0.9 s on
 * the benchmark's machine, and inside a run a stall of that length would be
 * part of one implementation's p99 and not of the others'. The benchmark
 * starts kube-apiserver with COMPACTION_OFF and compacts after each run, so
 * every run starts from a compacted store. It removes one cause of stalls,
 * not all: the server stalls under load without it too.
 */
export const COMPACTION_OFF = '--etcd-compaction-interval=0';

/** compactEtcd compacts etcd at its current revision and waits until the compaction is applied; returns the revision. */
export async function compactEtcd(etcdUrl: string, timeoutMs = 60_000): Promise<number> {
  const range = await post<{ header?: { revision?: string } }>(
    etcdUrl,
    '/v3/kv/range',
    // Any key: the answer's header carries the store's revision. "/" base64-encoded, at most one key back.
    { key: 'Lw==', limit: 1, keys_only: true },
    timeoutMs,
  );
  const revision = Number(range.header?.revision);
  if (!Number.isSafeInteger(revision) || revision < 1)
    throw new Error(`etcd at ${etcdUrl} gave no revision in its range answer's header`);
  // physical: the answer comes once the compaction has removed the old revisions, not when it is scheduled.
  await post(etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true }, timeoutMs);
  return revision;
}

async function post<T>(etcdUrl: string, path: string, body: unknown, timeoutMs: number): Promise<T> {
  const res = await fetch(etcdUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  // A revision compacted already (no run since the last compaction) is no failure.
  if (res.status !== 200 && !/required revision has been compacted/.test(text))
    throw new Error(`etcd ${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return (res.status === 200 ? JSON.parse(text) : {}) as T;
}
