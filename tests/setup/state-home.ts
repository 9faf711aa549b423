import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Each test file keeps its state (the history database, the embedded cluster's
 * kubeconfig) in a directory of its own, so nothing a test records carries
 * over to another test or run, and no test writes to the user's own state.
 */
const stateHome = mkdtempSync(join(tmpdir(), 'refwatch-test-state-'));
process.env.XDG_STATE_HOME = stateHome;

afterAll(() => rmSync(stateHome, { recursive: true, force: true }));
