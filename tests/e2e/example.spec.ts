import { expect, test } from '@playwright/test';
import { deleteAllRuns, objectRow, openDashboard, settle, startRun, stuckEntry } from './dashboard';

/*
 * The first minute: npm start on the embedded cluster loads deploy/example.
 * These tests also write the README's pictures into docs/images at a fixed
 * viewport; the committed ones are those a person looked at, so a changed
 * pixel never fails a run.
 */
const IMAGES = 'docs/images';
test.use({ viewport: { width: 1440, height: 900 } });

test.afterEach(async ({ request }) => {
  await deleteAllRuns(request);
});

const NAMESPACE = 'refwatch-example';

test('opens on the example: resolved references, the stuck ones, and an App that resolved by itself', async ({
  page,
  request,
}) => {
  // Waits 20 s for Database orders, then loads the page twice: more than the default on a loaded machine.
  test.setTimeout(180_000);
  await deleteAllRuns(request);
  // The example's namespace only, on a tall page: the object table renders the rows in view, and the cluster's
  // CustomResourceDefinitions (referrers through their conversion webhooks) would push Database orders out of it.
  await page.setViewportSize({ width: 1440, height: 2000 });
  await openDashboard(page, `?ns=${NAMESPACE}`, 'light');
  await expect(page.getByText('No references yet')).toHaveCount(0);
  await expect(objectRow(page, 'worker', NAMESPACE)).toHaveCount(1);
  // Database orders turns Ready 20 s after the server started; App shop then resolves without a reload.
  await expect(objectRow(page, 'orders', NAMESPACE)).toHaveAttribute('aria-label', /Resolved/, { timeout: 40_000 });
  await expect(objectRow(page, 'shop', NAMESPACE)).toHaveAttribute('aria-label', /Resolved/, { timeout: 5_000 });
  await expect(stuckEntry(page, NAMESPACE, 'worker')).toContainText('NotFound');
  await expect(stuckEntry(page, NAMESPACE, 'worker')).toContainText('did you mean db-password?');
  await expect(stuckEntry(page, NAMESPACE, 'reporter')).toContainText('refwatch-shared');
  await expect(stuckEntry(page, NAMESPACE, 'analytics')).toContainText('KindUnknown');
  await expect(stuckEntry(page, NAMESPACE, 'checkout')).toContainText('ServiceAccount');
  await expect(stuckEntry(page, NAMESPACE, 'web-v2')).toContainText('did you mean app=web?');
  // The README's picture: the example's namespace only, leaving out what earlier tests' demo runs left behind, on a
  // page tall enough that the Stuck panel shows every stuck entry with its fix (the certificate and secret scene too).
  await page.setViewportSize({ width: 1440, height: 1600 });
  await openDashboard(page, `?ns=${NAMESPACE}`, 'light');
  await expect(stuckEntry(page, NAMESPACE, 'worker')).toHaveCount(1);
  await expect(stuckEntry(page, NAMESPACE, 'payments-db')).toBeInViewport();
  await settle(page, 2000);
  await page.screenshot({ path: `${IMAGES}/example-graph.png` });
});

test("a stuck Pod's explanation names the Secret it most likely meant", async ({ page, request }) => {
  await deleteAllRuns(request);
  await openDashboard(page, '', 'light');
  await stuckEntry(page, NAMESPACE, 'worker').getByRole('button').first().click();
  await expect(page).toHaveURL(/select=Pod%2Frefwatch-example%2Fworker/);
  const inspector = page.getByTestId('inspector');
  await expect(inspector).toContainText('db-pasword');
  await expect(inspector).toContainText('db-password');
  await expect(inspector).toContainText('Fix');
  await settle(page, 1500);
  await page.screenshot({ path: `${IMAGES}/stuck-explanation.png` });
});

test('a finished demo run plots the latency of both controllers', async ({ page, request }) => {
  test.setTimeout(120_000);
  const run = await startRun(request, {
    apps: 40,
    databases: 4,
    caches: 4,
    secrets: 4,
    readyAfter: { distribution: 'uniform', minMs: 1_000, maxMs: 10_000 },
    timeoutMs: 60_000,
    seed: 7,
  });
  await expect
    .poll(async () => ((await (await request.get(`/api/v1/demo/runs/${run.id}`)).json()) as { phase: string }).phase, {
      timeout: 90_000,
      intervals: [1000],
    })
    .toBe('Completed');
  await openDashboard(page, '?tab=demo', 'light');
  await expect(page.getByTestId('demo-run')).toHaveAttribute('data-phase', 'Completed');
  const chart = page.getByTestId('demo-chart');
  await expect(chart).toHaveAttribute('data-watch-points', /^[1-9]\d*$/);
  await expect(chart).toHaveAttribute('data-backoff-points', /^[1-9]\d*$/);
  // The plot is below the form: fold the form and bring the plot and its percentiles into view.
  await page.getByTestId('demo-panel').getByText('Run settings').click();
  await page.getByTestId('demo-summary').scrollIntoViewIfNeeded();
  await chart.scrollIntoViewIfNeeded();
  await settle(page, 1500);
  await page.screenshot({ path: `${IMAGES}/demo-latency.png` });
});
