import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** CLK_TCK: the unit of utime and stime in /proc/<pid>/stat (100 on Linux almost everywhere). */
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

/** ProcessSample is what the kernel says of one process: CPU time used so far, resident memory now and at its peak. */
export interface ProcessSample {
  cpuSeconds: number;
  /**
   * CPU time of the main thread alone. For node, the rest is V8's worker threads: its optimizing compiler, which
   * compiles hot functions as a run warms up, and the garbage collector's parallel and concurrent tasks.
   */
  mainThreadCpuSeconds: number;
  rssBytes: number;
  peakRssBytes: number;
  /** RssFile now: pages of the node binary and its libraries the process touched (code, ICU data), bytes. */
  rssFileBytes: number;
}

/**
 * sampleProcess reads /proc/<pid>/stat (utime + stime, every thread) and
 * /proc/<pid>/status (VmRSS; VmHWM, the peak the kernel keeps; RssFile). Undefined
 * once the process is gone.
 */
export function sampleProcess(pid: number): ProcessSample | undefined {
  let stat: string;
  let mainStat: string;
  let status: string;
  try {
    // The thread first: read after it, the whole process has counted at least as much.
    mainStat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return {
    cpuSeconds: cpuOf(stat),
    mainThreadCpuSeconds: cpuOf(mainStat),
    rssBytes: kb('VmRSS'),
    peakRssBytes: kb('VmHWM'),
    rssFileBytes: kb('RssFile'),
  };
}

/** cpuOf reads utime + stime from a stat line of a process (every thread) or of one of its threads, in seconds. */
function cpuOf(stat: string): number {
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}
