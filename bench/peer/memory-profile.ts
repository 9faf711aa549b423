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
  const [{ readFileSync, writeFileSync }, { Session }, path, { PerformanceObserver, constants }, v8] =
    await Promise.all([
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
    // REFWATCH_PEER_HEAP_PROF_SURVIVORS=1 keeps only what survived a scavenge: what grows V8's young generation.
    includeObjectsCollectedByMinorGC: process.env.REFWATCH_PEER_HEAP_PROF_SURVIVORS !== '1',
  });
  let peak:
    | { rss: number; at: number; memory: NodeJS.MemoryUsage; spaces: HeapSpaceInfo[]; proc: Record<string, number> }
    | undefined;
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
  // RssAnon and RssFile: what the process wrote itself, and the pages of the node binary and libraries it touched.
  const status = () => {
    const text = readFileSync('/proc/self/status', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) / 1024;
    return { anonMB: kb('RssAnon'), fileMB: kb('RssFile') };
  };
  const timeline: Record<string, number>[] = [];
  let ticks = 0;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (++ticks % 25 === 0) {
      const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_size)]));
      const m = process.memoryUsage();
      timeline.push({
        atMs: Date.now() - started,
        rssMB: mb(rss),
        ...status(),
        newMB: spaces.new_space ?? 0,
        oldMB: spaces.old_space ?? 0,
        heapTotalMB: mb(m.heapTotal),
        externalMB: mb(m.external),
      });
    }
    if (peak && rss <= peak.rss) return;
    peak = {
      rss,
      at: Date.now() - started,
      memory: process.memoryUsage(),
      spaces: v8.getHeapSpaceStatistics(),
      proc: status(),
    };
  }, 20);
  return async () => {
    clearInterval(sampler);
    observer.disconnect();
    // What survived scavenges, not what the young generation still holds: garbage allocated since the last
    // scavenge is sampled too, and only a scavenge drops it. Short-lived filler, twice the largest young
    // generation, brings two (the filler itself dies in them, so it is not in the profile).
    if (process.env.REFWATCH_PEER_HEAP_PROF_SURVIVORS === '1') {
      let filler: unknown[] = [];
      for (let i = 0; i < 1_000_000; i++) filler = [i, filler.length];
      void filler;
    }
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const base = path.join(dir, `refwatch-${process.pid}`);
    writeFileSync(`${base}.heapprofile`, JSON.stringify(profile));
    const atPeak = peak && {
      rssMB: mb(peak.rss),
      ...peak.proc,
      atMs: peak.at,
      heapTotalMB: mb(peak.memory.heapTotal),
      heapUsedMB: mb(peak.memory.heapUsed),
      externalMB: mb(peak.memory.external),
      arrayBuffersMB: mb(peak.memory.arrayBuffers),
      spaces: Object.fromEntries(
        peak.spaces.map((s) => [s.space_name, { sizeMB: mb(s.space_size), usedMB: mb(s.space_used_size) }]),
      ),
    };
    writeFileSync(`${base}.peak.json`, JSON.stringify({ atPeak, minorGCs: minor, otherGCs: gcs, timeline }, null, 2));
    // Last, as it takes longest: what is still live once every App is resolved, the caches and the engine's state.
    v8.writeHeapSnapshot(`${base}.heapsnapshot`);
  };
}
