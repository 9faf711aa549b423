import { readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

/**
 * embeddedKubeconfigPath is where `npm start` leaves the embedded cluster's
 * kubeconfig for kubectl: the user's state directory ($XDG_STATE_HOME, else
 * ~/.local/state), never the repository.
 */
export function embeddedKubeconfigPath(env: Record<string, string | undefined> = process.env): string {
  const state =
    env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)
      ? env.XDG_STATE_HOME
      : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(state, 'refwatch', 'embedded.kubeconfig');
}

/**
 * writeKubeconfigFile writes a kubeconfig readable by its owner only (it
 * holds the server's token) and returns a remove that deletes the file
 * unless another process has rewritten it since; the process's exit removes
 * it too.
 */
export async function writeKubeconfigFile(file: string, kubeconfig: object): Promise<() => Promise<void>> {
  const text = stringify(kubeconfig);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written beside, then renamed: kubectl never reads a half-written file, and the mode holds from the first byte.
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, text, { mode: 0o600 });
  await fs.rename(tmp, file);
  // Next exits on SIGTERM without disposing the runtime: the file goes with the process all the same.
  const removeNow = () => {
    try {
      if (readFileSync(file, 'utf8') === text) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
  process.once('exit', removeNow);
  return async () => {
    process.off('exit', removeNow);
    const now = await fs.readFile(file, 'utf8').catch(() => undefined);
    if (now === text) await fs.rm(file, { force: true });
  };
}
