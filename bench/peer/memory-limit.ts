import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A memory cgroup for one controller process, as a pod's
 * `resources.limits.memory` gives each container: REFWATCH_PEER_MEMORY_LIMIT
 * puts every implementation in one of these. Node sizes V8's heap from the
 * limit it finds there (a 128 or 256 MiB limit gives a heap limit of 259 MB
 * and a young generation of at most 2 MB instead of 32 MB); Go's runtime
 * does not read it. Needs root and a cgroup v1 or v2 memory controller.
 */
export interface MemoryCgroup {
  /** wrap runs the command inside the cgroup: a shell moves itself in, then execs it, so the pid is the command's. */
  wrap(command: string, args: string[]): { command: string; args: string[] };
  /** remove deletes the cgroup once its process has exited. */
  remove(): void;
}

const UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** parseMemoryLimit reads a Kubernetes quantity in Ki, Mi or Gi, e.g. 128Mi. */
export function parseMemoryLimit(text: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)$/.exec(text.trim());
  if (!m || Number(m[1]) === 0)
    throw new Error(`REFWATCH_PEER_MEMORY_LIMIT: "${text}" is not a memory limit in Ki, Mi or Gi, e.g. 128Mi`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export function memoryCgroup(name: string, bytes: number): MemoryCgroup {
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
  if (!existsSync(root))
    throw new Error(`REFWATCH_PEER_MEMORY_LIMIT: no memory cgroup controller at ${root}; unset it to run without one`);
  const dir = path.join(root, `refwatch-peer-${name}-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(bytes));
  } catch (e) {
    throw new Error(
      `REFWATCH_PEER_MEMORY_LIMIT: could not make the cgroup ${dir} (${(e as Error).message}); it needs root`,
      { cause: e },
    );
  }
  const procs = path.join(dir, v2 ? 'cgroup.procs' : 'tasks');
  return {
    wrap: (command, args) => ({
      command: '/bin/sh',
      args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, command, ...args],
    }),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // A process still in it keeps it; the next run's name differs by pid.
      }
    },
  };
}
