import { expect, test, type Page } from '@playwright/test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../lib/kube';
import { embeddedKubeconfigPath } from '../../server/kubeconfig-file';
import { SCREENS, objectRow, settle } from './dashboard';
import { startServer } from './server';

/*
 * The history on the dashboard, on a server of its own with a history of its
 * own: the graph at a past moment shows the state recorded then, and the
 * details panel's timeline goes on across a restart.
 */

const NAMESPACE = 'timeline-e2e';
const SHOTS = process.env.REFWATCH_SHOTS ?? SCREENS;

/**
 * moment types an instant into the picker as its datetime-local input holds it (the browser's local time).
 * Chromium holds a whole minute without its `:00`, and Playwright's fill refuses a value the input then
 * reads differently, so a moment on a whole minute is typed without its seconds.
 */
async function showMoment(page: Page, at: number): Promise<void> {
  const local = await page.evaluate((t) => {
    const d = new Date(t);
    const pad = (n: number) => String(n).padStart(2, '0');
    const seconds = d.getSeconds() === 0 ? '' : `:${pad(d.getSeconds())}`;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}${seconds}`;
  }, at);
  const picker = page.getByTestId('time-picker');
  await picker.getByLabel('Moment to show').fill(local);
  await picker.getByRole('button', { name: 'Show' }).click();
}

test('the graph at a past moment shows the state recorded then; back to live shows it resolved', async ({ page }) => {
  test.setTimeout(240_000);
  mkdirSync(SHOTS, { recursive: true });
  const state = mkdtempSync(path.join(tmpdir(), 'refwatch-e2e-timeline-'));
  const example = path.join(state, 'example');
  cpSync('deploy/example', example, { recursive: true });
  const env = {
    XDG_STATE_HOME: state,
    REFWATCH_EXAMPLE: example,
    REFWATCH_DEMO: 'off',
    REFWATCH_STUCK_THRESHOLD: '1s',
  };
  let server = await startServer(env);
  try {
    const client = KubeClient.fromFile(embeddedKubeconfigPath({ XDG_STATE_HOME: state }));
    let brokenAt: number;
    try {
      await client.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
      });
      await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'api' },
          spec: {
            containers: [{ name: 'api', image: 'example/api:1' }],
            volumes: [{ name: 'credentials', secret: { secretName: 'api-credentials' } }],
          },
        },
      });

      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${server.url}/?ns=${NAMESPACE}`);
      await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');
      const pod = objectRow(page, 'api', NAMESPACE);
      await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, (Not found|Stuck)/);
      // A moment while it was broken: whole seconds, since the picker has a resolution of one second.
      await page.waitForTimeout(1500);
      brokenAt = Date.now();
      await page.waitForTimeout(1500);
      await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/secrets`, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api-credentials' }, stringData: { key: 'v' } },
      });
      await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, Resolved/);
    } finally {
      client.close();
    }

    await showMoment(page, brokenAt);
    const banner = page.getByTestId('past-banner');
    const clock = new Date(Math.floor(brokenAt / 1000) * 1000).toLocaleTimeString('en-GB', { hour12: false });
    await expect(banner).toHaveText(`Viewing ${clock} — read-only`);
    // The moment is in the URL, in UTC to the second.
    const at = new Date(Math.floor(brokenAt / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    expect(new URL(page.url()).searchParams.get('at')).toBe(at);
    const pod = objectRow(page, 'api', NAMESPACE);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, (Not found|Stuck)/);
    await expect(objectRow(page, 'api-credentials', NAMESPACE)).toHaveAccessibleName(/Secret .*Not found/);
    // Live updates keep arriving, and the past view stays as it was.
    await page.waitForTimeout(2500);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, (Not found|Stuck)/);
    await settle(page, 1500);
    await page.screenshot({ path: `${SHOTS}/history-past-view.png` });

    await page.getByRole('button', { name: 'Back to live' }).click();
    await expect(banner).toHaveCount(0);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, Resolved/);
    expect(new URL(page.url()).searchParams.has('at')).toBe(false);

    // A shared link to that moment opens on the past view; a reload keeps it.
    await page.goto(`${server.url}/?ns=${NAMESPACE}&at=${at}`);
    await expect(banner).toHaveText(`Viewing ${clock} — read-only`);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, (Not found|Stuck)/);
    await page.reload();
    await expect(banner).toHaveText(`Viewing ${clock} — read-only`);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, (Not found|Stuck)/);
    // A value that is not a time: a notice naming the parameter and its format, and the live graph.
    await page.goto(`${server.url}/?ns=${NAMESPACE}&at=yesterday`);
    await expect(page.getByTestId('time-picker').getByRole('alert')).toContainText(
      'at parameter "yesterday" is not a time: write an RFC 3339 time such as ?at=',
    );
    await expect(banner).toHaveCount(0);
    await expect(pod).toHaveAccessibleName(/api, Pod in timeline-e2e, Resolved/);

    // A restart: the example's Secret is gone from what the next start loads, as if deleted while refwatch was down.
    await server.stop();
    const config = path.join(example, '10-config.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .split(/^---$/m)
        .filter((doc) => !/kind: Secret/.test(doc))
        .join('---'),
    );
    server = await startServer(env);
    await page.goto(
      `${server.url}/?ns=refwatch-example&select=${encodeURIComponent('Pod/refwatch-example/web')}&tab=stuck`,
    );
    const timeline = page.getByTestId('inspector').getByTestId('details-timeline');
    await expect(timeline).toContainText('Secret db-password deleted while refwatch was down', { timeout: 30_000 });
    await expect(timeline).toContainText('Pod web Resolved');
    await expect(timeline).toContainText('Pod web NotFound on Secret db-password');
    await page.setViewportSize({ width: 1440, height: 1600 });
    await settle(page, 1500);
    await timeline.screenshot({ path: `${SHOTS}/history-timeline-restart.png` });
  } finally {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  }
});
