import type { HeapSpaceInfo } from 'node:v8';

/**
 * startMemoryProfile is what REFWATCH_PEER_HEAP_PROF=DIR turns on in
 * refwatch's controller process, to say where its peak goes: a sampling heap
 * profile of every allocation, collected or not (Chrome DevTools reads the
 * .heapprofile), a heap snapshot once the run ended, and, every 20 ms, the resident memory and V8's heap spaces,
 * of which the sample at the highest RSS is written beside it. The returned
 * function stops both and writes the files; the process's own figures are
 * then not the benchmark's.
 */
const mb = (n: number) => +(n / 2 ** 20).toFixed(1);

export async function startMemoryProfile(dir: string): Promise<() => Promise<void>> {
  // Loaded here, not at the top: the bundle that the benchmark measures would otherwise load them in every run.
  const [{ writeFileSync }, { Session }, path, { PerformanceObserver, constants }, v8] = await Promise.all([
    import('node:fs'),
    import('node:inspector/promises'),
    import('node:path'),
    import('node:perf_hooks'),
    import('node:v8'),
  ]);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  let peak: { rss: number; at: number; memory: NodeJS.MemoryUsage; spaces: HeapSpaceInfo[] } | undefined;
  const started = Date.now();
  const gcs: { kind: string; atMs: number; ms: number; rssMB: number }[] = [];
  const gcKinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = gcKinds[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
      if (kind !== 'minor')
        gcs.push({
          kind,
          atMs: Date.now() - started,
          ms: +e.duration.toFixed(1),
          rssMB: mb(process.memoryUsage.rss()),
        });
      else minor++;
    }
  });
  let minor = 0;
  observer.observe({ entryTypes: ['gc'] });
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (peak && rss <= peak.rss) return;
    peak = { rss, at: Date.now() - started, memory: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics() };
  }, 20);
  return async () => {
    clearInterval(sampler);
    observer.disconnect();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const base = path.join(dir, `refwatch-${process.pid}`);
    writeFileSync(`${base}.heapprofile`, JSON.stringify(profile));
    const atPeak = peak && {
      rssMB: mb(peak.rss),
      atMs: peak.at,
      heapTotalMB: mb(peak.memory.heapTotal),
      heapUsedMB: mb(peak.memory.heapUsed),
      externalMB: mb(peak.memory.external),
      arrayBuffersMB: mb(peak.memory.arrayBuffers),
      spaces: Object.fromEntries(
        peak.spaces.map((s) => [s.space_name, { sizeMB: mb(s.space_size), usedMB: mb(s.space_used_size) }]),
      ),
    };
    // What is still live once every App is resolved: the caches and the engine's state, without the garbage.
    v8.writeHeapSnapshot(`${base}.heapsnapshot`);
    writeFileSync(`${base}.peak.json`, JSON.stringify({ atPeak, minorGCs: minor, otherGCs: gcs }, null, 2));
  };
}
