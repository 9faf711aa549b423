import { readdirSync, readFileSync } from 'node:fs';

/** CpuProfile is the part of the DevTools protocol's Profiler.Profile read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * topSelfTime sums a CPU profile's samples by function and source position and lists the `n` that took the
 * most time, as "ms  share  function  url:line".
 */
export function topSelfTime(profile: CpuProfile, n: number): string[] {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const deltas = profile.timeDeltas ?? [];
  const self = new Map<string, number>();
  let total = 0;
  (profile.samples ?? []).forEach((id, i) => {
    const frame = byNode.get(id)?.callFrame;
    if (!frame) return;
    const ms = (deltas[i] ?? 0) / 1000;
    total += ms;
    const where = frame.url
      ? `${frame.url.replace(/^.*\/_next\//, '')}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`
      : '';
    const name = `${frame.functionName || '(anonymous)'}  ${where}`;
    self.set(name, (self.get(name) ?? 0) + ms);
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, ms]) => `${ms.toFixed(0).padStart(6)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${name}`);
}

/**
 * browserCpuMs is the CPU time used so far by this process's children and their descendants (the Chromium it
 * launched: browser, renderers, GPU and utility processes), user + system from /proc. The difference across a
 * page load is the browser's work for it, which unlike the wall time does not grow when other processes share
 * the cores. Undefined where /proc is not there.
 */
export function browserCpuMs(): number | undefined {
  const stats = new Map<number, { parent: number; ticks: number }>();
  let dirs: string[];
  try {
    dirs = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const d of dirs) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces: state, ppid, … utime (14th field), stime (15th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(d), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended while we read
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = stats.get(pid)?.parent, hops = 0; p !== undefined && p > 1 && hops < 20; hops++) {
      if (p === process.pid) return true;
      p = stats.get(p)?.parent;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, s] of stats) if (descends(pid)) ticks += s.ticks;
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Linux's USER_HZ, which /proc/PID/stat counts in, is 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
