import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Each test file keeps its state (the history database, the embedded cluster's
 * kubeconfig) in a directory of its own, so nothing a test records carries
 * over to another test or run, and no test writes to the user's own state.
 * The directory is named, not made: what writes there makes it. A file whose
 * tests are all skipped runs no afterAll, and would leave an empty directory
 * behind on every run.
 */
const stateHome = join(tmpdir(), `refwatch-test-state-${randomUUID()}`);
process.env.XDG_STATE_HOME = stateHome;

afterAll(() => rmSync(stateHome, { recursive: true, force: true }));
