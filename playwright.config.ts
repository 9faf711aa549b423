import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';

/**
 * End-to-end tests drive the dashboard in Debian's Chromium. By default they
 * start `npm start` on 127.0.0.1:3000 (or reuse a running server outside CI);
 * REFWATCH_E2E_URL points them at a server that is already up instead.
 */
const external = process.env.REFWATCH_E2E_URL;
const baseURL = external ?? 'http://127.0.0.1:3000';
// The server's history starts empty on every run: stuck ages (and the README's screenshots) never carry
// over from an earlier run on the same machine.
// Playwright loads this file again in each worker: they inherit the directory the main process made, and
// the tests that read the embedded cluster's kubeconfig (server/kubeconfig-file) find the server's.
const inherited = process.env.REFWATCH_E2E_STATE_HOME;
const stateHome = (process.env.REFWATCH_E2E_STATE_HOME ??= mkdtempSync(path.join(os.tmpdir(), 'refwatch-e2e-state-')));
// The process that made the directory removes it as it exits, once the server it started has stopped.
if (inherited === undefined) process.on('exit', () => rmSync(stateHome, { recursive: true, force: true }));
if (!external) process.env.XDG_STATE_HOME = stateHome;

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-results',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  reporter: [
    ['list'],
    ...(process.env.CI ? [['html', { open: 'never' }] as const] : []),
    // Under npm test: the failures scripts/failed-tests.ts lists at the end of the run.
    ...(process.env.REFWATCH_TEST_REPORTS
      ? [['json', { outputFile: `${process.env.REFWATCH_TEST_REPORTS}/e2e.json` }] as const]
      : []),
  ],
  use: {
    baseURL,
    screenshot: 'on',
    trace: 'retain-on-failure',
    viewport: { width: 1440, height: 900 },
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        viewport: { width: 1440, height: 900 },
        launchOptions: {
          executablePath: process.env.REFWATCH_CHROMIUM ?? '/usr/bin/chromium',
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        },
      },
    },
  ],
  ...(external
    ? {}
    : {
        webServer: {
          command: 'npm start',
          url: `${baseURL}/api/v1/snapshot`,
          reuseExistingServer: !process.env.CI,
          timeout: 240_000,
          stdout: 'pipe',
          stderr: 'pipe',
          // Short grace and stuck threshold so cancellation and stuck diagnosis show within a test.
          env: {
            NEXT_TELEMETRY_DISABLED: '1',
            REFWATCH_GRACE: '2s',
            REFWATCH_STUCK_THRESHOLD: '2s',
            XDG_STATE_HOME: stateHome,
          },
        },
      }),
});
