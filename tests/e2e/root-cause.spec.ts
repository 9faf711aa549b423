import { expect, test } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { SCREENS, settle, stuckEntry } from './dashboard';
import { startServer } from './server';

/*
 * Root causes on the dashboard, on a server of its own that loads the
 * root-cause example (tests/fixtures/root-cause-example): a Pod and a
 * Deployment with two Pods wait on a claim that names a misspelt StorageClass.
 */

const NAMESPACE = 'root-cause-demo';
const SHOTS = process.env.REFWATCH_SHOTS ?? SCREENS;
// The details' chain is docs/rules.md's picture of a root cause.
const IMAGES = 'docs/images';

/** startExample starts a server of its own on the root-cause example, with this stuck threshold. */
function startExample(stuckThreshold: string, env: Record<string, string> = {}) {
  return startServer({
    ...env,
    REFWATCH_EXAMPLE: 'tests/fixtures/root-cause-example',
    REFWATCH_RULES: 'tests/fixtures/root-cause-rules.yaml',
    REFWATCH_STUCK_THRESHOLD: stuckThreshold,
    REFWATCH_DEMO: 'off',
  });
}

test('the stuck panel groups by root cause, and the details show the chain to it', async ({ page }) => {
  test.setTimeout(300_000);
  mkdirSync(SHOTS, { recursive: true });
  const server = await startExample('1s');
  try {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${server.url}/?ns=${NAMESPACE}&view=scope`);
    await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');

    const group = page.getByTestId('stuck-group');
    await expect(group).toHaveText('5 referrers blocked by StorageClass.storage.k8s.io//fast-sd');
    // The Deployment's line stands for its Pods; they have no line of their own.
    await expect(stuckEntry(page, NAMESPACE, 'api')).toContainText('and its 2 Pods');
    await expect(stuckEntry(page, NAMESPACE, 'api-7c9-x2')).toHaveCount(0);
    const uploader = stuckEntry(page, NAMESPACE, 'uploader');
    await expect(uploader.getByTestId('root-cause')).toContainText(
      `Pod ${NAMESPACE}/uploader → PersistentVolumeClaim ${NAMESPACE}/uploads → StorageClass fast-sd`,
    );
    await expect(uploader.getByTestId('root-cause')).toContainText('did you mean fast-ssd?');
    await settle(page, 1500);
    await page.screenshot({ path: `${SHOTS}/rootcause-stuck-panel.png` });

    await uploader.getByRole('button').first().click();
    const chain = page.getByTestId('inspector').getByTestId('root-cause');
    await expect(chain).toContainText(
      `Pod ${NAMESPACE}/uploader → PersistentVolumeClaim ${NAMESPACE}/uploads → StorageClass fast-sd`,
    );
    await expect(chain.locator('[data-root="true"]')).toHaveText('StorageClass fast-sd');
    await expect(chain).toContainText('set spec.storageClassName to fast-ssd');
    await settle(page, 1500);
    await page.screenshot({ path: `${IMAGES}/root-cause-details.png` });
  } finally {
    await server.stop();
  }
});

test('a chain that becomes stuck after the page loaded gets the server’s root cause', async ({ page }) => {
  test.setTimeout(300_000);
  // A threshold longer than the page takes to load: the snapshot lists nothing stuck, every stuck referrer
  // crosses the threshold in the browser, and only the server's list, read again, knows their root cause.
  // No history: a restart keeps each referrer's `since` from the run before (docs/history.md), and an earlier
  // server on this example would have left them stuck already.
  const server = await startExample('20s', { REFWATCH_HISTORY: 'off' });
  try {
    const stuckRequests: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/v1/stuck') stuckRequests.push(r.url());
    });
    await page.goto(`${server.url}/?ns=${NAMESPACE}&view=scope`);
    await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');
    await expect(page.getByTestId('stuck-group')).toHaveCount(0);
    expect(stuckRequests).toEqual([]);
    await expect(page.getByTestId('stuck-group')).toHaveText(
      '5 referrers blocked by StorageClass.storage.k8s.io//fast-sd',
      { timeout: 60_000 },
    );
    expect(stuckRequests.length).toBeGreaterThan(0);
    await expect(stuckEntry(page, NAMESPACE, 'uploader').getByTestId('root-cause')).toContainText(
      'did you mean fast-ssd?',
    );
  } finally {
    await server.stop();
  }
});
