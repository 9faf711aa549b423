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

test('the stuck panel groups by root cause, and the details show the chain to it', async ({ page }) => {
  test.setTimeout(300_000);
  mkdirSync(SHOTS, { recursive: true });
  const server = await startServer({
    REFWATCH_EXAMPLE: 'tests/fixtures/root-cause-example',
    REFWATCH_RULES: 'tests/fixtures/root-cause-rules.yaml',
    REFWATCH_STUCK_THRESHOLD: '1s',
    REFWATCH_DEMO: 'off',
  });
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
