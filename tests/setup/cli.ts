import { spawn } from 'node:child_process';
import path from 'node:path';

/** The repository's `refwatch` executable, as a user of this checkout runs it. */
export const REFWATCH_BIN = path.resolve(import.meta.dirname, '../../bin/refwatch');

/** What a finished CLI process left: its exit code (null when killed by a signal) and its output. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment of the child: nothing of the test runner's leaks in unless listed. */
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
}

/** runCli runs `bin/refwatch` with args as a separate process and resolves when it exits. */
export function runCli(args: string[], { env, stdin }: CliOptions): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(REFWATCH_BIN, args, {
      env: env as NodeJS.ProcessEnv,
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}
