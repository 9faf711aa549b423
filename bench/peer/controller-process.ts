import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { memoryCgroup } from './memory-limit';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * ControllerProcess runs one implementation under test as a child process
 * and waits for the "ready" line it prints once its caches are synced. The
 * child is killed if this process exits first.
 */
export class ControllerProcess {
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly stderrTail: string[] = [];
  private readonly exited: Promise<string>;
  private done = false;
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly name: string,
    command: string,
    args: string[],
    cwd: string,
    env: NodeJS.ProcessEnv = process.env,
    memoryLimitBytes?: number,
  ) {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const c of live) c.kill('SIGKILL');
      });
    }
    const cgroup = memoryLimitBytes === undefined ? undefined : memoryCgroup(name, memoryLimitBytes);
    const run = cgroup ? cgroup.wrap(command, args) : { command, args };
    this.child = spawn(run.command, run.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
    this.pid = this.child.pid;
    live.add(this.child);
    // REFWATCH_PEER_DEBUG's watch lines and the engine's log lines are only worth asking for if they are seen.
    const echo = process.env.REFWATCH_PEER_DEBUG ? (line: string) => console.error(`  [${name}] ${line}`) : undefined;
    if (echo) createInterface({ input: this.child.stdout! }).on('line', echo);
    createInterface({ input: this.child.stderr! }).on('line', (line) => {
      echo?.(line);
      this.stderrTail.push(line);
      if (this.stderrTail.length > 40) this.stderrTail.shift();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.done = true;
        live.delete(this.child);
        cgroup?.remove();
        resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
      });
    });
  }

  /** start spawns the child and resolves once it printed "ready"; rejects if it exits or stays silent for timeoutMs. */
  static async start(
    name: string,
    command: string,
    args: string[],
    opts: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv; memoryLimitBytes?: number },
  ): Promise<ControllerProcess> {
    const p = new ControllerProcess(name, command, args, opts.cwd, opts.env, opts.memoryLimitBytes);
    try {
      await p.ready(opts.timeoutMs);
      return p;
    } catch (e) {
      await p.stop();
      throw e;
    }
  }

  private ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: this.child.stdout! });
      const timer = setTimeout(
        () => reject(new Error(`${this.name} printed no "ready" within ${timeoutMs / 1000} s${this.tail()}`)),
        timeoutMs,
      );
      lines.on('line', (line) => {
        if (line.trim() !== 'ready') return;
        clearTimeout(timer);
        resolve();
      });
      void this.exited.then((how) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} ${how} before it was ready${this.tail()}`));
      });
    });
  }

  /** exitedEarly says how the child ended if it is no longer running. */
  async exitedEarly(): Promise<string | undefined> {
    return this.done ? `${this.name} ${await this.exited}${this.tail()}` : undefined;
  }

  /** stop sends SIGTERM, SIGKILL after 10 s, and resolves once the child has exited. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.done) return;
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    })();
    return this.stopping;
  }

  private tail(): string {
    return this.stderrTail.length ? `; its last stderr lines:\n${this.stderrTail.join('\n')}` : '';
  }
}
